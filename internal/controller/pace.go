package controller

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/ripple-controller/ripple/internal/refs"
	"github.com/ripple-controller/ripple/internal/workload"
)

// ReasonRolloutTimedOut is the Event on a paced rollout that did not
// become available within --rollout-timeout.
const ReasonRolloutTimedOut = "RolloutTimedOut"

// paceRetry is how often a rollout waiting for a slot in its wave asks
// again: the rollouts it waits for end through status updates, which queue
// nothing.
const paceRetry = 250 * time.Millisecond

// pacer keeps, for each wave (one version of one changed object), the
// rollouts it started that are not available yet, and lets a rollout of
// the wave start only while fewer than max are. Waves never share slots,
// so an unrelated change is never held up. It is shared by the
// reconcilers of every workload type, and lives in memory: after a
// restart, a wave starts over with max free slots.
type pacer struct {
	max     int
	timeout time.Duration
	reader  client.Reader

	mu      sync.Mutex
	waves   map[string]map[types.NamespacedName]slot
	waiting map[types.NamespacedName]string
}

// slot is one rollout in progress.
type slot struct {
	typ        workload.Type
	started    time.Time
	generation int64
}

func newPacer(limit int, timeout time.Duration, reader client.Reader) *pacer {
	return &pacer{max: limit, timeout: timeout, reader: reader,
		waves: map[string]map[types.NamespacedName]slot{}, waiting: map[types.NamespacedName]string{}}
}

// admit reports whether the workload may roll now in its wave, and takes
// a slot when it may. The slots of rollouts that became available, are
// gone or timed out are freed first; timedOut lists the latter, for an
// Event.
func (p *pacer) admit(ctx context.Context, typ workload.Type, obj client.Object, wave string) (ok bool, timedOut []client.Object) {
	key := client.ObjectKeyFromObject(obj)
	p.mu.Lock()
	defer p.mu.Unlock()
	slots := p.waves[wave]
	for k, s := range slots {
		done, late := p.done(ctx, k, s)
		if late != nil {
			timedOut = append(timedOut, late)
		}
		if done {
			delete(slots, k)
		}
	}
	if len(slots) >= p.max {
		p.waiting[key] = wave
		p.gauge()
		return false, timedOut
	}
	if slots == nil {
		slots = map[types.NamespacedName]slot{}
		p.waves[wave] = slots
	}
	slots[key] = slot{typ: typ, started: time.Now(), generation: obj.GetGeneration()}
	delete(p.waiting, key)
	p.gauge()
	return true, timedOut
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
	case time.Since(s.started) > p.timeout:
		return true, obj
	}
	return false, nil
}

// release frees the workload's slot in its wave: its rollout failed.
func (p *pacer) release(obj client.Object, wave string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.waves[wave], client.ObjectKeyFromObject(obj))
	if len(p.waves[wave]) == 0 {
		delete(p.waves, wave)
	}
	p.gauge()
}

// forget drops a workload from the queue: it has nothing to roll now, or
// it is gone.
func (p *pacer) forget(key types.NamespacedName) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.waiting[key]; ok {
		delete(p.waiting, key)
		p.gauge()
	}
}

// gauge sets the pacing metrics; p.mu is held.
func (p *pacer) gauge() {
	n := 0
	for wave, slots := range p.waves {
		if len(slots) == 0 {
			delete(p.waves, wave)
		}
		n += len(slots)
	}
	rolloutsInProgress.Set(float64(n))
	rolloutsQueued.Set(float64(len(p.waiting)))
}

// pace holds a rollout back while its wave has no free slot; ok false
// means wait and ask again after paceRetry. Without --max-rollouts-in-
// progress, or under --dry-run, nothing is paced.
func (r *Reconciler) pace(ctx context.Context, obj client.Object, wave string) bool {
	if r.pacer == nil || r.Opts.DryRun {
		return true
	}
	ok, timedOut := r.pacer.admit(ctx, r.Type, obj, wave)
	for _, late := range timedOut {
		r.event(late, corev1.EventTypeWarning, ReasonRolloutTimedOut, "Reload",
			"Not available %s after its rollout; the next rollouts of the same change go on", r.pacer.timeout)
	}
	if !ok {
		logf.FromContext(ctx).V(1).Info("Waiting for a slot to roll", "wave", wave)
	}
	return ok
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
