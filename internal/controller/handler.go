package controller

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/ripple-controller/ripple/internal/refs"
	"github.com/ripple-controller/ripple/internal/workload"
)

type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]

// fanout is the one event handler of the ConfigMap, the Secret or the
// SecretProviderClassPodStatus informer.
// It maps each event, through refIndex, to the workloads of every type that
// may track the object, and queues them on that type's controller after the
// debounce window. One handler for all types, rather than one per type,
// means one buffer of pending events per informer and one pass per event.
// Each queue is keyed by workload, so every change that reaches a workload
// within the window is handled by one reconcile.
type fanout struct {
	kind refs.Kind
	// name is the name of the tracked object an event is about: the
	// object's own, or the class a SecretProviderClassPodStatus reports on.
	name     func(client.Object) string
	reader   client.Reader
	debounce time.Duration
	inScope  func(client.Object) bool
	digests  *digests
	log      logr.Logger
	// synced holds the controllers' workers back until the informer has
	// synced (fanoutSource), as controller-runtime does for its own caches.
	synced toolscache.InformerSynced

	mu      sync.RWMutex
	targets []target
}

// target is the controller of one workload type, once it has started.
type target struct {
	typ   workload.Type
	seen  *triggers
	queue queue
}

// queueFor is the source through which a controller receives the fanout's
// events for its workload type: started with the controller, it hands the
// controller's queue to the fanout, whose informer handler is already
// registered, and holds the controller's workers back until the informer
// has synced. A change seen before a controller starts is not lost, since
// the controller reconciles every workload when it starts.
func (f *fanout) queueFor(typ workload.Type, seen *triggers) source.Source {
	return &fanoutSource{f: f, typ: typ, seen: seen}
}

type fanoutSource struct {
	f    *fanout
	typ  workload.Type
	seen *triggers
	// run is the controller's context, which Start is given, kept for
	// WaitForSync, whose own context ends at the cache sync timeout.
	run context.Context
}

func (s *fanoutSource) Start(ctx context.Context, q queue) error {
	s.run = ctx
	s.f.mu.Lock()
	defer s.f.mu.Unlock()
	s.f.targets = append(s.f.targets, target{typ: s.typ, seen: s.seen, queue: q})
	return nil
}

// WaitForSync waits as long as the controller runs, not for the
// controller's cache sync timeout, which its context carries, as the
// manager waits for its own caches: a first list of many Secrets, slowed
// by the API server's fairness, keeps ripple unready for longer rather
// than make it exit and start the list over.
func (s *fanoutSource) WaitForSync(context.Context) error {
	if !toolscache.WaitForCacheSync(s.run.Done(), s.f.synced) {
		return fmt.Errorf("waiting for the %s cache to sync: %w", s.f.kind, s.run.Err())
	}
	return nil
}

func (s *fanoutSource) String() string { return "changes of " + string(s.f.kind) + "s" }

// handlers are the informer's callbacks. The initial list is skipped, as
// every workload is reconciled on its own create event at start anyway; an
// update that repeats the cached version, a resync, is skipped too. Cached
// metadata cannot tell a data change from a label change, so Reconcile
// compares digests.
func (f *fanout) handlers() toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, isInInitialList bool) {
			if o := f.object(obj); o != nil && !isInInitialList {
				// Back in view (a label under --resource-label-selector): not gone.
				f.digests.back(o.GetUID())
				f.digests.born.add(o, f.digests.now())
				f.enqueue(o)
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			oldUID, oldVersion := identity(oldObj)
			newUID, newVersion := identity(newObj)
			if oldVersion == "" || newVersion == "" || oldVersion == newVersion {
				return
			}
			// Deleted and created again within a relist of the informer,
			// which reports the two as one update.
			if oldUID != newUID {
				f.forget(oldUID)
			}
			f.enqueue(f.object(newObj))
		},
		DeleteFunc: func(obj any) {
			tomb, relisted := obj.(toolscache.DeletedFinalStateUnknown)
			if relisted {
				obj = tomb.Obj
			}
			if o := f.object(obj); o != nil {
				f.forgetThrough(o, relisted)
				f.digests.deleted(f.kind, o)
				f.enqueue(o)
			}
		},
	}
}

// identity reads an informer's object's UID and version without building
// the object ripple reads: every update of every ConfigMap and Secret in
// ripple's scope comes this way, and most are skipped or track nothing.
func identity(obj any) (types.UID, string) {
	if m, ok := obj.(*configMeta); ok {
		return m.uid, m.version
	}
	if o, ok := obj.(client.Object); ok {
		return o.GetUID(), o.GetResourceVersion()
	}
	return "", ""
}

// forget drops what ripple keeps of a deleted object.
func (f *fanout) forget(uid types.UID) {
	f.digests.forget(uid)
	f.digests.born.forget(uid)
}

// forgetThrough drops what ripple keeps of an object the watch reported
// deleted, but for marks the informer noted at later versions: under
// --resource-label-selector, the object back in view before the handlers
// heard it leave. A relist that found it gone leaves nothing to keep.
func (f *fanout) forgetThrough(o client.Object, relisted bool) {
	if relisted {
		f.forget(o.GetUID())
		return
	}
	f.digests.forget(o.GetUID())
	f.digests.born.forgetThrough(o.GetUID(), o.GetResourceVersion())
}

// object is an informer's object as the rest of ripple reads it.
func (f *fanout) object(obj any) client.Object {
	if m, ok := obj.(*configMeta); ok {
		return m.object(f.kind)
	}
	o, _ := obj.(client.Object)
	return o
}

func (f *fanout) enqueue(o client.Object) {
	if !f.inScope(o) {
		return
	}
	now := time.Now()
	f.mu.RLock()
	defer f.mu.RUnlock()
	for _, t := range f.targets {
		for _, req := range f.users(t.typ, o) {
			t.seen.add(req, now)
			if f.debounce > 0 {
				t.queue.AddAfter(req, f.debounce)
			} else {
				t.queue.Add(req)
			}
		}
	}
}

// users returns the workloads of one type that name the object or may match
// it by pattern.
func (f *fanout) users(typ workload.Type, obj client.Object) []reconcile.Request {
	ns := obj.GetNamespace()
	var out []reconcile.Request
	for _, key := range []string{refKey(f.kind, ns, f.name(obj)), patternKey(f.kind, ns)} {
		list := typ.NewList()
		err := f.reader.List(context.Background(), list, client.InNamespace(ns), client.MatchingFields{refIndex: key}, client.UnsafeDisableDeepCopy)
		if err != nil {
			f.log.Error(err, "Cannot look up workloads in the index", "workloadKind", typ.Kind, "key", key)
			continue
		}
		_ = meta.EachListItem(list, func(o runtime.Object) error {
			if w, ok := o.(client.Object); ok {
				out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(w)})
			}
			return nil
		})
	}
	return out
}

// triggers remembers, per workload, when the first config change that is
// not yet handled was seen, for the latency histogram.
type triggers struct {
	mu    sync.Mutex
	first map[reconcile.Request]time.Time
}

func newTriggers() *triggers { return &triggers{first: map[reconcile.Request]time.Time{}} }

func (t *triggers) add(req reconcile.Request, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.first[req]; !ok {
		t.first[req] = at
	}
}

// take forgets the workload's pending change and returns when it was seen.
func (t *triggers) take(req reconcile.Request) (time.Time, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	at, ok := t.first[req]
	delete(t.first, req)
	return at, ok
}
