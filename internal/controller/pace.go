package controller

import (
	"container/list"
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/ripple-controller/ripple/internal/annotations"
	"github.com/ripple-controller/ripple/internal/refs"
	"github.com/ripple-controller/ripple/internal/workload"
)

// ReasonRolloutTimedOut is the Event on a paced rollout that did not
// become available within --rollout-timeout.
const ReasonRolloutTimedOut = "RolloutTimedOut"

// paceRecheck is how often a rollout waiting for a slot in its wave asks
// again by itself. It is a safety net: a slot that frees wakes the wave's
// first waiters at once (pacer.wake).
const paceRecheck = 5 * time.Second

// wakeBuffer bounds the wake-ups not yet taken by a workload type's
// controller; one that does not fit is sent again when the wave's next
// slot frees, or left to paceRecheck.
const wakeBuffer = 1024

// pacer keeps, for each wave (one version of one changed object), the
// rollouts it started that are not available yet, and lets a rollout of
// the wave start only while fewer than max are. Waves never share slots,
// so an unrelated change is never held up. It is shared by the
// reconcilers of every workload type, and lives in memory; before its
// first admission it restores, from the workloads' records, the slots of
// the rollouts a previous run started that are still in progress.
//
// Waiters are served in the order they joined their wave's queue. Each
// reconcile of a workload starts with settle, which frees the workload's
// slot once its rollout is done, and ends with reconciled, which takes a
// waiter that did not ask for a slot in it out of the queue: it has
// nothing to roll now, or its reconcile failed, and it joins at the back
// when it asks again. Whenever a slot frees or a waiter leaves, wake
// reconciles the waiters now owed a free slot. A workload holding a slot
// is reconciled on each of its updates (the predicate asks holds), and at
// its slot's deadline.
type pacer struct {
	max     int
	timeout time.Duration
	reader  client.Reader
	// now tells the API server's time, which records are written in.
	now func() time.Time
	// types are the workload types paced; restored is done once their
	// rollouts in progress hold their slots again.
	types    []pacedType
	restored sync.Once

	mu sync.Mutex
	// waves holds the slots of each wave; they are few at a time. held
	// counts each holder's slots, for the update predicate, which asks on
	// every update of every workload.
	waves map[string]map[paceKey]slot
	held  map[paceKey]int
	// queues holds each wave's waiters in order (*waiter values), and
	// waiting the element of each waiter.
	queues  map[string]*list.List
	waiting map[paceKey]*list.Element
	// asked holds the waiters that asked for a slot in the reconcile under
	// way: reconciled drops the others.
	asked map[paceKey]bool
	// rechecking holds the holders expire wakes every paceRecheck.
	rechecking map[paceKey]bool
	wakes      map[string]chan event.GenericEvent
}

// pacedType is a workload type the pacer restores the slots of;
// pauseLeft tells whether a workload's pause holds its rollout, and how
// long it still runs; pausePeriod how long its rollouts start paused.
type pacedType struct {
	workload.Type
	pauseLeft   func(client.Object) (time.Duration, bool)
	pausePeriod func(client.Object) time.Duration
}

// paceKey names a workload by kind too: an Argo Rollout and the
// Deployment whose pod template it uses may share a name.
type paceKey struct {
	kind string
	types.NamespacedName
}

// waiter is a workload waiting for a slot in a wave.
type waiter struct {
	key  paceKey
	wave string
	// woken says a wake-up was sent since it last asked.
	woken bool
}

// slot is one rollout in progress.
type slot struct {
	typ workload.Type
	// uid tells the workload from one recreated under its name.
	uid types.UID
	// from is when its timeout starts: when it started, or when the pause
	// it started with ends.
	from       time.Time
	generation int64
	// expiry wakes the holder at its timeout, whatever its reconciles
	// return: a requeue at the deadline would be dropped when a reconcile
	// fails, and the retries of a reconcile that keeps failing back off to
	// minutes, which the wave's waiters would wait on top of
	// --rollout-timeout.
	expiry *time.Timer
}

// admission is what admit decided.
type admission int

const (
	// admitted: the rollout starts now, in a slot of its wave.
	admitted admission = iota
	// queued: the rollout waits for a slot.
	queued
	// underway: the workload's rollout of this change already started; the
	// reconcile read it from before that.
	underway
)

func newPacer(limit int, timeout time.Duration, reader client.Reader, now func() time.Time) *pacer {
	return &pacer{max: limit, timeout: timeout, reader: reader, now: now,
		waves: map[string]map[paceKey]slot{}, held: map[paceKey]int{}, queues: map[string]*list.List{}, waiting: map[paceKey]*list.Element{},
		asked: map[paceKey]bool{}, rechecking: map[paceKey]bool{}, wakes: map[string]chan event.GenericEvent{}}
}

// wakeups is the source of the wake-ups of one workload type's waiters.
func (p *pacer) wakeups(kind string) source.Source {
	p.mu.Lock()
	defer p.mu.Unlock()
	ch := make(chan event.GenericEvent, wakeBuffer)
	p.wakes[kind] = ch
	return source.Channel(ch, &handler.EnqueueRequestForObject{})
}

// admit lets the workload roll now in its wave when a slot is free and no
// earlier waiter of the wave is owed it, and takes the slot; otherwise the
// workload waits in the wave's queue, keeping its place. paused is the
// pause period the rollout starts with, if any: the timeout counts from
// its end.
func (p *pacer) admit(ctx context.Context, typ workload.Type, obj client.Object, wave string, paused time.Duration) admission {
	p.restored.Do(func() { p.restore(ctx) })
	k := paceKey{kind: typ.Kind, NamespacedName: client.ObjectKeyFromObject(obj)}
	p.mu.Lock()
	defer p.mu.Unlock()
	defer p.gauge()
	if _, held := p.waves[wave][k]; held {
		return underway
	}
	if !p.owed(k, wave) {
		p.join(k, wave)
		p.asked[k] = true
		return queued
	}
	p.take(k, wave, slot{typ: typ, uid: obj.GetUID(), from: time.Now().Add(paused), generation: obj.GetGeneration()})
	p.leave(k)
	return admitted
}

// heldWave is a wave the workload holds a slot in, "" if none: the
// rollout in progress that a record written without a rollout still
// names, so that a restart restores its slot. Not the record's wave, which
// may name a rollout long done, or be an old record written back.
func (p *pacer) heldWave(ctx context.Context, typ workload.Type, key types.NamespacedName) string {
	p.restored.Do(func() { p.restore(ctx) })
	k := paceKey{kind: typ.Kind, NamespacedName: key}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.held[k] == 0 {
		return ""
	}
	for wave, slots := range p.waves {
		if _, ok := slots[k]; ok {
			return wave
		}
	}
	return ""
}

// take gives the workload a slot in the wave; p.mu is held.
func (p *pacer) take(k paceKey, wave string, s slot) {
	if p.waves[wave] == nil {
		p.waves[wave] = map[paceKey]slot{}
	}
	if s.typ.Available != nil {
		s.expiry = time.AfterFunc(time.Until(s.from.Add(p.timeout)), func() { p.expire(k) })
	}
	p.waves[wave][k] = s
	p.held[k]++
}

// restore gives a slot back to each cached workload whose record says a
// paced rollout started it less than --rollout-timeout ago and that is
// not available yet: without it, a restart in the middle of a wave would
// start up to max more rollouts while those go on. The timeout counts from
// the record, or from the end of a pause that still holds the rollout.
func (p *pacer) restore(ctx context.Context) {
	n := 0
	for _, typ := range p.types {
		if typ.Available == nil {
			continue
		}
		list := typ.NewList()
		if err := p.reader.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
			logf.FromContext(ctx).Error(err, "Cannot list workloads to restore the rollouts in progress", "workloadKind", typ.Kind)
			continue
		}
		_ = apimeta.EachListItem(list, func(o runtime.Object) error {
			if obj, ok := o.(client.Object); ok && p.restoreSlot(typ, obj) {
				n++
			}
			return nil
		})
	}
	if n > 0 {
		logf.FromContext(ctx).Info("Restored the paced rollouts still in progress", "rollouts", n)
	}
}

func (p *pacer) restoreSlot(typ pacedType, obj client.Object) bool {
	rec, err := decodeRecord(obj.GetAnnotations()[annotations.Recorded])
	if err != nil || rec.wave == "" || typ.Available(obj) {
		return false
	}
	from := time.Now().Add(-p.now().Sub(time.Unix(rec.at, 0)))
	if left, paused := typ.pauseLeft(obj); paused {
		// The rollout starts when the pause ends, or when ripple resumes
		// a Deployment whose pause ran out while it was down.
		from = time.Now().Add(max(left, 0))
	} else if period := typ.pausePeriod(obj); period > 0 {
		// A pause ripple ended leaves no mark: the rollout started at
		// the end of its period, counted from the record, or earlier,
		// when the record was written during the pause or it was resumed
		// by hand, and not later than now: the slot is held a little
		// longer, at most from the restart.
		if from = from.Add(period); from.After(time.Now()) {
			from = time.Now()
		}
	}
	if time.Since(from) >= p.timeout {
		return false
	}
	k := paceKey{kind: typ.Kind, NamespacedName: client.ObjectKeyFromObject(obj)}
	p.mu.Lock()
	defer p.mu.Unlock()
	// The generation before ripple's write, which the slot waits past.
	p.take(k, rec.wave, slot{typ: typ.Type, uid: obj.GetUID(), from: from, generation: obj.GetGeneration() - 1})
	p.gauge()
	// It may have become available since the list, an update the
	// predicate let by while it held no slot: settle looks again.
	p.send(k)
	return true
}

// owed reports whether one of the wave's free slots is the workload's: it
// is among the first waiters, as many as free slots, or nobody waits
// for one; p.mu is held.
func (p *pacer) owed(k paceKey, wave string) bool {
	free := p.max - len(p.waves[wave])
	q := p.queues[wave]
	if e, ok := p.waiting[k]; !ok || e.Value.(*waiter).wave != wave {
		waiting := 0
		if q != nil {
			waiting = q.Len()
		}
		return waiting < free
	}
	for e := q.Front(); e != nil && free > 0; e, free = e.Next(), free-1 {
		if e.Value.(*waiter).key == k {
			return true
		}
	}
	return false
}

// join queues the workload in the wave, at the back unless it waits there
// already; p.mu is held.
func (p *pacer) join(k paceKey, wave string) {
	if e, ok := p.waiting[k]; ok && e.Value.(*waiter).wave == wave {
		e.Value.(*waiter).woken = false
		return
	}
	// A workload whose change moved on to a newer version waits in that
	// version's wave.
	p.leave(k)
	if p.queues[wave] == nil {
		p.queues[wave] = list.New()
	}
	p.waiting[k] = p.queues[wave].PushBack(&waiter{key: k, wave: wave})
}

// holds reports whether the workload holds a slot.
func (p *pacer) holds(k paceKey) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.held[k] > 0
}

// settle frees the workload's slots whose rollout is done, and wakes as
// many waiters. timedOut is the workload, for an Event, when its rollout
// timed out.
func (p *pacer) settle(ctx context.Context, k paceKey) (timedOut client.Object) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, wave := range p.wavesHeldBy(k) {
		done, late := p.done(ctx, k, p.waves[wave][k])
		if late != nil {
			timedOut = late
		}
		if done {
			p.drop(wave, k)
			p.wake(wave)
			p.gauge()
		}
	}
	return timedOut
}

// reconciled ends a reconcile of the workload: a waiter that did not ask
// for a slot in it leaves its queue. A holder needs no requeue at its
// slot's deadline: its slot's expiry wakes it, whatever the reconcile
// returned.
func (p *pacer) reconciled(k paceKey) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.waiting[k]; ok && !p.asked[k] {
		p.leave(k)
		p.gauge()
	}
	delete(p.asked, k)
}

// wavesHeldBy lists the waves where the workload holds a slot; p.mu is
// held.
func (p *pacer) wavesHeldBy(k paceKey) []string {
	if p.held[k] == 0 {
		return nil
	}
	var out []string
	for wave, slots := range p.waves {
		if _, ok := slots[k]; ok {
			out = append(out, wave)
		}
	}
	return out
}

// wake sends a wake-up to each waiter owed a free slot of the wave that
// has none since it last asked; p.mu is held.
func (p *pacer) wake(wave string) {
	q := p.queues[wave]
	if q == nil {
		return
	}
	for e, free := q.Front(), p.max-len(p.waves[wave]); e != nil && free > 0; e, free = e.Next(), free-1 {
		if w := e.Value.(*waiter); !w.woken {
			w.woken = p.send(w.key)
		}
	}
}

// expire wakes the holder of a slot at its timeout, so that settle frees
// the slot, and again every paceRecheck while it holds one: settle keeps a
// slot whose workload it could not read. A holder has one recheck however
// many of its slots time out: a workload that never becomes available,
// changed in wave after wave, started one that never ended per slot.
func (p *pacer) expire(k paceKey) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.held[k] == 0 {
		return
	}
	p.send(k)
	if !p.rechecking[k] {
		p.rechecking[k] = true
		time.AfterFunc(paceRecheck, func() { p.recheck(k) })
	}
}

func (p *pacer) recheck(k paceKey) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.held[k] == 0 {
		delete(p.rechecking, k)
		return
	}
	p.send(k)
	time.AfterFunc(paceRecheck, func() { p.recheck(k) })
}

// send queues a reconcile of the workload, unless its type's wake-ups are
// full; p.mu is held.
func (p *pacer) send(k paceKey) bool {
	obj := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: k.Namespace, Name: k.Name}}
	select {
	case p.wakes[k.kind] <- event.GenericEvent{Object: obj}:
		return true
	default:
		return false
	}
}

// done reports whether a rollout's slot is free: its workload is gone
// (perhaps recreated under its name), or the controller made the
// generation after ripple's write available, or the timeout passed (then
// late is the workload, for an Event).
func (p *pacer) done(ctx context.Context, k paceKey, s slot) (done bool, late client.Object) {
	if s.typ.Available == nil {
		return true, nil
	}
	obj := s.typ.New()
	err := p.reader.Get(ctx, k.NamespacedName, obj)
	switch {
	case apierrors.IsNotFound(err):
		return true, nil
	case err != nil:
		logf.FromContext(ctx).Error(err, "Cannot read a paced rollout's workload", "workload", k.NamespacedName)
		return false, nil
	case obj.GetUID() != s.uid:
		return true, nil
	case obj.GetGeneration() > s.generation && s.typ.Available(obj):
		return true, nil
	case time.Since(s.from) >= p.timeout:
		return true, obj
	}
	return false, nil
}

// release frees the workload's slot in its wave: its rollout failed, or
// did not start.
func (p *pacer) release(typ workload.Type, obj client.Object, wave string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.drop(wave, paceKey{kind: typ.Kind, NamespacedName: client.ObjectKeyFromObject(obj)})
	p.wake(wave)
	p.gauge()
}

// drop frees a slot; p.mu is held.
func (p *pacer) drop(wave string, k paceKey) {
	s, ok := p.waves[wave][k]
	if !ok {
		return
	}
	if s.expiry != nil {
		s.expiry.Stop()
	}
	if p.held[k]--; p.held[k] == 0 {
		delete(p.held, k)
	}
	delete(p.waves[wave], k)
	if len(p.waves[wave]) == 0 {
		delete(p.waves, wave)
	}
}

// leave takes a waiter out of its wave's queue, and hands the wake-up it
// may have had to the next; p.mu is held.
func (p *pacer) leave(k paceKey) {
	e, ok := p.waiting[k]
	if !ok {
		return
	}
	delete(p.waiting, k)
	wave := e.Value.(*waiter).wave
	q := p.queues[wave]
	q.Remove(e)
	if q.Len() == 0 {
		delete(p.queues, wave)
	}
	p.wake(wave)
}

// gauge sets the pacing metrics; p.mu is held.
func (p *pacer) gauge() {
	n := 0
	for _, slots := range p.waves {
		n += len(slots)
	}
	rolloutsInProgress.Set(float64(n))
	rolloutsQueued.Set(float64(len(p.waiting)))
}

// heldWave is the wave of a paced rollout of the workload still in
// progress (pacer.heldWave), "" if none or without pacing.
func (r *Reconciler) heldWave(ctx context.Context, v state) string {
	if r.pacer == nil {
		return ""
	}
	return r.pacer.heldWave(ctx, r.Type, client.ObjectKeyFromObject(v.obj))
}

// admitRollout is the pacer's answer to a rollout, and the wave its record
// names. A change written into the template of a Deployment ripple paused
// asks for no slot: the write starts no rollout, and the slot of the change
// that began the pause counts the one its end starts. Waiting for a slot of
// its own, when its wave was full, left it out of that rollout, and it
// rolled again after, with a pause of its own.
func (r *Reconciler) admitRollout(ctx context.Context, v state, changed []refs.Ref, pause *workload.PauseMark) (string, admission) {
	if r.pacer == nil || r.ownerPaused(v.obj) {
		return "", admitted
	}
	if r.inSpecPause(v) {
		return r.heldWave(ctx, v), admitted
	}
	wave := waveOf(v.obj.GetNamespace(), changed, v.current)
	return wave, r.pace(ctx, v.obj, wave, pausedFor(v, pause))
}

// pace holds a rollout back while its wave has no free slot for it; paused
// is the pause period it starts with, if any. Without
// --max-rollouts-in-progress, or under --dry-run, nothing is paced.
func (r *Reconciler) pace(ctx context.Context, obj client.Object, wave string, paused time.Duration) admission {
	if r.pacer == nil || r.Opts.DryRun || r.ownerPaused(obj) {
		return admitted
	}
	a := r.pacer.admit(ctx, r.Type, obj, wave, paused)
	if a == queued {
		logf.FromContext(ctx).V(1).Info("Waiting for a slot to roll", "wave", wave)
	}
	return a
}

// reconcilePaced wraps a reconcile of a paced workload: first it frees the
// slot the workload holds once its rollout is done, which wakes the next
// rollouts of its wave; last it drops the workload from its wave's queue
// if it no longer waits.
func (r *Reconciler) reconcilePaced(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	k := paceKey{kind: r.Type.Kind, NamespacedName: req.NamespacedName}
	if late := r.pacer.settle(ctx, k); late != nil {
		r.event(late, corev1.EventTypeWarning, ReasonRolloutTimedOut, "Reload",
			"Not available %s after its rollout; the next rollouts of the same change go on", r.pacer.timeout)
	}
	defer r.pacer.reconciled(k)
	return r.reconcile(ctx, req)
}

// waveOf names the wave of a rollout: the first changed object, in the
// namespace, at the version that changed. Every workload that one edit
// rolls is in the same wave. A bucket of a folded record has no version
// of its own: the newest of its members, the object edited, names it, as
// it names the wave of a workload whose record names that object, whatever
// else each workload tracks in the bucket. Without it, every later change
// of a bucket joined the wave of the first, and a workload still holding
// its slot wrote none of them; named by the bucket, one edit made two
// waves, each of --max-rollouts-in-progress. A deleted object has no
// version either: its deletions share a wave.
func waveOf(ns string, changed []refs.Ref, current map[refs.Ref]tracked) string {
	if len(changed) == 0 {
		return ns
	}
	ref, at := changed[0], "deleted"
	if t, ok := current[ref]; ok {
		at = t.version.version
	} else if isBucket(ref) {
		if member, version := newestMember(ref, current); version != "" {
			ref, at = member, version
		} else {
			at = ""
		}
	}
	return ns + "/" + ref.String() + "@" + at
}

// newestMember is the tracked object of a record's bucket at the newest
// version, and that version.
func newestMember(bucket refs.Ref, current map[refs.Ref]tracked) (refs.Ref, string) {
	var member refs.Ref
	newest := ""
	for ref, t := range current {
		if bucketRef(ref.Kind, ref.Name) == bucket && (newest == "" || newerVersion(t.version.version, newest)) {
			member, newest = ref, t.version.version
		}
	}
	return member, newest
}

// intervalHolds is how long the workload's minimum interval still holds
// its rollout. A paused Deployment, by ripple or its owner, starts no
// rollout when its template is written: holding the change would only
// leave it out of the rollout its resume starts.
func (r *Reconciler) intervalHolds(v state) time.Duration {
	if r.inSpecPause(v) || r.ownerPaused(v.obj) {
		return 0
	}
	return r.minIntervalLeft(v)
}

// minIntervalLeft is how long the workload must still wait for its next
// rollout under its minimum interval: from its last one, as its pod
// template's stamp says, or its type's restart (an Argo Rollout's
// restartAt, which a restart writes in place of a stamp), whichever is
// later.
func (r *Reconciler) minIntervalLeft(v state) time.Duration {
	if v.minInterval == 0 {
		return 0
	}
	var last time.Time
	if st, ok := templateStamp(v); ok {
		last = time.Unix(st.at, 0)
	}
	if r.Type.RestartedAt != nil {
		// restartAt is the second after the restart was written; one set
		// for later (kubectl argo rollouts restart --in) has not happened.
		if at, ok := r.Type.RestartedAt(v.obj); ok {
			if at = at.Add(-time.Second); at.After(last) && !at.After(r.now()) {
				last = at
			}
		}
	}
	if last.IsZero() {
		return 0
	}
	return last.Add(v.minInterval).Sub(r.now())
}
