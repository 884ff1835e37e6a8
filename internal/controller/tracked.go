package controller

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ripple-controller/ripple/internal/annotations"
	"github.com/ripple-controller/ripple/internal/refs"
)

// tracked returns the ConfigMaps and Secrets in the namespace that the policy
// says trigger the workload, read from the cache.
func (r *Reconciler) tracked(ctx context.Context, ns string, spec *corev1.PodSpec, pol *annotations.Policy) (map[refs.Ref]trackedObj, error) {
	referenced := map[refs.Ref]bool{}
	for _, ref := range refs.FromPodSpec(spec) {
		referenced[ref] = true
	}
	candidates := map[refs.Ref]bool{}
	for ref := range referenced {
		candidates[ref] = true
	}
	for _, kind := range refs.Kinds {
		for _, name := range pol.For(kind).Reload.Literals() {
			candidates[refs.Ref{Kind: kind, Name: name}] = true
		}
	}
	out := map[refs.Ref]trackedObj{}
	for ref := range candidates {
		if err := r.consider(ctx, ns, ref, referenced[ref], pol, out); err != nil {
			return nil, err
		}
	}
	for _, kind := range refs.Kinds {
		if err := r.matchPatterns(ctx, ns, kind, referenced, pol, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// consider adds the object to out if it exists and the policy tracks it.
func (r *Reconciler) consider(ctx context.Context, ns string, ref refs.Ref, referenced bool, pol *annotations.Policy, out map[refs.Ref]trackedObj) error {
	if kindIgnored(r.Opts, ref.Kind) {
		return nil
	}
	obj := configObject(ref.Kind)
	if err := r.Get(ctx, types.NamespacedName{Namespace: ns, Name: ref.Name}, obj); err != nil {
		return client.IgnoreNotFound(err)
	}
	return r.add(ctx, ref, obj, referenced, pol, out)
}

// add records a cached object in out when the policy tracks it, and adds
// the object's invalid ignore or match annotations to the policy's problems.
func (r *Reconciler) add(ctx context.Context, ref refs.Ref, obj client.Object, referenced bool, pol *annotations.Policy, out map[refs.Ref]trackedObj) error {
	pol.Problems = append(pol.Problems, pol.ObjectProblems(ref.Kind, ref.Name, obj.GetAnnotations(), referenced)...)
	if ok, _ := pol.Tracks(ref.Kind, ref.Name, obj.GetAnnotations(), referenced); !ok {
		return nil
	}
	sum, found, err := r.digests.of(ctx, ref.Kind, obj)
	if err != nil || !found {
		return err
	}
	out[ref] = trackedObj{sum: sum, createdAt: obj.GetCreationTimestamp().Unix()}
	return nil
}

// matchPatterns matches the reload list's regular expressions against every
// cached object of the kind in the namespace; literal names were looked up
// directly.
func (r *Reconciler) matchPatterns(ctx context.Context, ns string, kind refs.Kind, referenced map[refs.Ref]bool, pol *annotations.Policy, out map[refs.Ref]trackedObj) error {
	if kindIgnored(r.Opts, kind) || !pol.For(kind).Reload.HasPatterns() {
		return nil
	}
	list := configList(kind)
	if err := r.List(ctx, list, client.InNamespace(ns), client.UnsafeDisableDeepCopy); err != nil {
		return fmt.Errorf("listing cached %ss: %w", kind, err)
	}
	for i := range list.Items {
		obj := &list.Items[i]
		ref := refs.Ref{Kind: kind, Name: obj.GetName()}
		if _, done := out[ref]; done {
			continue
		}
		if err := r.add(ctx, ref, obj, referenced[ref], pol, out); err != nil {
			return err
		}
	}
	return nil
}

// exists reports whether the object is in the cache, tracked or not.
func (r *Reconciler) exists(ctx context.Context, ns string, ref refs.Ref) bool {
	if kindIgnored(r.Opts, ref.Kind) {
		return false
	}
	err := r.Get(ctx, types.NamespacedName{Namespace: ns, Name: ref.Name}, configObject(ref.Kind))
	return err == nil
}
