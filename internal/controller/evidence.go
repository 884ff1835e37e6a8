package controller

import (
	"context"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/ripple-controller/ripple/internal/annotations"
	"github.com/ripple-controller/ripple/internal/digest"
	"github.com/ripple-controller/ripple/internal/refs"
)

// Event reasons for a record ripple cannot keep or cannot read.
const (
	ReasonRecordStripped    = "RecordStripped"
	ReasonOtherInstallation = "OtherInstallation"
)

// recover handles a workload without a readable record: first sight, or a
// record lost to kubectl replace, a GitOps tool or a restore. The stamp on
// the pod template says what config the pods run; when it is ripple's and
// differs from the config now, a change was missed, and the workload rolls.
func (r *Reconciler) recover(ctx context.Context, v state) (outcome, error) {
	key, uid := client.ObjectKeyFromObject(v.obj), v.obj.GetUID()
	// Under --dry-run no record is ever stored, so a missing one is no
	// sign of another writer.
	if wait, warn := r.strips.backoff(key, uid, time.Now()); wait > 0 && !r.Opts.DryRun {
		if warn {
			r.event(v.obj, corev1.EventTypeWarning, ReasonRecordStripped, "Record",
				"Another writer keeps removing the annotation %s; ripple backs off and writes it again in %s", annotations.Recorded, wait)
		}
		logf.FromContext(ctx).Info("Backing off: the record keeps being removed", "annotation", annotations.Recorded, "retryAfter", wait)
		return outcome{requeue: wait}, nil
	}
	next := r.next(v, nil)
	if r.podsRunOtherConfig(v) {
		out, err := r.rollFromStamp(ctx, v, next, "the record was lost")
		if out.rolled || out.recorded {
			r.strips.written(key, uid, time.Now())
		}
		return out, err
	}
	skipsTotal.WithLabelValues(skipFirstSight).Inc()
	logf.FromContext(ctx).V(1).Info("Recording the config of a workload seen for the first time")
	out, err := r.record(ctx, v, next)
	if err != nil {
		return out, err
	}
	r.strips.written(key, uid, time.Now())
	return out, nil
}

// podsRunOtherConfig reports whether the pods' stamp, written by ripple
// under a key it knows and not copied from an older object, names other
// config than what the workload tracks now (podsStamp).
func (r *Reconciler) podsRunOtherConfig(v state) bool {
	current, ok := r.stampSince(v, v.obj.GetCreationTimestamp().Unix()-clockSlack)
	return ok && !current
}

// podsRunCurrent reports whether the pods' stamp, newer than the
// record, names the config the workload tracks now: the record was written
// back (a GitOps tool that holds it in its manifest, but not the stamp), and
// rolling for it again would roll at each write-back. A class's rotation is
// not in the stamp (workloadDigest), so one among the causes rolls.
func (r *Reconciler) podsRunCurrent(v state, rec record, causes []refs.Ref) bool {
	if slices.ContainsFunc(causes, func(ref refs.Ref) bool { return ref.Kind == refs.SecretProviderClass }) {
		return false
	}
	current, ok := r.stampSince(v, rec.at+clockSlack+1)
	return ok && current
}

// podsRunOtherThanRecorded reports whether the pods' stamp, newer than the
// record, names other config than the workload tracks now, which the
// record, showing no change, names: the record was written back (a GitOps
// tool), then the config set back to what it names (a git revert), and the
// pods still run the config the stamp names. Ripple writes its stamp with
// its record, so only a write-back makes the stamp the newer. The stamp
// covers every tracked object, so with a change that rolls nothing (a
// deletion, an object untracked) it cannot tell what differs, and says
// nothing.
func (r *Reconciler) podsRunOtherThanRecorded(v state, rec record) bool {
	current, ok := r.stampSince(v, rec.at+clockSlack+1)
	return ok && !current
}

// rollFromStamp rolls for a change that only the stamp tells, why saying
// which record could not: which objects changed is unknown, so all are
// named, and under the env-vars strategy only ripple's variables are set
// (envVars).
func (r *Reconciler) rollFromStamp(ctx context.Context, v state, next record, why string) (outcome, error) {
	changed := sortedRefs(v.current)
	v.unknownChanges = true
	names := describe(changed, nil)
	if len(changed) == 0 {
		// Its config was deleted since: the pods still run it.
		names = "no object it tracks now"
	}
	return r.roll(ctx, v, next, changed, "the config the pods run ("+why+"): "+names)
}

// stampSince reads the stamp of the config the pods run (podsStamp) if
// ripple wrote it at from or later, API server seconds, under a key it
// knows: current says whether it names the config the workload tracks now,
// and ok whether there is such a stamp.
func (r *Reconciler) stampSince(v state, from int64) (current, ok bool) {
	st, found := podsStamp(v)
	if !found || st.at < from {
		return false, false
	}
	keyed, known := r.Keyed.Lookup(st.keyID)
	return known && namesCurrent(keyed, v.current, st.digest), known
}

// namesCurrent reports whether a stamp's digest names the config tracked
// now, under either choice of key precision: the stamp of a rollout made
// before the workload's choice changed covers all the keys, or only those
// its pods read, and either way says the pods run every key they read.
func namesCurrent(keyed digest.Keyed, current map[refs.Ref]tracked, stamped string) bool {
	if workloadDigest(keyed, current) == stamped {
		return true
	}
	other, differs := map[refs.Ref]tracked{}, false
	for ref, t := range current {
		if t.used != nil {
			t.precise, differs = !t.precise, true
		}
		other[ref] = t
	}
	return differs && workloadDigest(keyed, other) == stamped
}

// templateStamp reads the stamp of the workload's last rollout from its pod
// template: the annotation or the newest of the variables ripple set,
// whichever is later, whatever the strategy now. A workload rolled under
// one strategy, then the other, and switched back carries both, and the
// older says neither when it last rolled nor what its pods run.
func templateStamp(v state) (stamp, bool) {
	st, ok := decodeStamp(v.tmpl.Annotations[annotations.ConfigDigest])
	if env, found := envStamp(v); found && (!ok || env.at >= st.at) {
		st, ok = env, true
	}
	return st, ok
}

// podsStamp reads the stamp of the config the pods run: the pod
// template's (templateStamp) or, when later, the one ripple wrote on the
// workload with the record when it changed the pods and not their
// template (annotations.PodsConfigDigest). The template's alone says the
// pods run the config of the rollout before a refresh or an Argo restart:
// a lost record rolled them for nothing, one written back refreshed or
// restarted them again, and one written back with the config undone to
// what the template names rolled nothing.
func podsStamp(v state) (stamp, bool) {
	st, ok := templateStamp(v)
	if other, found := decodeStamp(v.obj.GetAnnotations()[annotations.PodsConfigDigest]); found && (!ok || other.at > st.at) {
		return other, true
	}
	return st, ok
}

func sortedRefs(current map[refs.Ref]tracked) []refs.Ref {
	out := make([]refs.Ref, 0, len(current))
	for ref := range current {
		out = append(out, ref)
	}
	slices.SortFunc(out, refs.Compare)
	return out
}

// foreignGrace is how long a record under a key ripple does not know is
// left alone when it was written while this replica ran: another replica
// or installation that holds that key is acting (a rollout of ripple itself
// with a new key, or a second installation watching the namespace), and
// taking the record over could swallow a change that one is about to roll.
// A record ripple finds on its first look at a workload was there before
// it (a key that was replaced or lost), and one older than foreignGrace is
// abandoned: either is written again, and the workload rolls if a tracked
// object's data was written since that record.
const foreignGrace = 10 * time.Minute

func (r *Reconciler) foreignKey(ctx context.Context, v state, rec record, firstLook bool) (outcome, error) {
	log := logf.FromContext(ctx)
	left := time.Unix(rec.at, 0).Add(foreignGrace).Sub(r.now())
	if left > 0 && r.reported.first(client.ObjectKeyFromObject(v.obj)) {
		// A recent record under another key: another installation or
		// replica is, or just was, at work. Whoever takes it over says so.
		log.Info("Another ripple installation with another digest key records this workload",
			"keyID", rec.keyID, "takingOver", firstLook)
		then := "leaves it alone while that one is active"
		if firstLook {
			then = "takes it over"
		}
		r.event(v.obj, corev1.EventTypeWarning, ReasonOtherInstallation, "Record",
			"Another ripple installation (key %s) records this workload; this one (key %s) %s", rec.keyID, r.Keyed.KeyID(), then)
	}
	if !firstLook && left > 0 {
		return outcome{requeue: left}, nil
	}
	since, kept, err := r.changedSinceForeign(ctx, v, rec)
	if err != nil {
		return outcome{}, err
	}
	// A stamp of ripple's newer than the record says what the pods run, as
	// for a record under its own key written back (podsRunCurrent).
	if len(since) > 0 && !r.podsRunCurrent(v, rec, since) {
		return r.roll(ctx, v, r.next(v, nil), since, describe(since, nil)+" (since a record under another key)")
	}
	skipsTotal.WithLabelValues(skipKeyChanged).Inc()
	log.Info("Recording the config again: the record's digest key is not known", "keyID", rec.keyID)
	return r.record(ctx, v, r.next(v, kept))
}

// changedSinceForeign returns the tracked objects that may have changed
// since a record under an unknown key, whose digests cannot be compared:
// those whose data was written since (writtenSince) and, read from the
// names the record lists, those created since (a recreation, or under
// --reload-on-create a creation) and those deleted since under
// --reload-on-delete. A creation counts from the second after the record:
// an object created in the record's second was most likely recorded, as
// on a first sight, and that cannot be told from the record. A deleted
// object that rolls nothing stays in the next record as unknownEntry, so
// that its recreation rolls, as after a rotation. A folded record names no
// object: the writes alone decide.
func (r *Reconciler) changedSinceForeign(ctx context.Context, v state, rec record) ([]refs.Ref, map[refs.Ref]string, error) {
	since := writtenSince(v.current, rec.at-clockSlack)
	if isFolded(rec.objects) {
		return since, nil, nil
	}
	kept := map[refs.Ref]string{}
	for ref, entry := range rec.objects {
		if t, ok := v.current[ref]; ok {
			if entry == unknownEntry || t.createdAt > rec.at {
				since = append(since, ref)
			}
			continue
		}
		why, err := r.missing(ctx, v.obj.GetNamespace(), ref, v.referenced[ref], &v.policy)
		switch {
		case err != nil:
			return nil, nil, err
		case why == deleted && r.Opts.ReloadOnDelete:
			since = append(since, ref)
		case why == deleted, why == 0:
			kept[ref] = unknownEntry
		}
	}
	for ref, t := range v.current {
		if _, recorded := rec.objects[ref]; !recorded && r.Opts.ReloadOnCreate && t.createdAt > rec.at {
			since = append(since, ref)
		}
	}
	slices.SortFunc(since, refs.Compare)
	return slices.Compact(since), kept, nil
}

// copied handles a record older than the workload: copied with its
// manifest, or carried over by ripple's recreation of a Job. Recording it
// all, as for a record from elsewhere, lost a change made after the
// creation and before ripple's first look (a Job it recreated just before
// going down, changed while it was down). The pods started with the config
// of the workload's creation or later, so what rolls is what changed since:
// what a stamp ripple wrote on this very workload says they run, or else
// the changes the record shows whose objects were created or written at or
// after the creation (the same second included: API server time on both
// sides).
func (r *Reconciler) copied(ctx context.Context, v state, rec record) (outcome, error) {
	next := r.next(v, nil)
	if current, ok := r.stampSince(v, v.obj.GetCreationTimestamp().Unix()-clockSlack); ok {
		if current {
			return r.recordCopied(ctx, v, next)
		}
		return r.rollFromStamp(ctx, v, next, "the record predates the workload")
	}
	since, err := r.sinceCreation(ctx, v, rec)
	switch {
	case err != nil:
		return outcome{}, err
	case len(since) == 0:
		return r.recordCopied(ctx, v, next)
	}
	return r.roll(ctx, v, next, since, describe(since, nil)+" (since the workload's creation)")
}

func (r *Reconciler) recordCopied(ctx context.Context, v state, next record) (outcome, error) {
	skipsTotal.WithLabelValues(skipCopiedRecord).Inc()
	logf.FromContext(ctx).Info("Recording the config again: the record is older than the workload, copied with it or from the Job it replaced")
	return r.record(ctx, v, next)
}

// sinceCreation returns the changes since a copied record that may have
// come after the workload's creation, and roll under the flags. Under a key
// ripple does not know, or folded, the record tells no object's change,
// and the objects' writes alone decide.
func (r *Reconciler) sinceCreation(ctx context.Context, v state, rec record) ([]refs.Ref, error) {
	created := v.obj.GetCreationTimestamp().Unix()
	keyed, known := r.Keyed.Lookup(rec.keyID)
	if !known || isFolded(rec.objects) {
		return writtenSince(v.current, created), nil
	}
	changes, err := r.changes(ctx, v, rec, keyed)
	if err != nil {
		return nil, err
	}
	causes, _ := r.causes(changes)
	// A deletion, or an object whose times are unknown (a
	// SecretProviderClass's status), may have come after: it stays.
	return slices.DeleteFunc(causes, func(ref refs.Ref) bool {
		t, ok := v.current[ref]
		return ok && t.createdAt != 0 && max(t.createdAt, t.version.dataWrittenAt) < created
	}), nil
}

// writtenSince returns the tracked objects whose data was written again,
// after their creation, at or after the second at. A record under an
// unknown key cannot be compared, but the objects' own history tells which
// may have changed since it was written: taking it over rolls for those
// rather than swallow a change. A creation alone rolls nothing, as ever.
func writtenSince(current map[refs.Ref]tracked, at int64) []refs.Ref {
	var out []refs.Ref
	for ref, t := range current {
		if t.version.dataWrittenAt >= at && t.version.dataWrittenAt > t.createdAt {
			out = append(out, ref)
		}
	}
	slices.SortFunc(out, refs.Compare)
	return out
}

// Within stripWindow, stripsAllowed records written again because the
// record was gone or unreadable are normal (first sight, hand edits, a
// restore); more mean a writer strips it on every write, and ripple backs
// off instead of answering each write with a patch.
const (
	stripWindow   = 10 * time.Minute
	stripsAllowed = 5
	stripBackoff  = time.Minute
	// stripForget is how long a count that led to a warning is kept
	// since its window began.
	stripForget = 6 * time.Hour
)

type strips struct {
	mu sync.Mutex
	m  map[types.NamespacedName]*stripCount
	// pruned is when counts whose window is over were last dropped.
	pruned time.Time
}

type stripCount struct {
	// uid is the workload's: one created again under its name, a hook Job
	// say, starts a count of its own.
	uid types.UID
	// n counts the records written, within the window from since, while
	// none was readable.
	n     int
	since time.Time
	// until is the end of the back-off under way, if any.
	until  time.Time
	warned bool
}

func newStrips() *strips { return &strips{m: map[types.NamespacedName]*stripCount{}} }

// backoff returns how long to wait before writing the record again, and
// whether this is the workload's first back-off, to be said once. Only
// records written count (written): a write refused for a conflict with a
// busy workload's status updates is no sign of a writer stripping it.
func (s *strips) backoff(key types.NamespacedName, uid types.UID, now time.Time) (time.Duration, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.m[key]
	if c == nil || c.uid != uid || now.Sub(c.since) > stripWindow || c.n < stripsAllowed {
		return 0, false
	}
	if c.until.IsZero() {
		c.until = now.Add(min(stripBackoff<<min(c.n-stripsAllowed, 4), stripWindow))
	}
	if !now.Before(c.until) {
		return 0, false
	}
	warn := !c.warned
	c.warned = true
	return c.until.Sub(now), warn
}

// written counts a record written while none was readable. Every
// workload seen for the first time has one, and most never lose it: the
// counts whose window is over are dropped, once per window.
func (s *strips) written(key types.NamespacedName, uid types.UID, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.prune(now)
	c := s.m[key]
	if c == nil || c.uid != uid {
		c = &stripCount{uid: uid}
		s.m[key] = c
	}
	if now.Sub(c.since) > stripWindow {
		c.n, c.since = 0, now
	}
	c.n++
	c.until = time.Time{}
}

func (s *strips) prune(now time.Time) {
	if now.Sub(s.pruned) < stripWindow {
		return
	}
	s.pruned = now
	for key, c := range s.m {
		// A writer that strips the record is warned of once; its count
		// stays while it keeps at it.
		if now.Sub(c.since) > stripWindow && !now.Before(c.until) && (!c.warned || now.Sub(c.since) > stripForget) {
			delete(s.m, key)
		}
	}
}

func (s *strips) forget(key types.NamespacedName) {
	s.mu.Lock()
	delete(s.m, key)
	s.mu.Unlock()
}

// onceSet holds the workloads ripple did something for once since it
// started: looked at them to the end (Reconciler.looked), or reported
// another installation on them (Reconciler.reported). A deleted workload
// leaves it.
type onceSet struct {
	mu   sync.Mutex
	seen map[types.NamespacedName]bool
}

func newOnceSet() *onceSet { return &onceSet{seen: map[types.NamespacedName]bool{}} }

// first adds key and reports whether it was not there yet.
func (o *onceSet) first(key types.NamespacedName) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.seen[key] {
		return false
	}
	o.seen[key] = true
	return true
}

func (o *onceSet) add(key types.NamespacedName) { o.first(key) }

func (o *onceSet) has(key types.NamespacedName) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.seen[key]
}

func (o *onceSet) forget(key types.NamespacedName) {
	o.mu.Lock()
	delete(o.seen, key)
	o.mu.Unlock()
}
