package controller

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/ripple-controller/ripple/internal/workload"
)

// Event reasons of a pause period.
const (
	ReasonReloadPaused = "ReloadPaused"
	ReasonPauseEnded   = "PauseEnded"
)

// The pause period, Reloader's deployment.reloader.stakater.com/pause-period
// done so that it cannot stick. Reloader keeps the timer that ends a pause
// in memory, so a restart or a leader change leaves the Deployment paused
// for good (Reloader issues #1016, #1219). ripple keeps only the start on
// the object (the paused-at annotation, API server time) and ends the pause
// from any reconcile at or after start+period: the one queued for that
// moment, or the first of a new leader, which reconciles every workload.
// A pause never outlasts its period: a start in the future, an unreadable
// one or a removed period ends it at once.

// pauseLeft returns how long the workload's pause still runs; zero or less
// means it is over. A start later than the API server's clock allows (a
// hand edit, a copied manifest) is as unreadable: counting it from now at
// every reconcile would never end the pause.
func (r *Reconciler) pauseLeft(v *view) time.Duration {
	now := r.now()
	if v.pauseErr != nil || v.pausedAt.After(now.Add(clockSlack*time.Second)) {
		return 0
	}
	return v.pausedAt.Add(v.pausePeriod).Sub(now)
}

// pauseLeftOf tells whether ripple's pause holds the rollout of a
// Deployment, and how long its period still runs: none, or less, when it
// ran out while nobody resumed the Deployment.
func (r *Reconciler) pauseLeftOf(obj client.Object) (left time.Duration, paused bool) {
	if _, ok := obj.GetAnnotations()[r.Opts.Keys.PausedAt]; !ok || r.Type.Pause != workload.PauseSpec {
		return 0, false
	}
	v := r.views.of(obj)
	if v == nil || !v.paused {
		return 0, false
	}
	return r.pauseLeft(v), true
}

// pausePeriodOf is how long the Deployment's rollouts start paused, 0 for
// a workload ripple does not pause.
func (r *Reconciler) pausePeriodOf(obj client.Object) time.Duration {
	if r.Type.Pause != workload.PauseSpec {
		return 0
	}
	if v := r.views.of(obj); v != nil {
		return v.pausePeriod
	}
	return 0
}

// pauseStep is what a reconcile does about a workload's pause.
type pauseStep struct {
	// left is how long the pause still runs: the workload is queued again
	// then.
	left time.Duration
	// done says the reconcile ends here: a held workload waits for the end
	// of its pause, and resuming a Deployment is a write whose update
	// queues it again.
	done bool
	// endHold says the hold is over: the reconcile rolls the changes held,
	// and the rollout's patch removes the pause annotation, so that it does
	// not start a pause of its own.
	endHold bool
}

// paused handles a workload that ripple paused. A Deployment whose spec
// holds its rollout goes on to converge during the pause, its changes
// written as they come.
func (r *Reconciler) paused(ctx context.Context, obj client.Object, v *view) (pauseStep, error) {
	if !v.paused {
		return pauseStep{}, nil
	}
	// A Deployment resumed by hand (kubectl rollout resume) rolled then: as
	// Reloader counts a pause its own only while the spec holds it, the
	// pause is over, and the next change pauses it again. Read from the
	// annotation alone, it went on to roll each later change at once.
	byHand := r.Type.Pause == workload.PauseSpec && !r.Type.OwnerPaused(obj)
	if left := r.pauseLeft(v); left > 0 && !byHand {
		return pauseStep{left: left, done: r.Type.Pause != workload.PauseSpec}, nil
	}
	if r.Opts.DryRun {
		// Nothing is resumed or released: the workload is reconciled as
		// one not paused, whose rollout --dry-run reports, uncounted.
		return pauseStep{}, nil
	}
	if r.Type.Pause != workload.PauseSpec {
		return pauseStep{endHold: true}, nil
	}
	if err := r.Type.EndPause(ctx, r.Client, obj, r.Opts.Keys.PausedAt); err != nil {
		return pauseStep{done: true}, err
	}
	r.pauseEnded(ctx, obj, v)
	// Resuming, by ripple or by hand, is the Deployment's rollout: it is
	// counted and alerted now, not when the pause began.
	r.countReload(obj, "success")
	r.notify(ctx, obj, "its config")
	return pauseStep{done: true}, nil
}

func (r *Reconciler) pauseEnded(ctx context.Context, obj client.Object, v *view) {
	logf.FromContext(ctx).Info("Ended a pause", "pausedAt", v.pausedAt, "period", v.pausePeriod)
	r.event(obj, corev1.EventTypeNormal, ReasonPauseEnded, "Pause", "The pause that began at %s ended; the workload rolls with every change made during it",
		v.pausedAt.UTC().Format(time.RFC3339))
}

// endHold removes the pause annotation of a hold whose end rolled nothing:
// the changes held were undone, or recorded without a rollout.
func (r *Reconciler) endHold(ctx context.Context, v state) error {
	if err := r.Type.EndPause(ctx, r.Client, v.obj, r.Opts.Keys.PausedAt); err != nil {
		return err
	}
	r.pauseEnded(ctx, v.obj, v.view)
	return nil
}

// pauseMark returns the pause annotation a rollout writes, if any: the end
// of the hold it rolls at the end of, or the start of a pause. For a type
// that cannot pause, starting one rolls nothing now: held is true and the
// record stays, so the change rolls when the pause ends. A Deployment its
// owner paused is left to them, as Reloader does.
func (r *Reconciler) pauseMark(ctx context.Context, v state, names string) (mark *workload.PauseMark, held bool, err error) {
	switch {
	case v.endHold:
		return &workload.PauseMark{Annotation: r.Opts.Keys.PausedAt}, false, nil
	case v.pausePeriod <= 0 || v.paused || r.Type.Pause == workload.NoPause:
		return nil, false, nil
	}
	if r.ownerPaused(v.obj) {
		return nil, false, nil
	}
	start := &workload.PauseMark{Annotation: r.Opts.Keys.PausedAt, At: r.now().UTC().Format(time.RFC3339)}
	if r.Type.Pause == workload.PauseSpec {
		return start, false, nil
	}
	if r.Opts.DryRun {
		// The hold would be written nowhere: each period would hold
		// again, and the change never be reported as one that would roll.
		return nil, false, nil
	}
	if err := r.Type.Hold(ctx, r.Client, v.obj, *start); err != nil {
		return nil, true, err
	}
	logf.FromContext(ctx).Info("Paused before rolling", "changed", names, "period", v.pausePeriod)
	r.event(v.obj, corev1.EventTypeNormal, ReasonReloadPaused, "Pause", "%s changed; the workload rolls in %s, with every change made until then",
		names, v.pausePeriod)
	return nil, true, nil
}

// inSpecPause reports a Deployment ripple paused: a change written into its
// paused template rolls at the pause's end with the change that began it,
// so the minimum interval, which would make it a second rollout, does not
// hold it.
func (r *Reconciler) inSpecPause(v state) bool {
	return v.paused && r.Type.Pause == workload.PauseSpec
}

// ownerPaused reports a Deployment its owner paused, not ripple. Its
// rollout starts when they resume it, so it takes no pacing slot, which it
// would hold, never available, until --rollout-timeout.
func (r *Reconciler) ownerPaused(obj client.Object) bool {
	return r.Type.OwnerPaused != nil && r.Type.OwnerPaused(obj) && obj.GetAnnotations()[r.Opts.Keys.PausedAt] == ""
}

// pausedFor is how long a rollout written now stays paused: the period of
// the pause it starts. A change written into a pause that holds the
// template already takes no slot (admitRollout).
func pausedFor(v state, mark *workload.PauseMark) time.Duration {
	if mark != nil && mark.At != "" {
		return v.pausePeriod
	}
	return 0
}
