package bench

import (
	"context"
	"fmt"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

// Annotations the bench reads or writes.
const (
	// DigestAnnotation is the pod template annotation ripple writes to roll.
	DigestAnnotation = "ripple.dev/config-digest"
	// RecordedAnnotation is the metadata annotation ripple writes on first sight.
	RecordedAnnotation = "ripple.dev/recorded"
	// FloorAnnotation is the pod template annotation the floor writes.
	FloorAnnotation = "bench.ripple.dev/floor"
	// FloorRecordAnnotation is the floor's metadata annotation, as large as ripple's record.
	FloorRecordAnnotation = "bench.ripple.dev/floor-record"
)

// Roll is one change of a watched pod template annotation, seen by the watch.
type Roll struct {
	Name string
	Key  string
	At   time.Time
}

type depState struct {
	template   map[string]string // the watched template annotations
	recorded   bool
	generation int64
}

// Tracker follows the Deployments of one namespace through a single watch
// and logs every change of a watched pod template annotation with the time
// the bench saw it.
type Tracker struct {
	keys []string

	mu        sync.Mutex
	changed   *sync.Cond
	deps      map[string]*depState
	rolls     []Roll
	events    int
	lastEvent time.Time
	err       error
}

// StartTracker lists the Deployments of ns and watches them until ctx ends.
func StartTracker(ctx context.Context, cs kubernetes.Interface, ns string, keys ...string) (*Tracker, error) {
	t := &Tracker{keys: keys, deps: map[string]*depState{}, lastEvent: time.Now()}
	t.changed = sync.NewCond(&t.mu)
	list, err := cs.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing Deployments: %w", err)
	}
	for i := range list.Items {
		t.observe(&list.Items[i], time.Time{})
	}
	rv := list.ResourceVersion
	go func() {
		for ctx.Err() == nil {
			w, err := cs.AppsV1().Deployments(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true})
			if err != nil {
				if ctx.Err() == nil {
					t.fail(fmt.Errorf("watching Deployments: %w", err))
				}
				return
			}
			rv = t.consume(w)
			w.Stop()
		}
	}()
	go func() {
		<-ctx.Done()
		t.mu.Lock()
		t.changed.Broadcast()
		t.mu.Unlock()
	}()
	return t, nil
}

func (t *Tracker) fail(err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err == nil {
		t.err = err
	}
	t.changed.Broadcast()
}

// consume handles events until the watch closes and returns the last
// resourceVersion seen, to resume from.
func (t *Tracker) consume(w watch.Interface) string {
	var rv string
	for ev := range w.ResultChan() {
		now := time.Now()
		switch ev.Type {
		case watch.Added, watch.Modified:
			d := ev.Object.(*appsv1.Deployment)
			rv = d.ResourceVersion
			t.observe(d, now)
		case watch.Bookmark:
			if d, ok := ev.Object.(*appsv1.Deployment); ok {
				rv = d.ResourceVersion
			}
		case watch.Deleted:
			d := ev.Object.(*appsv1.Deployment)
			rv = d.ResourceVersion
			t.mu.Lock()
			delete(t.deps, d.Name)
			t.mu.Unlock()
		case watch.Error:
			t.fail(fmt.Errorf("watch error: %v", ev.Object))
			return rv
		}
	}
	return rv
}

func (t *Tracker) observe(d *appsv1.Deployment, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s, ok := t.deps[d.Name]
	if !ok {
		s = &depState{template: map[string]string{}}
		t.deps[d.Name] = s
	}
	for _, k := range t.keys {
		v := d.Spec.Template.Annotations[k]
		if ok && v != s.template[k] {
			t.rolls = append(t.rolls, Roll{Name: d.Name, Key: k, At: at})
		}
		s.template[k] = v
	}
	_, s.recorded = d.Annotations[RecordedAnnotation]
	s.generation = d.Generation
	if !at.IsZero() {
		t.events++
		t.lastEvent = at
	}
	t.changed.Broadcast()
}

// Mark is a position in the log of rolls.
type Mark int

// Mark returns the current end of the log of rolls.
func (t *Tracker) Mark() Mark {
	t.mu.Lock()
	defer t.mu.Unlock()
	return Mark(len(t.rolls))
}

// RollsSince returns the rolls logged after m.
func (t *Tracker) RollsSince(m Mark) []Roll {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]Roll(nil), t.rolls[m:]...)
}

// WaitRolled waits until every named Deployment rolled on key after m, or
// ctx ends, and returns the rolls after m.
func (t *Tracker) WaitRolled(ctx context.Context, m Mark, key string, names []string) ([]Roll, error) {
	defer t.wakeOn(ctx)()
	want := make(map[string]bool, len(names))
	for _, n := range names {
		want[n] = true
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	seen := map[string]bool{}
	i := int(m)
	for {
		for ; i < len(t.rolls); i++ {
			if r := t.rolls[i]; r.Key == key && want[r.Name] {
				seen[r.Name] = true
			}
		}
		if len(seen) == len(want) {
			return append([]Roll(nil), t.rolls[m:]...), nil
		}
		if t.err != nil {
			return nil, t.err
		}
		if ctx.Err() != nil {
			return append([]Roll(nil), t.rolls[m:]...), fmt.Errorf("%d of %d Deployments rolled: %w", len(seen), len(want), ctx.Err())
		}
		t.changed.Wait()
	}
}

// wakeOn wakes the waiters when ctx ends; call the result to stop.
func (t *Tracker) wakeOn(ctx context.Context) func() bool {
	return context.AfterFunc(ctx, func() {
		t.mu.Lock()
		t.changed.Broadcast()
		t.mu.Unlock()
	})
}

// WaitRecorded waits until n Deployments carry ripple's record.
func (t *Tracker) WaitRecorded(ctx context.Context, n int) error {
	defer t.wakeOn(ctx)()
	t.mu.Lock()
	defer t.mu.Unlock()
	for {
		count := 0
		for _, s := range t.deps {
			if s.recorded {
				count++
			}
		}
		if count >= n {
			return nil
		}
		if t.err != nil {
			return t.err
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%d of %d Deployments recorded: %w", count, n, ctx.Err())
		}
		t.changed.Wait()
	}
}

// Quiet returns how long ago the last Deployment event arrived and how many
// arrived so far.
func (t *Tracker) Quiet() (time.Duration, int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return time.Since(t.lastEvent), t.events
}

// Generations returns each Deployment's generation.
func (t *Tracker) Generations() map[string]int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[string]int64, len(t.deps))
	for n, s := range t.deps {
		out[n] = s.generation
	}
	return out
}
