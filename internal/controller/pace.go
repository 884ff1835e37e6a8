package controller

import (
	"context"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/source"

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
// controller; one that does not fit is left to paceRecheck.
const wakeBuffer = 1024

// pacer keeps, for each wave (one version of one changed object), the
// rollouts it started that are not available yet, and lets a rollout of
// the wave start only while fewer than max are. Waves never share slots,
// so an unrelated change is never held up. It is shared by the
// reconcilers of every workload type, and lives in memory: after a
// restart, a wave starts over with max free slots.
//
// A workload holding a slot is reconciled on each of its updates (the
// predicate asks holds); each such reconcile calls settle, which frees the
// slots that are done and wakes as many of the wave's longest waiting.
// Any reconcile may still take a free slot first, and a rollout that never
// becomes available may wait for a waiter's recheck to time out.
type pacer struct {
	max     int
	timeout time.Duration
	reader  client.Reader

	mu sync.Mutex
	// waves holds the slots of each wave; they are few at a time.
	waves map[string]map[types.NamespacedName]slot
	// queues holds each wave's waiters in order, and waiting the wave of
	// each waiter.
	queues  map[string][]waiter
	waiting map[types.NamespacedName]string
	wakes   map[string]chan event.GenericEvent
}

// slot is one rollout in progress.
type slot struct {
	typ        workload.Type
	started    time.Time
	generation int64
}

// waiter is a workload waiting for a slot.
type waiter struct {
	key  types.NamespacedName
	kind string
}

func newPacer(limit int, timeout time.Duration, reader client.Reader) *pacer {
	return &pacer{max: limit, timeout: timeout, reader: reader,
		waves:  map[string]map[types.NamespacedName]slot{},
		queues: map[string][]waiter{}, waiting: map[types.NamespacedName]string{}, wakes: map[string]chan event.GenericEvent{}}
}

// wakeups is the source of the wake-ups of one workload type's waiters.
func (p *pacer) wakeups(kind string) source.Source {
	p.mu.Lock()
	defer p.mu.Unlock()
	ch := make(chan event.GenericEvent, wakeBuffer)
	p.wakes[kind] = ch
	return source.Channel(ch, &handler.EnqueueRequestForObject{})
}

// admit reports whether the workload may roll now in its wave, and takes
// a slot when it may; when it may not, it waits in the wave's queue.
// timedOut lists the slots freed because their rollout timed out, for an
// Event.
func (p *pacer) admit(ctx context.Context, typ workload.Type, obj client.Object, wave string) (ok bool, timedOut []client.Object) {
	key := client.ObjectKeyFromObject(obj)
	p.mu.Lock()
	defer p.mu.Unlock()
	defer p.gauge()
	timedOut = p.free(ctx, wave)
	if _, held := p.waves[wave][key]; held {
		// Its rollout of this change started: this reconcile read it from
		// before that, and neither rolls it again nor frees its slot.
		return false, timedOut
	}
	if len(p.waves[wave]) >= p.max {
		// A workload whose change moved on to a newer version waits in
		// that version's wave.
		if was, queued := p.waiting[key]; !queued || was != wave {
			p.dequeue(key)
			p.waiting[key] = wave
			p.queues[wave] = append(p.queues[wave], waiter{key: key, kind: typ.Kind})
		}
		return false, timedOut
	}
	if p.waves[wave] == nil {
		p.waves[wave] = map[types.NamespacedName]slot{}
	}
	p.waves[wave][key] = slot{typ: typ, started: time.Now(), generation: obj.GetGeneration()}
	p.dequeue(key)
	p.wake(wave)
	return true, timedOut
}

// holds reports whether the workload holds a slot.
func (p *pacer) holds(key types.NamespacedName) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.wavesHeldBy(key)) > 0
}

// settle frees the slots that are done in the waves where the workload
// holds one, and wakes as many waiters.
func (p *pacer) settle(ctx context.Context, key types.NamespacedName) (timedOut []client.Object) {
	p.mu.Lock()
	defer p.mu.Unlock()
	waves := p.wavesHeldBy(key)
	for _, wave := range waves {
		timedOut = append(timedOut, p.free(ctx, wave)...)
		p.wake(wave)
	}
	if len(waves) > 0 {
		p.gauge()
	}
	return timedOut
}

// wavesHeldBy lists the waves where the workload holds a slot; p.mu is
// held.
func (p *pacer) wavesHeldBy(key types.NamespacedName) []string {
	var out []string
	for wave, slots := range p.waves {
		if _, ok := slots[key]; ok {
			out = append(out, wave)
		}
	}
	return out
}

// free drops the slots of the wave whose rollout is done; p.mu is held.
func (p *pacer) free(ctx context.Context, wave string) (timedOut []client.Object) {
	for k, s := range p.waves[wave] {
		done, late := p.done(ctx, k, s)
		if late != nil {
			timedOut = append(timedOut, late)
		}
		if done {
			p.drop(wave, k)
		}
	}
	return timedOut
}

// wake queues the first waiters of the wave, one per free slot; p.mu is
// held. They stay in the queue until admitted, so a waiter that never asks
// again keeps being the one woken until paceRecheck.
func (p *pacer) wake(wave string) {
	free := p.max - len(p.waves[wave])
	for _, w := range p.queues[wave][:min(max(free, 0), len(p.queues[wave]))] {
		obj := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: w.key.Namespace, Name: w.key.Name}}
		select {
		case p.wakes[w.kind] <- event.GenericEvent{Object: obj}:
		default:
		}
	}
}

// done reports whether a rollout's slot is free: its workload is gone, or
// the controller made the generation after ripple's write available, or
// the timeout passed (then late is the workload, for an Event).
func (p *pacer) done(ctx context.Context, key types.NamespacedName, s slot) (done bool, late client.Object) {
	obj := s.typ.New()
	err := p.reader.Get(ctx, key, obj)
	switch {
	case apierrors.IsNotFound(err):
		return true, nil
	case err != nil:
		logf.FromContext(ctx).Error(err, "Cannot read a paced rollout's workload", "workload", key)
		return false, nil
	case s.typ.Available == nil || (obj.GetGeneration() > s.generation && s.typ.Available(obj)):
		return true, nil
	case time.Since(s.started) >= p.timeout:
		return true, obj
	}
	return false, nil
}

// release frees the workload's slot in its wave: its rollout failed.
func (p *pacer) release(obj client.Object, wave string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.drop(wave, client.ObjectKeyFromObject(obj))
	p.wake(wave)
	p.gauge()
}

// forget drops a workload from the queue: it has nothing to roll now, or
// it is gone.
func (p *pacer) forget(key types.NamespacedName) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.waiting[key]; ok {
		p.dequeue(key)
		p.gauge()
	}
}

// drop frees a slot; p.mu is held.
func (p *pacer) drop(wave string, key types.NamespacedName) {
	delete(p.waves[wave], key)
	if len(p.waves[wave]) == 0 {
		delete(p.waves, wave)
	}
}

// dequeue takes a waiter out of its wave's queue; p.mu is held.
func (p *pacer) dequeue(key types.NamespacedName) {
	wave, ok := p.waiting[key]
	if !ok {
		return
	}
	delete(p.waiting, key)
	p.queues[wave] = slices.DeleteFunc(p.queues[wave], func(w waiter) bool { return w.key == key })
	if len(p.queues[wave]) == 0 {
		delete(p.queues, wave)
	}
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

// pace holds a rollout back while its wave has no free slot; ok false
// means wait to be woken. Without --max-rollouts-in-progress, or under
// --dry-run, nothing is paced.
func (r *Reconciler) pace(ctx context.Context, obj client.Object, wave string) bool {
	if r.pacer == nil || r.Opts.DryRun {
		return true
	}
	ok, timedOut := r.pacer.admit(ctx, r.Type, obj, wave)
	r.timedOut(timedOut)
	if !ok {
		logf.FromContext(ctx).V(1).Info("Waiting for a slot to roll", "wave", wave)
	}
	return ok
}

// settlePaced frees the slot the workload holds once its rollout is done,
// and wakes the next rollouts of its wave.
func (r *Reconciler) settlePaced(ctx context.Context, key types.NamespacedName) {
	if r.pacer != nil {
		r.timedOut(r.pacer.settle(ctx, key))
	}
}

func (r *Reconciler) timedOut(late []client.Object) {
	for _, obj := range late {
		r.event(obj, corev1.EventTypeWarning, ReasonRolloutTimedOut, "Reload",
			"Not available %s after its rollout; the next rollouts of the same change go on", r.pacer.timeout)
	}
}

// waveOf names the wave of a rollout: the first changed object, in the
// namespace, at the version that changed. Every workload that one edit
// rolls is in the same wave.
func waveOf(ns string, changed []refs.Ref, current map[refs.Ref]tracked) string {
	if len(changed) == 0 {
		return ns
	}
	return ns + "/" + changed[0].String() + "@" + current[changed[0]].version.version
}

// minIntervalLeft is how long the workload must still wait for its next
// rollout under its minimum interval: from its last one, as its pod
// template's stamp says.
func (r *Reconciler) minIntervalLeft(v state) time.Duration {
	if v.minInterval == 0 {
		return 0
	}
	st, ok := templateStamp(v)
	if !ok {
		return 0
	}
	return time.Unix(st.at, 0).Add(v.minInterval).Sub(r.now())
}
