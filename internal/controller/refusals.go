package controller

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
)

// Refusals tells which of ripple's informers the API server refuses to
// list or watch, from the refusal until a watch of theirs starts again,
// and fails readiness while there are any. Rights are checked at start
// (access.go); one revoked later stops an informer at its next list or
// watch, and it keeps serving what it last listed: ripple would look ready
// and roll nothing for changes of that kind. An informer that may list but
// not watch counts as refused too: it lists again only after each backoff,
// up to a minute behind.
type Refusals struct {
	log logr.Logger
	mu  sync.Mutex
	// by holds, per refused informer, the API server's message.
	by map[*toolscache.ListWatch]string
}

// NewRefusals returns Refusals that log to log.
func NewRefusals(log logr.Logger) *Refusals {
	return &Refusals{log: log, by: map[*toolscache.ListWatch]string{}}
}

// ListWatch returns lw, noting its refusals and the watches that start.
func (r *Refusals) ListWatch(lw toolscache.ListerWatcher) *toolscache.ListWatch {
	inner := toolscache.ToListerWatcherWithContext(lw)
	out := &toolscache.ListWatch{}
	out.ListWithContextFunc = func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		obj, err := inner.ListWithContext(ctx, o)
		r.note(out, err, false)
		return obj, err
	}
	out.WatchFuncWithContext = func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
		w, err := inner.WatchWithContext(ctx, o)
		r.note(out, err, err == nil)
		return w, err
	}
	return out
}

// NewInformer is controller-runtime's informer constructor
// (cache.Options.NewInformer) with lw noted.
func (r *Refusals) NewInformer(lw toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, idx toolscache.Indexers) toolscache.SharedIndexInformer {
	return toolscache.NewSharedIndexInformer(r.ListWatch(lw), obj, resync, idx)
}

func (r *Refusals) note(lw *toolscache.ListWatch, err error, watching bool) {
	refused := isRefusal(err)
	if !refused && !watching {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	refusal, was := r.by[lw]
	if !refused {
		if was {
			delete(r.by, lw)
			r.log.Info("Watching again after a refusal", "refusal", refusal)
		}
		return
	}
	if !was {
		r.log.Error(err, "Refused a list or watch: ripple sees no change of these objects, and reports unready, until a watch of them starts again")
	}
	r.by[lw] = err.Error()
}

// Check is a readiness check that fails while an informer is refused.
func (r *Refusals) Check(*http.Request) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.by) == 0 {
		return nil
	}
	refused := slices.Sorted(maps.Values(r.by))
	return fmt.Errorf("ripple may not list or watch what it caches, so it sees no change of it: %s", strings.Join(refused, "; "))
}

// quietRefusals is the informers' watch error handler: client-go's, but
// for refusals, which Refusals logs once a run rather than once a retry.
func quietRefusals(ctx context.Context, r *toolscache.Reflector, err error) {
	if !isRefusal(err) {
		toolscache.DefaultWatchErrorHandler(ctx, r, err)
	}
}

func isRefusal(err error) bool { return apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) }
