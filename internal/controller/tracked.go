package controller

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ripple-controller/ripple/internal/annotations"
	"github.com/ripple-controller/ripple/internal/refs"
)

// tracked returns the ConfigMaps and Secrets in the namespace that the policy
// says trigger the workload, read from the cache, and the ones the pod spec
// references.
func (r *Reconciler) tracked(ctx context.Context, ns string, spec *corev1.PodSpec, pol *annotations.Policy) (out map[refs.Ref]trackedObj, referenced map[refs.Ref]bool, err error) {
	referenced = map[refs.Ref]bool{}
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
	out = map[refs.Ref]trackedObj{}
	for ref := range candidates {
		if err := r.consider(ctx, ns, ref, referenced[ref], pol, out); err != nil {
			return nil, nil, err
		}
	}
	for _, kind := range refs.Kinds {
		if err := r.matchPatterns(ctx, ns, kind, referenced, pol, out); err != nil {
			return nil, nil, err
		}
	}
	return out, referenced, nil
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
	vs, found, err := r.digests.of(ctx, ref.Kind, obj)
	if err != nil || !found {
		return err
	}
	out[ref] = trackedObj{sum: vs.sum, createdAt: obj.GetCreationTimestamp().Unix(), meta: obj, version: vs}
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
	var matched []client.Object
	for i := range list.Items {
		obj := &list.Items[i]
		ref := refs.Ref{Kind: kind, Name: obj.GetName()}
		if _, done := out[ref]; !done && pol.For(kind).Reload.Match(ref.Name) {
			matched = append(matched, obj)
		}
	}
	if err := r.digests.prefetch(ctx, kind, ns, matched); err != nil {
		return err
	}
	for _, obj := range matched {
		ref := refs.Ref{Kind: kind, Name: obj.GetName()}
		if err := r.add(ctx, ref, obj, referenced[ref], pol, out); err != nil {
			return err
		}
	}
	return nil
}

// missing tells why a recorded object is not tracked now: deleted (gone
// from the API server while the workload still uses it, also when a GET
// raced the delete), untracked (the workload stopped using it, it carries
// the ignore annotation, or it left ripple's view through
// --resource-label-selector or --resources-to-ignore), or, when the API
// server has an object the cache has not caught up with (deleted and
// recreated at once), neither: its entry is kept until the cache tells.
func (r *Reconciler) missing(ctx context.Context, ns string, ref refs.Ref, referenced bool, pol *annotations.Policy) (change, error) {
	if kindIgnored(r.Opts, ref.Kind) || !mayTrack(pol, ref, referenced) {
		return untracked, nil
	}
	key := types.NamespacedName{Namespace: ns, Name: ref.Name}
	cached := configObject(ref.Kind)
	err := r.Get(ctx, key, cached)
	if err == nil {
		if ok, _ := pol.Tracks(ref.Kind, ref.Name, cached.GetAnnotations(), referenced); !ok {
			return untracked, nil
		}
	} else if !apierrors.IsNotFound(err) {
		return 0, fmt.Errorf("reading cached %s %s: %w", ref.Kind, key, err)
	}
	live := configObject(ref.Kind)
	err = r.digests.reader.Get(ctx, key, live)
	switch {
	case apierrors.IsNotFound(err):
		return deleted, nil
	case err != nil:
		return 0, fmt.Errorf("reading %s %s: %w", ref.Kind, key, err)
	case r.Opts.ResourceSelector != nil && !r.Opts.ResourceSelector.Matches(labels.Set(live.GetLabels())):
		return untracked, nil
	}
	return 0, nil
}

// mayTrack reports whether the policy tracks the object if it exists,
// whatever annotations the object carries.
func mayTrack(pol *annotations.Policy, ref refs.Ref, referenced bool) bool {
	kp := pol.For(ref.Kind)
	if kp.Exclude[ref.Name] {
		return false
	}
	return kp.Reload.Match(ref.Name) || (referenced && (kp.Auto || kp.Search))
}
