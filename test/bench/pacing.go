package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// rolloutTime is how long the bench, playing the Deployment controller in
// (p), takes to make a rolled Deployment available.
const rolloutTime = 200 * time.Millisecond

// pacing is (p): one ConfigMap used by 100 Deployments and ripple with
// --max-rollouts-in-progress=10. No Deployment controller runs on the bench's control
// plane, so the bench plays one: rolloutTime after a Deployment's spec
// changes, it reports the new generation observed and available.
func (b *Bench) pacing(ctx context.Context) error {
	const scen = "(p) 1 ConfigMap, 100 users, --max-rollouts-in-progress=10, each rollout available 200 ms after it starts"
	e, err := b.setup(ctx, Layout{Workloads: 100, ConfigMaps: 1})
	if err != nil {
		return err
	}
	r, err := b.startRipple(ctx, e, "paced", "--debounce=0", "--max-rollouts-in-progress=10")
	if err != nil {
		return err
	}
	cctx, cancel := context.WithCancel(ctx)
	ctl, err := startAvailability(cctx, b.cs, e.layout.Namespace)
	if err != nil {
		cancel()
		return errors.Join(err, r.Stop())
	}
	t0 := time.Now()
	edits, err := b.rippleEditor(e, r, time.Second).Run(ctx, []string{cmName(0)})
	if err == nil {
		err = ctl.waitAvailable(ctx, 100, 5*time.Minute)
	}
	total := ctl.lastAvailable().Sub(t0)
	cancel()
	if err != nil {
		return errors.Join(err, r.Stop())
	}
	if err := r.Stop(); err != nil {
		return err
	}
	b.correctness(scen, edits)
	most := ctl.maxInProgress()
	b.report.add(Row{Scenario: scen, Measure: "most rollouts in progress at once", Ripple: fmt.Sprint(most), Target: "at most 10", Pass: pass(most <= 10)})
	// Ten waves of 200 ms is the least a cap of 10 allows.
	b.report.add(Row{Scenario: scen, Measure: "edit to all 100 available", Ripple: ms(total), Floor: ms(10*rolloutTime) + " (10 waves)"})
	b.cfg.Logf("pacing: at most %d in progress, all available after %s", most, ms(total))
	return b.teardown(ctx, e)
}

// availability plays the Deployment controller for (p).
type availability struct {
	mu          sync.Mutex
	inProgress  map[string]bool
	most        int
	available   int
	last        time.Time
	availableCh chan struct{}
}

func startAvailability(ctx context.Context, cs kubernetes.Interface, ns string) (*availability, error) {
	w, err := cs.AppsV1().Deployments(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("watching Deployments: %w", err)
	}
	a := &availability{inProgress: map[string]bool{}, availableCh: make(chan struct{}, 1000)}
	go func() {
		defer w.Stop()
		for ev := range w.ResultChan() {
			d, ok := ev.Object.(*appsv1.Deployment)
			if !ok || ev.Type != watch.Modified || d.Generation <= 1 || d.Status.ObservedGeneration >= d.Generation {
				continue
			}
			if a.start(d.Name) {
				go a.finish(ctx, cs, d)
			}
		}
	}()
	return a, nil
}

// start counts a rollout in progress; false if it already is.
func (a *availability) start(name string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.inProgress[name] {
		return false
	}
	a.inProgress[name] = true
	a.most = max(a.most, len(a.inProgress))
	return true
}

func (a *availability) finish(ctx context.Context, cs kubernetes.Interface, d *appsv1.Deployment) {
	select {
	case <-ctx.Done():
		return
	case <-time.After(rolloutTime):
	}
	// The rollout ends with the status write, which ripple may see, and
	// start the next one, before UpdateStatus returns: count it as ended
	// first.
	a.mu.Lock()
	delete(a.inProgress, d.Name)
	a.mu.Unlock()
	// ripple may write the Deployment again meanwhile (its record): read
	// it again on a conflict.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := cs.AppsV1().Deployments(d.Namespace).Get(ctx, d.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		cur.Status.ObservedGeneration = cur.Generation
		_, err = cs.AppsV1().Deployments(d.Namespace).UpdateStatus(ctx, cur, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return
	}
	a.mu.Lock()
	a.available++
	a.last = time.Now()
	a.mu.Unlock()
	a.availableCh <- struct{}{}
}

func (a *availability) waitAvailable(ctx context.Context, n int, timeout time.Duration) error {
	deadline := time.After(timeout)
	for {
		a.mu.Lock()
		got := a.available
		a.mu.Unlock()
		if got >= n {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline:
			return fmt.Errorf("%d of %d Deployments available after %s", got, n, timeout)
		case <-a.availableCh:
		}
	}
}

func (a *availability) maxInProgress() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.most
}

func (a *availability) lastAvailable() time.Time {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.last
}
