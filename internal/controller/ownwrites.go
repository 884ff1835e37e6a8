package controller

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ownWriteLag bounds how long a reconcile waits for ripple's own write to
// reach its cache. A watch that lags longer is broken, and its relist
// queues the workload anyway.
const ownWriteLag = 10 * time.Second

// ownWrites holds, for each workload whose record ripple wrote lately, the
// version it wrote over, until its cache moves past that version. Ripple's
// own writes pass no predicate, so a reconcile meanwhile (a ConfigMap
// changed) reads the version ripple replaced: a change set back before
// ripple's rollout reached the cache compared equal to the old record, and
// the pods kept the config in between. Such a reconcile waits instead.
type ownWrites struct {
	mu sync.Mutex
	m  map[types.NamespacedName]ownWrite
	// pruned is when entries older than ownWriteLag were last dropped.
	pruned time.Time
}

type ownWrite struct {
	over string
	at   time.Time
}

func newOwnWrites() *ownWrites { return &ownWrites{m: map[types.NamespacedName]ownWrite{}} }

// wrote notes a write made on obj's version, which it named as its
// precondition.
func (o *ownWrites) wrote(obj client.Object, now time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if now.Sub(o.pruned) > ownWriteLag {
		o.pruned = now
		for key, w := range o.m {
			if now.Sub(w.at) > ownWriteLag {
				delete(o.m, key)
			}
		}
	}
	o.m[client.ObjectKeyFromObject(obj)] = ownWrite{over: obj.GetResourceVersion(), at: now}
}

// behind reports whether the cache still holds the version ripple wrote
// over, within ownWriteLag of the write.
func (o *ownWrites) behind(obj client.Object, now time.Time) bool {
	key := client.ObjectKeyFromObject(obj)
	o.mu.Lock()
	defer o.mu.Unlock()
	w, ok := o.m[key]
	if ok && w.over == obj.GetResourceVersion() && now.Sub(w.at) <= ownWriteLag {
		return true
	}
	delete(o.m, key)
	return false
}

// wrote notes a write ripple made on obj's version. Under --dry-run the
// API server keeps none, and the cache rightly holds that version still.
func (r *Reconciler) wrote(obj client.Object) {
	if !r.Opts.DryRun {
		r.own.wrote(obj, time.Now())
	}
}
