package controller

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ripple-controller/ripple/internal/refs"
	"github.com/ripple-controller/ripple/internal/workload"
)

// configHandler maps an event of a ConfigMap or Secret to the workloads of
// one kind that may track it, through refIndex, and queues them after the
// debounce window. The queue is keyed by workload, so every change that
// reaches a workload within the window is handled by one reconcile.
type configHandler struct {
	kind     refs.Kind
	workload workload.Kind
	reader   client.Reader
	debounce time.Duration
	seen     *triggers
	digests  *digests
}

type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]

// Create skips the objects of the initial list: every workload is
// reconciled on its own create event at start anyway.
func (h *configHandler) Create(ctx context.Context, e event.TypedCreateEvent[client.Object], q queue) {
	if !e.IsInInitialList {
		h.enqueue(ctx, e.Object, q)
	}
}

func (h *configHandler) Update(ctx context.Context, e event.TypedUpdateEvent[client.Object], q queue) {
	h.enqueue(ctx, e.ObjectNew, q)
}

func (h *configHandler) Delete(ctx context.Context, e event.TypedDeleteEvent[client.Object], q queue) {
	h.digests.forget(e.Object.GetUID())
	h.enqueue(ctx, e.Object, q)
}

func (h *configHandler) Generic(context.Context, event.TypedGenericEvent[client.Object], queue) {}

func (h *configHandler) enqueue(ctx context.Context, obj client.Object, q queue) {
	now := time.Now()
	ns := obj.GetNamespace()
	for _, key := range []string{refKey(h.kind, ns, obj.GetName()), patternKey(h.kind, ns)} {
		list := h.workload.NewList()
		err := h.reader.List(ctx, list, client.InNamespace(ns), client.MatchingFields{refIndex: key}, client.UnsafeDisableDeepCopy)
		if err != nil {
			logf.FromContext(ctx).Error(err, "Cannot look up workloads in the index", "key", key)
			continue
		}
		_ = meta.EachListItem(list, func(o runtime.Object) error {
			w, ok := o.(client.Object)
			if !ok {
				return nil
			}
			req := reconcile.Request{NamespacedName: client.ObjectKeyFromObject(w)}
			h.seen.add(req, now)
			if h.debounce > 0 {
				q.AddAfter(req, h.debounce)
			} else {
				q.Add(req)
			}
			return nil
		})
	}
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
