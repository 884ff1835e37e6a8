package controller

import (
	"context"
	"errors"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ownWriteLag bounds how long a reconcile waits for ripple's own write to
// reach its cache: past it, the reconcile reads the workload from the API
// server and decides on that. A write that made no new version (none of
// ripple's should) delays the workload no longer than this.
const ownWriteLag = 30 * time.Second

// ownWriteKept bounds how long ripple remembers a write whose update its
// cache has not shown: a workload deleted meanwhile, or a watch lagging
// that long. Past it, a reconcile decides on the version its cache holds.
const ownWriteKept = 10 * time.Minute

// ownWrites holds, for each workload ripple wrote lately, the version it
// wrote over, until its cache moves past that version. Ripple's own writes
// pass no predicate, so a reconcile meanwhile (a ConfigMap changed) read
// the version ripple replaced: a change set back before ripple's rollout
// reached the cache compared equal to the old record, and the pods kept
// the config in between. Such a reconcile waits instead, and the update
// that brings the cache past the version is let through to end the wait.
// The API server's versions are ordered (CompareResourceVersion): a write
// retried over a version read afresh after a conflict (recordAfter) is
// ahead of any version up to that one the cache may hold.
type ownWrites struct {
	mu sync.Mutex
	m  map[types.NamespacedName]ownWrite
	// pruned is when entries were last dropped (prune).
	pruned time.Time
}

type ownWrite struct {
	over string
	at   time.Time
	// waited says a reconcile found the cache behind and waits for the
	// update past over.
	waited bool
	// arrived says that update came while none waited: the informer
	// stores a version before its predicates see it, so a reconcile may
	// have read the older one just before, and is to read again.
	arrived bool
}

func newOwnWrites() *ownWrites { return &ownWrites{m: map[types.NamespacedName]ownWrite{}} }

// wrote notes a write made on obj's version, which it named as its
// precondition.
func (o *ownWrites) wrote(obj client.Object, now time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.prune(now)
	o.m[client.ObjectKeyFromObject(obj)] = ownWrite{over: obj.GetResourceVersion(), at: now}
}

// prune drops, once per ownWriteLag, the entries older than that whose
// update came while none waited and which no reconcile read since, and
// those older than ownWriteKept. One whose update has not come stays: a
// reconcile meanwhile still reads a cache behind ripple's write.
func (o *ownWrites) prune(now time.Time) {
	if now.Sub(o.pruned) <= ownWriteLag {
		return
	}
	o.pruned = now
	for key, w := range o.m {
		if age := now.Sub(w.at); age > ownWriteKept || w.arrived && age > ownWriteLag {
			delete(o.m, key)
		}
	}
}

// forget drops the entry of a workload deleted.
func (o *ownWrites) forget(key types.NamespacedName) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.m, key)
}

// behind returns how long a reconcile of obj, as its cache holds it, is
// to wait: while that is no later than the version ripple wrote over, the
// rest of ownWriteLag; else zero. stale says the cache still holds such a
// version past ownWriteLag: the reconcile is to read the API server's.
func (o *ownWrites) behind(obj client.Object, now time.Time) (wait time.Duration, stale bool) {
	key := client.ObjectKeyFromObject(obj)
	o.mu.Lock()
	defer o.mu.Unlock()
	w, ok := o.m[key]
	left := ownWriteLag - now.Sub(w.at)
	switch {
	case !ok || past(obj.GetResourceVersion(), w.over):
		delete(o.m, key)
		return 0, false
	case now.Sub(w.at) > ownWriteKept:
		delete(o.m, key)
		return 0, false
	case left <= 0:
		// Kept until the cache moves on: each reconcile meanwhile reads
		// afresh.
		return 0, true
	case w.arrived:
		return conflictRetry, false
	}
	w.waited = true
	o.m[key] = w
	return left, false
}

// arrived reports whether an update of the workload to version next is
// the one a reconcile waits for, and forgets a write that next is past.
func (o *ownWrites) arrived(key types.NamespacedName, next string, now time.Time) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.prune(now)
	w, ok := o.m[key]
	if !ok || !past(next, w.over) {
		return false
	}
	if w.waited {
		delete(o.m, key)
		return true
	}
	w.arrived = true
	o.m[key] = w
	return false
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

// noteWrite notes a write on obj's version when applied says it was made,
// or when its answer was lost (a timeout, a connection reset) and the
// API server may have applied it: the workload read afresh tells, and one
// that cannot be read is taken as written, which at worst delays its next
// reconcile by ownWriteLag. A refusal from the API server wrote nothing.
func (r *Reconciler) noteWrite(ctx context.Context, obj client.Object, applied bool, err error) {
	var status apierrors.APIStatus
	switch {
	case applied:
		r.wrote(obj)
	case err == nil || errors.As(err, &status):
	default:
		fresh := r.Type.New()
		if r.digests.reader.Get(ctx, client.ObjectKeyFromObject(obj), fresh) != nil || past(fresh.GetResourceVersion(), obj.GetResourceVersion()) {
			r.wrote(obj)
		}
	}
}
