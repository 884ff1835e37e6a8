package controller

import (
	"context"
	"fmt"
	"slices"
	"time"

	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/ripple-controller/ripple/internal/annotations"
	"github.com/ripple-controller/ripple/internal/digest"
	"github.com/ripple-controller/ripple/internal/options"
	"github.com/ripple-controller/ripple/internal/refs"
	"github.com/ripple-controller/ripple/internal/workload"
)

// Setup registers the index and one controller per workload kind that is
// not ignored.
func Setup(ctx context.Context, mgr ctrl.Manager, opts *options.Options, keyed digest.Keyed, recorder events.EventRecorder) error {
	for _, kind := range opts.Workloads() {
		if err := setupKind(ctx, mgr, opts, keyed, recorder, kind); err != nil {
			return fmt.Errorf("setting up %s: %w", kind.Name, err)
		}
	}
	return nil
}

func setupKind(ctx context.Context, mgr ctrl.Manager, opts *options.Options, keyed digest.Keyed, recorder events.EventRecorder, kind workload.Kind) error {
	ix := indexer{kind: kind, keys: opts.Keys, autoReloadAll: opts.AutoReloadAll}
	if err := mgr.GetFieldIndexer().IndexField(ctx, kind.New(), refIndex, ix.values); err != nil {
		return fmt.Errorf("indexing: %w", err)
	}
	seen := newTriggers()
	r := &Reconciler{Client: mgr.GetClient(), Kind: kind, Opts: opts, Keyed: keyed, Recorder: recorder, seen: seen, now: time.Now}
	inScope := predicate.NewPredicateFuncs(func(o client.Object) bool {
		return !slices.Contains(opts.NamespacesToIgnore, o.GetNamespace())
	})
	b := ctrl.NewControllerManagedBy(mgr).
		Named(kind.Plural).
		For(kind.New(), builder.WithPredicates(inScope, predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}), ix.interesting())).
		WithOptions(controller.Options{MaxConcurrentReconciles: opts.Workers})
	for _, ck := range refs.Kinds {
		if r.kindIgnored(ck) {
			continue
		}
		h := &configHandler{kind: ck, workload: kind, reader: mgr.GetClient(), debounce: opts.Debounce, seen: seen}
		b = b.Watches(newConfigObject(ck), h, builder.WithPredicates(inScope, configChanged(opts.Keys)))
	}
	return b.Complete(r)
}

// interesting drops events of workloads that neither opted in, nor were
// recorded, nor carry a mistake to report: most workloads in a cluster.
func (ix indexer) interesting() predicate.Predicate {
	return predicate.NewPredicateFuncs(func(o client.Object) bool {
		pol, ok := ix.policy(o)
		_, recorded := o.GetAnnotations()[annotations.Recorded]
		return ok && (recorded || pol.OptedIn() || len(pol.Problems) > 0)
	})
}

// configChanged passes an update of a ConfigMap or Secret only when its data
// or an annotation that decides tracking moved: a labels-only change stops here.
func configChanged(keys annotations.Keys) predicate.Predicate {
	relevant := []string{annotations.DataDigest, keys.Ignore, keys.Match}
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			oldAnn, newAnn := e.ObjectOld.GetAnnotations(), e.ObjectNew.GetAnnotations()
			for _, k := range relevant {
				if oldAnn[k] != newAnn[k] {
					return true
				}
			}
			return false
		},
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}
