package controller

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	toolscache "k8s.io/client-go/tools/cache"
)

// Refusals remembers the informers the API server has lately refused to
// list or watch, and fails readiness while there are any. Rights are
// checked at start (access.go); one revoked later stops an informer at its
// next list or watch, and it keeps serving what it last listed: ripple
// would look ready and roll nothing for changes of that kind.
type Refusals struct {
	log logr.Logger
	now func() time.Time
	mu  sync.Mutex
	by  map[*toolscache.Reflector]refusal
}

type refusal struct {
	err  string
	last time.Time
}

// refusalMemory is how long a refusal counts without another. client-go
// retries a refused list or watch at most 60 s after the last (its
// backoff, capped at 30 s, jittered up to twice that), so silence is the
// sign that it succeeds. A list that succeeds need not move the version
// the informer holds, in a quiet cluster; and an informer that may list
// but not watch lists again after each refused watch, moving it, while it
// stays a minute behind.
const refusalMemory = 65 * time.Second

// NewRefusals returns Refusals that log to log.
func NewRefusals(log logr.Logger) *Refusals {
	return &Refusals{log: log, now: time.Now, by: map[*toolscache.Reflector]refusal{}}
}

// HandleWatchError is an informer's watch error handler: it logs as
// client-go's own does, and remembers a refusal (403 or 401), logging the
// first of a run of them.
func (r *Refusals) HandleWatchError(ctx context.Context, ref *toolscache.Reflector, err error) {
	toolscache.DefaultWatchErrorHandler(ctx, ref, err)
	if !apierrors.IsForbidden(err) && !apierrors.IsUnauthorized(err) {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if f, ok := r.by[ref]; !ok || r.now().Sub(f.last) > refusalMemory {
		r.log.Error(err, "Refused a list or watch: ripple sees no change of these objects, and reports unready, until the right is granted again",
			"type", ref.TypeDescription())
	}
	r.by[ref] = refusal{err: err.Error(), last: r.now()}
}

// Check is a readiness check that fails while an informer stays refused.
func (r *Refusals) Check(*http.Request) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var refused []string
	for ref, f := range r.by {
		if r.now().Sub(f.last) > refusalMemory {
			delete(r.by, ref)
			r.log.Info("No longer refused a list or watch", "type", ref.TypeDescription())
			continue
		}
		refused = append(refused, f.err)
	}
	if len(refused) == 0 {
		return nil
	}
	slices.Sort(refused)
	return fmt.Errorf("ripple may no longer list or watch what it caches, so it sees no change of it: %s", strings.Join(refused, "; "))
}
