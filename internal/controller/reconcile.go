package controller

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/lru"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/ripple-controller/ripple/internal/alert"
	"github.com/ripple-controller/ripple/internal/annotations"
	"github.com/ripple-controller/ripple/internal/digest"
	"github.com/ripple-controller/ripple/internal/options"
	"github.com/ripple-controller/ripple/internal/refs"
	"github.com/ripple-controller/ripple/internal/workload"
)

// conflictRetry is short because a conflict only means the workload moved
// (often its status) between ripple's read and its patch.
const conflictRetry = 50 * time.Millisecond

// Event reasons ripple emits on workloads.
const (
	ReasonReloaded          = "Reloaded"
	ReasonWouldReload       = "WouldReload"
	ReasonReloadFailed      = "ReloadFailed"
	ReasonReloadSkipped     = "ReloadSkipped"
	ReasonInvalidAnnotation = "InvalidAnnotation"
)

// Reconciler rolls the workloads of one type whose tracked config changed.
type Reconciler struct {
	client.Client
	Type     workload.Type
	Opts     *options.Options
	Keyed    digest.Keyed
	Recorder events.EventRecorder

	views   *views
	seen    *triggers
	digests *digests
	strips  *strips
	own     *ownWrites
	owed    *owed
	// looked holds the workloads looked at to the end since start,
	// reported those another installation was reported on.
	looked, reported *onceSet
	// logged holds the log lines about a user's mistake written lately
	// (logFirst).
	logged *recentSet
	// writes counts the workload writes in flight, for the Events and
	// alerts that wait for them (events.go).
	writes *writes
	// posted holds, by UID, the workload digest last posted to
	// --webhook-url for workloads whose record is not written yet
	// (postInstead).
	posted  *lru.Cache
	optedIn *optedIn
	// now tells the API server's time, which timestamps on objects use.
	now func() time.Time
	// statuses reads the cached SecretProviderClassPodStatuses; nil unless
	// they are watched (csi.go).
	statuses client.Reader
	// pacer holds rollouts back per wave; nil without
	// --max-rollouts-in-progress (pace.go).
	pacer *pacer
	// Alerts hears of each rollout, and Webhook replaces rollouts; both are
	// nil unless configured (notify.go).
	Alerts  Notifier
	Webhook *alert.Poster
}

// tracked is one tracked ConfigMap or Secret as the cache holds it, with
// the digest of its data at that version.
type tracked struct {
	meta      client.Object
	createdAt int64
	// seenCreated is the API server second ripple saw the object created
	// at, 0 if it did not: later than createdAt when its watch lagged.
	seenCreated int64
	// marks are the changes ripple saw of it that may have made the
	// workload track it on its own side, oldest first (Reconciler.marks).
	marks   []mark
	version versionSum
	// used holds the keys the workload's pod spec reads of the object, nil
	// for all of them; precise says the workload tracks only those.
	used    []string
	precise bool
}

// scopeMark separates, in a record's entry for an object a precise
// workload reads some keys of, the short digest of those keys, the ID of
// the set of keys, and a 16-bit keyed digest of each key, in order ("-"
// for a missing one), which tell which keys changed.
const (
	scopeMark = "~"
	keyMark   = "."
	keyShort  = 4
	// unknownKey stands for the digest of a key not kept (digest.Whole).
	unknownKey = "*"
)

// sum is the digest of what the workload tracks of the object: the keys it
// reads when precise, else all of it.
func (t tracked) sum() digest.Sum {
	if t.precise && t.used != nil {
		return digest.Subset(t.version.keys, t.used)
	}
	return t.version.sum
}

// recordValue is the object's entry in the record: the short digest of
// sum, and, when that covers only some keys, which.
func (t tracked) recordValue(short func(digest.Sum) string) string {
	if t.precise && t.used != nil {
		return t.scoped(short)
	}
	return short(t.version.sum)
}

func (t tracked) scoped(short func(digest.Sum) string) string {
	sub := digest.Subset(t.version.keys, t.used)
	return short(sub) + scopeMark + digest.ScopeID(t.used) + scopeMark + strings.Join(t.keyShorts(short), keyMark)
}

// keyShorts is the 16-bit keyed digest of each key the workload reads,
// in order, "-" for a missing one, unknownKey for each of an object whose
// keys are too many to keep a digest of each (digest.Whole).
func (t tracked) keyShorts(short func(digest.Sum) string) []string {
	out := make([]string, len(t.used))
	whole := digest.IsWhole(t.version.keys)
	for i, k := range t.used {
		out[i] = "-"
		if whole {
			out[i] = unknownKey
		} else if s, ok := t.version.keys[k]; ok {
			out[i] = short(s)[:keyShort]
		}
	}
	return out
}

// changedKeys names the keys whose digest differs from the recorded
// entry's, when it covers the keys the workload reads now and both know
// them.
func (t tracked) changedKeys(recorded string, short func(digest.Sum) string) []string {
	parts := strings.Split(recorded, scopeMark)
	if len(parts) != 3 || t.used == nil || parts[1] != digest.ScopeID(t.used) {
		return nil
	}
	was := strings.Split(parts[2], keyMark)
	is := t.keyShorts(short)
	if slices.Contains(was, unknownKey) || slices.Contains(is, unknownKey) {
		return nil
	}
	var out []string
	for i, is := range is {
		if i >= len(was) || was[i] != is {
			out = append(out, t.used[i])
		}
	}
	return out
}

// asRecorded is the entry the object would have now under the keys the
// recorded entry covers, so that turning precision on or off compares
// like with like and rolls nothing by itself. sameKeys is false when
// the recorded keys are not those the pod spec reads now: its template
// changed, so Kubernetes replaces its pods anyway.
func (t tracked) asRecorded(recorded string, short func(digest.Sum) string) (entry string, sameKeys bool) {
	_, rest, scoped := strings.Cut(recorded, scopeMark)
	scope, _, _ := strings.Cut(rest, scopeMark)
	switch {
	case !scoped:
		return short(t.version.sum), true
	case t.used != nil && scope == digest.ScopeID(t.used):
		return t.scoped(short), true
	}
	return "", false
}

// state is what one reconcile knows of a workload: the cached object, its
// view, and the tracked objects now.
type state struct {
	*view
	obj     client.Object
	tmpl    *corev1.PodTemplateSpec
	current map[refs.Ref]tracked
	// readAt is the API server's time before current was read from the
	// cache, which is what a record of it holds: an object created while
	// its digests were read is not in it, and reads as created (diff).
	readAt int64
	// endHold says the workload's hold is over: its rollout ends it.
	endHold bool
	// unknownChanges says the rollout's changes are unknown: the stamp
	// says the pods run other config, not which, and all are named.
	unknownChanges bool
	// podsConfig is the stamp of pods refreshed in place, written on the
	// workload with the record (podsStamp).
	podsConfig string
}

// Reconcile compares the config the workload tracks with its record and
// writes only when they differ.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if r.pacer != nil {
		return r.reconcilePaced(ctx, req)
	}
	return r.reconcile(ctx, req)
}

func (r *Reconciler) reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	triggeredAt, triggered := r.seen.take(req)
	obj, wait, err := r.current(ctx, req.NamespacedName)
	if apierrors.IsNotFound(err) {
		r.own.forget(req.NamespacedName)
		r.forget(req.NamespacedName)
		return ctrl.Result{}, r.createOwed(ctx, req.NamespacedName)
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	if wait > 0 {
		if triggered {
			r.seen.add(req, triggeredAt)
		}
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	if res, underway, err := r.resume(ctx, req, obj); underway {
		return res, err
	}
	v := r.views.of(obj)
	if v == nil || obj.GetDeletionTimestamp() != nil {
		r.optedIn.set(req.NamespacedName, false)
		return ctrl.Result{}, nil
	}
	pause, err := r.paused(ctx, obj, v)
	if apierrors.IsConflict(err) {
		// The write that won may be one the predicates drop, such as a
		// status update: without a retry the Deployment would stay paused.
		return ctrl.Result{RequeueAfter: conflictRetry}, nil
	}
	if pause.done || err != nil {
		return ctrl.Result{RequeueAfter: pause.left}, client.IgnoreNotFound(err)
	}
	res, err := r.reconcileScoped(ctx, req, obj, v, pause.endHold, triggeredAt, triggered)
	res.RequeueAfter = sooner(res.RequeueAfter, pause.left)
	return res, err
}

// current reads the workload as ripple's cache holds it; while the cache
// is behind ripple's own write to it (ownWrites), it says how long to
// wait, and past ownWriteLag reads the API server's version instead.
func (r *Reconciler) current(ctx context.Context, key types.NamespacedName) (client.Object, time.Duration, error) {
	obj := r.Type.New()
	// Reconcile only reads the cached object: patch writes to a fresh one.
	if err := r.Get(ctx, key, obj, client.UnsafeDisableDeepCopy); err != nil {
		return nil, 0, err
	}
	wait, stale := r.own.behind(obj, time.Now())
	if !stale {
		return obj, wait, nil
	}
	fresh := r.Type.New()
	if err := r.digests.reader.Get(ctx, key, fresh); err != nil {
		return nil, 0, fmt.Errorf("reading %s %s from the API server, its cache lagging ripple's write: %w", r.Type.Kind, key, err)
	}
	return fresh, 0, nil
}

// reconcileScoped is the rest of Reconcile, for a workload whose pause, if
// any, lets it go on: within ripple's scope, it converges.
func (r *Reconciler) reconcileScoped(ctx context.Context, req ctrl.Request, obj client.Object, v *view, endHold bool,
	triggeredAt time.Time, triggered bool) (ctrl.Result, error) {
	// A workload out of scope gets no Event, not even for a mistake.
	selected, err := r.namespaceSelected(ctx, req.Namespace)
	if err != nil || !selected {
		if err == nil {
			skipsTotal.WithLabelValues(skipNamespace).Inc()
			r.optedIn.set(req.NamespacedName, false)
		}
		return ctrl.Result{}, err
	}
	r.optedIn.set(req.NamespacedName, v.policy.OptedIn())
	r.reportProblems(ctx, obj, v.policy.Problems)
	if !v.policy.OptedIn() && !v.hasRecord {
		r.forget(req.NamespacedName)
		return ctrl.Result{}, nil
	}
	readAt := r.now().Unix()
	if v, err = r.borrowed(ctx, obj, v); v == nil || err != nil {
		return ctrl.Result{}, err
	}
	current, problems, err := r.track(ctx, req.Namespace, v)
	r.reportProblems(ctx, obj, problems)
	if err != nil {
		return ctrl.Result{}, err
	}
	st := state{view: v, obj: obj, tmpl: r.Type.Template(obj), current: current, readAt: readAt, endHold: endHold}
	res, err := r.converge(ctx, st)
	if err == nil && !res.deferred {
		// A look that failed, or whose rollout waits, is taken again as
		// the first: a record under an unknown key found then was still
		// there before ripple (foreignKey).
		r.looked.add(req.NamespacedName)
	}
	if err == nil && st.endHold && !res.rolled && !res.deferred && !res.endedHold {
		err = r.endHold(ctx, st)
	}
	if apierrors.IsConflict(err) {
		if triggered {
			r.seen.add(req, triggeredAt)
		}
		return ctrl.Result{RequeueAfter: conflictRetry}, nil
	}
	if apierrors.IsNotFound(err) {
		// Deleted between the cached read and the patch: nothing to roll.
		return ctrl.Result{}, nil
	}
	if res.rolled && triggered {
		r.observeLatency(time.Since(triggeredAt))
	}
	return ctrl.Result{RequeueAfter: res.requeue}, err
}

// forget drops what ripple keeps of a workload it no longer follows:
// deleted, or neither opted in nor recorded any more.
func (r *Reconciler) forget(key types.NamespacedName) {
	r.optedIn.set(key, false)
	r.looked.forget(key)
	r.reported.forget(key)
	r.strips.forget(key)
}

// known reports whether ripple keeps anything of the workload under key.
func (r *Reconciler) known(key types.NamespacedName) bool {
	return r.optedIn.has(key) || r.looked.has(key)
}

// sooner returns the sooner of two requeue delays, zero meaning none.
func sooner(a, b time.Duration) time.Duration {
	if a == 0 || (b > 0 && b < a) {
		return b
	}
	return a
}

type outcome struct {
	rolled bool
	// recorded says the record was written without a rollout: the change
	// was posted to --webhook-url, or the workload's kind holds it.
	recorded bool
	// deferred says the rollout waits (for a pause to end, a minimum
	// interval, a slot, the kind: a CronJob's running Job) or already
	// started under a slot: a hold it would end stays until it rolls, and
	// the look is not over.
	deferred bool
	// endedHold says the record, written without a rollout, ended the
	// hold in the same patch.
	endedHold bool
	requeue   time.Duration
}

// converge decides between no write, a record and a rollout, and makes at
// most one patch.
func (r *Reconciler) converge(ctx context.Context, v state) (outcome, error) {
	log := logf.FromContext(ctx)
	firstLook := !r.looked.has(client.ObjectKeyFromObject(v.obj))
	rec := v.record
	switch {
	case !v.hasRecord:
		return r.recover(ctx, v)
	case v.recordErr != nil:
		log.Info("Recording the config again: the recorded state is unreadable", "annotation", annotations.Recorded, "reason", v.recordErr.Error())
		return r.recover(ctx, v)
	case v.obj.GetCreationTimestamp().Unix() > rec.at+clockSlack:
		return r.copied(ctx, v, rec)
	}
	r.strips.forget(client.ObjectKeyFromObject(v.obj))
	keyed, known := r.Keyed.Lookup(rec.keyID)
	if !known {
		return r.foreignKey(ctx, v, rec, firstLook)
	}
	changes, err := r.changes(ctx, v, rec, keyed)
	if err != nil {
		return outcome{}, err
	}
	causes, reason := r.causes(changes)
	// A rollout replaces the pods that held a deleted object's data. Pods
	// refreshed in place keep it, but whether a refresh falls back to a
	// rollout is known only once it is tried: the entry goes either way,
	// and the object recreated with the same data rolls (a rollout too
	// many) rather than not (a change lost).
	next := r.next(v, r.kept(rec, v.current, changes, len(causes) > 0))
	if len(causes) > 0 && !r.podsRunCurrent(v, rec, causes) {
		keys := changedKeys(rec, v.current, causes, keyed)
		out, err := r.roll(ctx, v, next, causes, describe(causes, keys))
		if out.rolled && !r.Opts.DryRun {
			countKeys(keys)
		}
		return out, err
	}
	if len(changes) == 0 && r.podsRunOtherThanRecorded(v, rec) {
		return r.rollFromStamp(ctx, v, next, "the record was written back")
	}
	if len(causes) == 0 && rec.keyID == next.keyID && maps.Equal(rec.objects, next.objects) {
		skipsTotal.WithLabelValues(skipUnchanged).Inc()
		return outcome{}, nil
	}
	// A record written without a rollout names the wave of one still in
	// progress: a restart restores the slots of such rollouts from the
	// records (pacer.restore).
	next.wave = r.heldWave(ctx, v)
	if len(causes) > 0 {
		log.Info("Recording the config again: the record is older than the rollout the pod template shows, which had this config",
			"annotation", annotations.Recorded)
		return r.record(ctx, v, next)
	}
	skipsTotal.WithLabelValues(reason).Inc()
	log.V(1).Info("Recording a change that does not roll", "reason", reason)
	return r.record(ctx, v, next)
}

// changedKeys names, for each cause the workload reads only some keys of,
// the keys that changed since the record, read with the key it was written
// with (after a key rotation, a previous one).
func changedKeys(rec record, current map[refs.Ref]tracked, causes []refs.Ref, keyed digest.Keyed) map[refs.Ref][]string {
	var out map[refs.Ref][]string
	for _, ref := range causes {
		t, ok := current[ref]
		if !ok || !t.precise {
			continue
		}
		if keys := t.changedKeys(rec.objects[ref], keyed.Short); len(keys) > 0 {
			if out == nil {
				out = map[refs.Ref][]string{}
			}
			out[ref] = keys
		}
	}
	return out
}

// changes compares the record, read with the key it was written with, with
// the tracked objects now.
func (r *Reconciler) changes(ctx context.Context, v state, rec record, keyed digest.Keyed) (map[refs.Ref]change, error) {
	if isFolded(rec.objects) {
		return r.creationsChanged(ctx, v, rec.at, foldedDiff(rec, v.current, keyed.Short))
	}
	missing := map[refs.Ref]change{}
	for ref := range rec.objects {
		if _, ok := v.current[ref]; ok {
			continue
		}
		why, err := r.missing(ctx, v.obj.GetNamespace(), ref, v.referenced[ref], &v.policy)
		if err != nil {
			return nil, err
		}
		missing[ref] = why
	}
	return r.creationsChanged(ctx, v, rec.at, diff(rec, v.current, keyed.Short, missing))
}

// creationsChanged turns the creations of objects whose data changed since,
// and the objects newly tracked whose data changed since they began to be
// tracked on their own side after the record written at recordAt, into
// changes that roll.
func (r *Reconciler) creationsChanged(ctx context.Context, v state, recordAt int64, changes map[refs.Ref]change) (map[refs.Ref]change, error) {
	out := make(map[refs.Ref]change, len(changes))
	for ref, c := range changes {
		out[ref] = c
		t := v.current[ref]
		var changed bool
		var err error
		switch {
		case c == created && !r.Opts.ReloadOnCreate:
			changed, err = r.digests.changedSinceCreation(ctx, ref.Kind, t.meta, t.version)
		case c == newlyTracked:
			since, _ := t.since(recordAt)
			changed, err = r.digests.changedSinceTrackable(ctx, ref.Kind, t.meta, t.version, since)
		default:
			continue
		}
		if err != nil {
			return nil, err
		}
		if changed {
			out[ref] = createdThenChanged
		}
	}
	return out, nil
}

// kept returns the recorded entries of objects missing now that stay in
// the record: deleted ones that do not roll the workload, whose data its
// pods still hold unless replaced says a rollout replaces them, so that an
// object recreated under the same name rolls it when, and only when, its
// data differs from theirs; and those the cache has not caught up with.
// Under a previous key (a rotation), a deleted object's entry cannot be
// written under the current one: it becomes unknownEntry, and the object
// recreated rolls whatever its data.
func (r *Reconciler) kept(rec record, current map[refs.Ref]tracked, changes map[refs.Ref]change, replaced bool) map[refs.Ref]string {
	if isFolded(rec.objects) {
		return nil
	}
	rekeyed := rec.keyID != r.Keyed.KeyID()
	out := map[refs.Ref]string{}
	for ref, short := range rec.objects {
		if _, ok := current[ref]; ok {
			continue
		}
		switch c := changes[ref]; {
		case c == 0 && !rekeyed:
			out[ref] = short
		case c == deleted && !r.Opts.ReloadOnDelete && !replaced:
			out[ref] = short
			if rekeyed {
				out[ref] = unknownEntry
			}
		}
	}
	return out
}

// unknownEntry is the entry of a deleted object whose digest ripple can no
// longer compare: it equals no digest, so the object recreated rolls.
const unknownEntry = "unknown"

// keepsRecord reports whether entries of the record can be carried into
// the next: written under the current key, and not folded into buckets.
func (r *Reconciler) keepsRecord(rec record) bool {
	return rec.keyID == r.Keyed.KeyID() && !isFolded(rec.objects)
}

// next is the record to write: the tracked objects read for v, under the
// current key, and the kept entries of deleted ones.
func (r *Reconciler) next(v state, kept map[refs.Ref]string) record {
	next := record{keyID: r.Keyed.KeyID(), at: v.readAt, objects: make(map[refs.Ref]string, len(v.current)+len(kept))}
	maps.Copy(next.objects, kept)
	for ref, t := range v.current {
		next.objects[ref] = t.recordValue(r.Keyed.Short)
	}
	if recordSize(next.objects) > recordBudget {
		next.objects = fold(next.objects)
	}
	return next
}

// causes returns the changes that roll the workload, given the flags, or the
// reason none does.
func (r *Reconciler) causes(changes map[refs.Ref]change) ([]refs.Ref, string) {
	var out []refs.Ref
	reason := skipAnnotations
	for ref, c := range changes {
		switch {
		case c == changedData, c == createdThenChanged,
			c == deleted && r.Opts.ReloadOnDelete,
			c == created && r.Opts.ReloadOnCreate:
			out = append(out, ref)
		case c == deleted:
			reason = skipDeleteIgnored
		case c == created:
			reason = skipCreateIgnored
		}
	}
	slices.SortFunc(out, refs.Compare)
	return out, reason
}

// workloadDigest is the digest of all the config the workload tracks now
// but its SecretProviderClasses: which status speaks for a class depends on
// the record (csi.go), so without one, a class would tell the stamp that
// the pods run other config when only new pods mounted it.
func workloadDigest(keyed digest.Keyed, current map[refs.Ref]tracked) string {
	entries := make([]digest.Entry, 0, len(current))
	for ref, t := range current {
		if ref.Kind != refs.SecretProviderClass {
			entries = append(entries, digest.Entry{Ref: ref, Sum: t.sum()})
		}
	}
	return keyed.Workload(entries)
}

// refreshInstead refreshes the pods in place under the refresh strategy;
// refreshed is false when the change rolls instead.
func (r *Reconciler) refreshInstead(ctx context.Context, v state, next record, changed []refs.Ref, names string) (out outcome, refreshed bool, err error) {
	out, fallback, err := r.refresh(ctx, v, next, changed, names)
	if fallback != "" {
		r.event(v.obj, corev1.EventTypeNormal, ReasonNotRefreshed, "Refresh", "Rolling instead of refreshing in place: %s", fallback)
		return outcome{}, false, nil
	}
	return out, true, err
}

// rolloutWriteTimeout bounds the writes of one rollout.
const rolloutWriteTimeout = 10 * time.Second

// roll writes a rollout for the changed objects, named by names, through
// the workload's strategies; a pause period may hold it. With --webhook-url
// it posts the change instead.
func (r *Reconciler) roll(ctx context.Context, v state, next record, changed []refs.Ref, names string) (outcome, error) {
	if r.Webhook != nil && !r.Opts.DryRun {
		return r.postInstead(ctx, v, next, names)
	}
	if v.reloadStrategy == workload.Refresh {
		if out, refreshed, err := r.refreshInstead(ctx, v, next, changed, names); refreshed {
			return out, err
		}
	}
	pause, held, err := r.pauseMark(ctx, v, names)
	if held || err != nil {
		return outcome{deferred: true, requeue: v.pausePeriod}, err
	}
	if left := r.intervalHolds(v); left > 0 {
		skipsTotal.WithLabelValues(skipMinInterval).Inc()
		r.event(v.obj, corev1.EventTypeNormal, ReasonReloadSkipped, "Reload", "Held: its last rollout was less than %s ago; the changes made until then roll together", v.minInterval)
		return outcome{deferred: true, requeue: left}, nil
	}
	wave, admission := r.admitRollout(ctx, v, changed, pause)
	next.wave = wave
	switch admission {
	case queued:
		return outcome{deferred: true, requeue: paceRecheck}, nil
	case underway:
		// Its next update, which passes the predicate, reconciles it. The
		// write may be a previous run's, under another key (pacer.restore).
		return outcome{deferred: true}, nil
	}
	st := stamp{keyID: r.Keyed.KeyID(), at: next.at, digest: workloadDigest(r.Keyed, v.current)}
	ch := workload.Change{ID: changeID(v.obj, st.digest), Record: next.encode(), Stamp: st.encode(), Cause: names,
		Strategy: v.strategy, Now: r.now(), Pause: pause}
	if v.reloadStrategy == workload.StampEnvVars {
		ch.Env = r.envVars(v, changed, st)
	}
	scheduled := r.scheduledRestart(v, ch.Strategy)
	// A rollout begun is written to the end, also as ripple stops: a write
	// cut off by the stop may still have been applied, and was reported as
	// failed, with no Reloaded Event for the rollout it made.
	writeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rolloutWriteTimeout)
	defer cancel()
	// The whole rollout, its retries and its Event and alert included,
	// counts as one write in flight: at a stop, they are waited for.
	r.writes.start()
	defer r.writes.end()
	res, err := r.rollout(writeCtx, v.obj, ch)
	// An error after the rollout created its object (a CronJob's Job whose
	// run annotation stayed) is retried, but the run went: it is reported.
	failed := err != nil && res.Created == nil
	if r.pacer != nil && !r.inSpecPause(v) && (failed || res.Wait > 0 || res.Held != "") {
		r.pacer.release(r.Type, v.obj, wave)
	}
	if failed {
		if !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
			r.countReload(v.obj, "error")
			r.event(v.obj, corev1.EventTypeWarning, ReasonReloadFailed, "Reload", "Rolling after a change of %s failed: %v", names, err)
		}
		return outcome{}, err
	}
	log := logf.FromContext(ctx)
	switch {
	case res.Wait > 0:
		// A CronJob's Job may run for hours, re-checked every few seconds:
		// the wait is told at most once per eventRepeat (logFirst).
		if !r.logFirst(v.obj, "wait", names) {
			log = log.V(1)
		}
		log.Info("Waiting to roll", "changed", names, "retryAfter", res.Wait)
		return outcome{deferred: true, requeue: res.Wait}, nil
	case res.Held != "":
		r.reportHeld(ctx, v.obj, names, res.Held)
		return outcome{recorded: true}, nil
	}
	if r.Opts.DryRun {
		r.event(v.obj, corev1.EventTypeNormal, ReasonWouldReload, "Reload", "Would roll because %s changed; --dry-run changed nothing", names)
		log.Info("Would reload workload", "changed", names)
		return outcome{}, nil
	}
	if pause == nil || pause.At == "" {
		r.countReload(v.obj, "success")
		r.notify(ctx, v.obj, names)
	}
	if res.Created != nil {
		r.event(v.obj, corev1.EventTypeNormal, ReasonReloaded, "Reload", "Created %s %s because %s changed",
			res.Created.GetObjectKind().GroupVersionKind().Kind, res.Created.GetName(), names)
	} else if pause != nil && pause.At != "" {
		r.event(v.obj, corev1.EventTypeNormal, ReasonReloaded, "Reload", "Paused for %s because %s changed; it rolls, with every change made until then, when the pause ends",
			v.pausePeriod, names)
	} else {
		r.event(v.obj, corev1.EventTypeNormal, ReasonReloaded, "Reload", "Rolled because %s changed", names)
	}
	if !scheduled.IsZero() {
		r.event(v.obj, corev1.EventTypeNormal, ReasonRestartReplaced, "Reload",
			"The restart scheduled for %s is replaced by this one: a Rollout holds one restartAt", scheduled.UTC().Format(time.RFC3339))
	}
	log.Info("Rolled workload", "changed", names, "digest", st.digest)
	return outcome{rolled: true}, err
}

// ReasonRestartReplaced says that a restart ripple wrote replaced one
// scheduled for later (kubectl argo rollouts restart --in).
const ReasonRestartReplaced = "RestartReplaced"

// scheduledRestart is the restart a rollout through the workload's restart
// field replaces: one set for later than now, which the field cannot hold
// beside ripple's.
func (r *Reconciler) scheduledRestart(v state, strategy string) time.Time {
	if r.Type.RestartedAt == nil || (strategy != workload.RolloutRestart && v.templateRef == "") {
		return time.Time{}
	}
	if at, ok := r.Type.RestartedAt(v.obj); ok && at.After(r.now().Add(time.Second)) {
		return at
	}
	return time.Time{}
}

// resume carries on a rollout that spans several reconciles (a Job's
// recreation, a CronJob's run); underway says there was one, which this
// reconcile is.
func (r *Reconciler) resume(ctx context.Context, req ctrl.Request, obj client.Object) (ctrl.Result, bool, error) {
	if r.Type.Resume == nil {
		return ctrl.Result{}, false, nil
	}
	var res workload.Result
	// Whatever holds the name now, a user's Job or ripple's, is not to be
	// replaced by one owed before: a later deletion of it is final.
	defer func() { r.owed.keep(req.NamespacedName, res) }()
	// Out of scope, a mark waits for its namespace to be in scope again,
	// so that one written there by hand deletes or creates nothing. A Job
	// ripple is deleting already goes on: its finalizer is ripple's.
	if obj.GetDeletionTimestamp() == nil {
		if selected, err := r.namespaceSelected(ctx, req.Namespace); err != nil || !selected {
			return ctrl.Result{}, err != nil, err
		}
	}
	r.writes.start()
	defer r.writes.end()
	res, underway, err := r.Type.Resume(ctx, r.Client, obj)
	if !underway {
		return ctrl.Result{}, false, nil
	}
	r.resumed(ctx, obj, res)
	switch {
	case res.Wait > 0:
		return ctrl.Result{RequeueAfter: res.Wait}, true, err
	case res.Held != "":
		skipsTotal.WithLabelValues(skipHeld).Inc()
		r.event(obj, corev1.EventTypeNormal, ReasonReloadSkipped, "Reload", "Not run after a change of %s: %s", res.Cause, res.Held)
	}
	switch {
	case errors.Is(err, workload.ErrNotAdmitted):
		r.event(obj, corev1.EventTypeWarning, ReasonReloadFailed, "Reload",
			"Recreation waits: %v. The old %s stays, its pods gone, and ripple tries again with backoff", err, r.Type.Kind)
	case apierrors.IsConflict(err):
		return ctrl.Result{RequeueAfter: conflictRetry}, true, nil
	case err != nil && !apierrors.IsNotFound(err):
		// Later changes wait for it: say so, not only in ripple's log.
		r.event(obj, corev1.EventTypeWarning, ReasonReloadFailed, "Reload",
			"Carrying on a rollout failed: %v. ripple tries again with backoff; later changes wait for it", err)
	}
	return ctrl.Result{}, true, err
}

// held says why the workload would not roll now (a finished Job, a
// suspended CronJob), empty if it would.
func (r *Reconciler) held(v state) string {
	if r.Type.Held == nil {
		return ""
	}
	return r.Type.Held(v.obj, v.strategy)
}

// reportHeld says that a change was recorded without a rollout, and why.
func (r *Reconciler) reportHeld(ctx context.Context, obj client.Object, names, why string) {
	skipsTotal.WithLabelValues(skipHeld).Inc()
	r.event(obj, corev1.EventTypeNormal, ReasonReloadSkipped, "Reload", "Not rolled after a change of %s: %s", names, why)
	logf.FromContext(ctx).Info("Recorded a change without rolling", "changed", names, "reason", why)
}

// resumed reports the end of a rollout that spanned several reconciles on
// the object it created.
func (r *Reconciler) resumed(ctx context.Context, obj client.Object, res workload.Result) {
	if res.Created == nil {
		return
	}
	if r.Opts.DryRun {
		// The dry-run client created nothing: no run, no count, no alert.
		r.event(obj, corev1.EventTypeNormal, ReasonWouldReload, "Reload", "Would create %s %s because %s changed; --dry-run changed nothing",
			res.Created.GetObjectKind().GroupVersionKind().Kind, res.Created.GetName(), res.Cause)
		logf.FromContext(ctx).Info("Would reload workload", "changed", res.Cause)
		return
	}
	if res.Created.GetName() != obj.GetName() {
		// A CronJob's Job, whose start a restart or a refusal put off:
		// its run, counted and alerted now, as a run that went at once.
		r.countReload(obj, "success")
		r.notify(ctx, obj, res.Cause)
		r.event(obj, corev1.EventTypeNormal, ReasonReloaded, "Reload", "Created %s %s because %s changed",
			res.Created.GetObjectKind().GroupVersionKind().Kind, res.Created.GetName(), res.Cause)
		logf.FromContext(ctx).Info("Created the workload's Job", "job", res.Created.GetName(), "changed", res.Cause)
		return
	}
	r.event(res.Created, corev1.EventTypeNormal, ReasonReloaded, "Reload", "Recreated %s because %s changed", obj.GetName(), res.Cause)
	logf.FromContext(ctx).Info("Recreated workload", "changed", res.Cause)
}

// borrowed returns the view to reconcile: v, or for a workload whose pods
// are made from another workload's pod template, a copy of v (views are
// shared) with what that template references, read from the cache. nil
// means there is nothing to do now: the reference cannot be followed (said
// with an Event), or the workload it names does not exist yet, whose
// creation queues this one.
func (r *Reconciler) borrowed(ctx context.Context, obj client.Object, v *view) (*view, error) {
	if v.unfollowable != "" {
		skipsTotal.WithLabelValues(skipTemplateRef).Inc()
		if r.logFirst(obj, "templateRef", v.unfollowable) {
			logf.FromContext(ctx).Info("Cannot read the pod template the workload uses", "reason", v.unfollowable)
		}
		r.event(obj, corev1.EventTypeWarning, ReasonReloadSkipped, "Reload", "Not tracked: %s", v.unfollowable)
		return nil, nil
	}
	if v.templateRef == "" {
		return v, nil
	}
	src := *r.Type.TemplateSource
	holder := src.New()
	key := types.NamespacedName{Namespace: obj.GetNamespace(), Name: v.templateRef}
	if err := client.IgnoreNotFound(r.Get(ctx, key, holder, client.UnsafeDisableDeepCopy)); err != nil {
		return nil, fmt.Errorf("reading cached %s %s: %w", src.Kind, key, err)
	}
	if holder.GetUID() == "" {
		logf.FromContext(ctx).V(1).Info("Waiting for the workload whose pod template this one uses", "kind", src.Kind, "name", v.templateRef)
		return nil, nil
	}
	out := *v
	out.referenced, out.usedKeys = map[refs.Ref]bool{}, nil
	if tmpl := src.Template(holder); tmpl != nil {
		out.referenced, out.usedKeys = references(&tmpl.Spec)
	}
	return &out, nil
}

// changeID names one change of a workload's config: the workload, the
// record it replaces and the config it rolls out. Every attempt at the
// same change, after a conflict or a restart, gives the same ID; two
// CronJobs recorded in the same second with the same config, whose Jobs'
// names keep the same first characters of theirs, do not share one.
func changeID(obj client.Object, digest string) string {
	h := sha256.Sum256([]byte(string(obj.GetUID()) + "\n" + obj.GetAnnotations()[annotations.Recorded] + "\n" + digest))
	return hex.EncodeToString(h[:])
}

// describe names the changed objects for an Event, which must stay short:
// at most five names and about half the note's limit, then how many more.
func describe(causes []refs.Ref, keys map[refs.Ref][]string) string {
	const most, budget = 5, noteLimit / 2
	parts := make([]string, 0, most+1)
	size := 0
	for i, c := range causes {
		name := c.String()
		if isBucket(c) {
			name = "a " + string(c.Kind) + " of record bucket " + c.Name
		}
		if k := keys[c]; len(k) > 0 {
			name += " (keys " + keyList(k, budget/2) + ")"
		}
		if i == most || (i > 0 && size+len(name) > budget) {
			parts = append(parts, fmt.Sprintf("and %d more", len(causes)-i))
			break
		}
		parts = append(parts, name)
		size += len(name) + len(", ")
	}
	return strings.Join(parts, ", ")
}

// keyList names the keys within about budget bytes, then how many more:
// one object can have a thousand changed keys of 253 bytes each, and the
// description goes into Events, alerts, and a Job's annotations, which the
// API server caps.
func keyList(keys []string, budget int) string {
	var b strings.Builder
	for i, k := range keys {
		if i > 0 && b.Len()+len(k) > budget {
			fmt.Fprintf(&b, " and %d more", len(keys)-i)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(k)
	}
	return b.String()
}

// record writes the record without a rollout. At a hold's end the same
// patch removes the pause annotation: a patch of its own would conflict
// with the record's, made on the same version.
func (r *Reconciler) record(ctx context.Context, v state, rec record) (outcome, error) {
	meta := map[string]string{annotations.Recorded: rec.encode()}
	if v.podsConfig != "" {
		meta[annotations.PodsConfigDigest] = v.podsConfig
	}
	if !v.endHold {
		err := r.Type.Write(ctx, r.Client, v.obj, meta)
		r.noteWrite(ctx, v.obj, err == nil, err)
		return outcome{}, err
	}
	err := r.Type.WriteEndingHold(ctx, r.Client, v.obj, meta, r.Opts.Keys.PausedAt)
	r.noteWrite(ctx, v.obj, err == nil, err)
	if err != nil {
		return outcome{}, err
	}
	r.pauseEnded(ctx, v.obj, v.view)
	return outcome{endedHold: true}, nil
}

// rollout writes ch to obj, and notes the write when it was made on obj's
// version: a CronJob waiting for its running Job writes nothing.
func (r *Reconciler) rollout(ctx context.Context, obj client.Object, ch workload.Change) (workload.Result, error) {
	res, err := r.Type.Rollout(ctx, r.Client, obj, ch)
	r.noteWrite(ctx, obj, res.Patched, err)
	return res, err
}

// recordAfter writes the record of a change whose effect is done outside
// the workload (a webhook's POST, pods stamped): a write to the workload
// meanwhile makes the record's write conflict, and a retry would repeat
// that effect. So the workload is read again, and the record written on
// that version, unless another record was written since.
func (r *Reconciler) recordAfter(ctx context.Context, v state, rec record) (outcome, error) {
	out, err := r.record(ctx, v, rec)
	if !apierrors.IsConflict(err) {
		return out, err
	}
	fresh := r.Type.New()
	if r.digests.reader.Get(ctx, client.ObjectKeyFromObject(v.obj), fresh) != nil ||
		fresh.GetUID() != v.obj.GetUID() || fresh.GetAnnotations()[annotations.Recorded] != v.obj.GetAnnotations()[annotations.Recorded] {
		return out, err
	}
	v.obj = fresh
	return r.record(ctx, v, rec)
}

func (r *Reconciler) reportProblems(ctx context.Context, obj client.Object, problems []annotations.Problem) {
	for _, p := range mostOf(problems) {
		if r.logFirst(obj, "problem", p.String()) {
			logf.FromContext(ctx).Info("Ignoring an invalid annotation value", "annotation", p.Annotation, "value", p.Value, "reason", p.Reason)
		}
		r.event(obj, corev1.EventTypeWarning, ReasonInvalidAnnotation, "Parse", "%s", p.String())
	}
}

// mostProblems bounds the mistakes said about one workload at a time: a
// reload list matching thousands of objects whose annotations are mistaken
// said each, at each reconcile, as more than the caches that say a line
// once (loggedLines, recentEvents) hold.
const mostProblems = 10

// mostOf returns the first mostProblems problems in a stable order, the
// same at each reconcile, and one that counts the rest.
func mostOf(problems []annotations.Problem) []annotations.Problem {
	if len(problems) <= mostProblems {
		return problems
	}
	out := slices.Clone(problems)
	slices.SortFunc(out, func(a, b annotations.Problem) int { return strings.Compare(a.String(), b.String()) })
	rest := len(out) - mostProblems
	return append(out[:mostProblems], annotations.Problem{Annotation: out[mostProblems].Annotation, Value: "…",
		Reason: fmt.Sprintf("and %d more mistaken annotations of the objects this workload tracks or may track (ripple explain lists them)", rest)})
}

// loggedLines bounds the log lines about a user's mistake that are
// remembered (Reconciler.logged).
const loggedLines = 4096

type loggedKey struct {
	uid  types.UID
	line [sha256.Size]byte
}

// logFirst reports whether a line of kind about a mistake in obj was not
// logged lately, as its Event is written once (repeatKeyOf): a workload
// is reconciled again and again, at each status update or, paced, while
// it waits for a slot.
func (r *Reconciler) logFirst(obj client.Object, kind, line string) bool {
	key := loggedKey{uid: obj.GetUID(), line: sha256.Sum256([]byte(kind + "\n" + line))}
	return r.logged.first(key, time.Now())
}

// noteLimit is the most bytes the API server accepts in an Event's note: it
// rejects a longer note, and the Event is lost. Five 253-character names or
// a long invalid annotation value exceed it.
const noteLimit = 1024

// event emits an Event whose note is shortened to fit noteLimit.
func (r *Reconciler) event(obj client.Object, eventtype, reason, action, format string, args ...any) {
	r.Recorder.Eventf(obj, nil, eventtype, reason, action, "%s", annotations.Shorten(fmt.Sprintf(format, args...), noteLimit))
}

// namespaceSelected reports whether the namespace is in ripple's scope. A
// namespace the cache does not hold yet, created together with its
// workloads, is an error, so that the workqueue retries with backoff
// instead of passing the workload by.
func (r *Reconciler) namespaceSelected(ctx context.Context, namespace string) (bool, error) {
	if slices.Contains(r.Opts.NamespacesToIgnore, namespace) {
		return false, nil
	}
	if r.Opts.NamespaceSelector == nil {
		return true, nil
	}
	ns := namespaceObject()
	if err := r.Get(ctx, types.NamespacedName{Name: namespace}, ns); err != nil {
		if apierrors.IsNotFound(err) {
			return false, fmt.Errorf("namespace %s is not in the cache yet: %w", namespace, err)
		}
		return false, fmt.Errorf("reading namespace %s: %w", namespace, err)
	}
	return r.Opts.NamespaceSelector.Matches(labels.Set(ns.GetLabels())), nil
}
