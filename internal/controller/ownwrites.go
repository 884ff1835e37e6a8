package controller

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ownWriteLag bounds how long a reconcile waits for ripple's own write to
// reach its cache. A watch that lags longer is broken, and its relist
// queues the workload anyway; and a write that made no new version (none
// of ripple's should) delays the workload no longer than this.
const ownWriteLag = 30 * time.Second

// ownWrites holds, for each workload ripple wrote lately, the version it
// wrote over, until its cache moves past that version. The API server's
// versions are ordered (resourceversion.CompareResourceVersion): a write
// retried on a version read afresh after a conflict (recordAfter) is over
// that one, while the cache may hold any version up to it. Ripple's own writes
// pass no predicate, so a reconcile meanwhile (a ConfigMap changed) read
// the version ripple replaced: a change set back before ripple's rollout
// reached the cache compared equal to the old record, and the pods kept
// the config in between. Such a reconcile waits instead, and the update
// that brings the cache past the version is let through to end the wait.
type ownWrites struct {
	mu sync.Mutex
	m  map[types.NamespacedName]ownWrite
	// pruned is when entries older than ownWriteLag were last dropped:
	// those of workloads deleted before their cache moved on.
	pruned time.Time
}

type ownWrite struct {
	over string
	at   time.Time
	// waited says a reconcile found the cache behind and waits for the
	// update past over.
	waited bool
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

// behind returns how long a reconcile of obj, as its cache holds it, is
// to wait: while that is no later than the version ripple wrote over, the
// rest of ownWriteLag; else zero.
func (o *ownWrites) behind(obj client.Object, now time.Time) time.Duration {
	key := client.ObjectKeyFromObject(obj)
	o.mu.Lock()
	defer o.mu.Unlock()
	w, ok := o.m[key]
	if left := ownWriteLag - now.Sub(w.at); ok && !past(obj.GetResourceVersion(), w.over) && left > 0 {
		w.waited = true
		o.m[key] = w
		return left
	}
	delete(o.m, key)
	return 0
}

// arrived reports whether an update of the workload to version next is
// the one a reconcile waits for, and forgets a write that next is past.
func (o *ownWrites) arrived(key types.NamespacedName, next string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	w, ok := o.m[key]
	if !ok || !past(next, w.over) {
		return false
	}
	delete(o.m, key)
	return w.waited
}

// past reports whether version is later than over. Versions that are not
// the API server's ordered numbers (an aggregated API's) compare only
// equal: then a version other than over counts as past it.
func past(version, over string) bool {
	cmp, err := resourceversion.CompareResourceVersion(version, over)
	if err != nil {
		return version != over
	}
	return cmp > 0
}

// wrote notes a write ripple made on obj's version. Under --dry-run the
// API server keeps none, and the cache rightly holds that version still.
func (r *Reconciler) wrote(obj client.Object) {
	if !r.Opts.DryRun {
		r.own.wrote(obj, time.Now())
	}
}
