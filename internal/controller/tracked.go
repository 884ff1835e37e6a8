package controller

import (
	"context"
	"fmt"
	"maps"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ripple-controller/ripple/internal/annotations"
	"github.com/ripple-controller/ripple/internal/refs"
)

// track returns the ConfigMaps, Secrets and SecretProviderClasses in the
// namespace that the workload's policy tracks, read from the cache, with
// their digests, and
// the mistakes found in their ignore and match annotations.
func (r *Reconciler) track(ctx context.Context, ns string, v *view) (map[refs.Ref]tracked, []annotations.Problem, error) {
	named, matched, err := r.candidates(ctx, ns, v)
	if err != nil {
		return nil, nil, err
	}
	var problems []annotations.Problem
	tracks := func(meta client.Object, ref refs.Ref) bool {
		referenced := v.referenced[ref]
		problems = append(problems, v.policy.ObjectProblems(ref.Kind, ref.Name, meta.GetAnnotations(), referenced)...)
		ok, _ := v.policy.Tracks(ref.Kind, ref.Name, meta.GetAnnotations(), referenced)
		return ok
	}
	var found []candidate
	for ref, meta := range named {
		if tracks(meta, ref) {
			found = append(found, candidate{ref, meta})
		}
	}
	for kind, objs := range matched {
		objs = slices.DeleteFunc(objs, func(m client.Object) bool { return !tracks(m, refs.Ref{Kind: kind, Name: m.GetName()}) })
		if err := r.digests.prefetch(ctx, kind, ns, r.Opts.ResourceSelector, objs); err != nil {
			return nil, nil, err
		}
		for _, meta := range objs {
			found = append(found, candidate{refs.Ref{Kind: kind, Name: meta.GetName()}, meta})
		}
	}
	current := make(map[refs.Ref]tracked, len(found))
	for _, c := range found {
		vs, exists, err := r.digests.of(ctx, c.ref.Kind, c.meta)
		if err != nil {
			return nil, nil, err
		}
		if exists {
			current[c.ref] = tracked{meta: c.meta, createdAt: c.meta.GetCreationTimestamp().Unix(),
				seenCreated: r.seenCreated(c.meta), marks: r.marks(v, c), version: vs,
				used: v.usedKeys[c.ref], precise: v.precise}
		}
	}
	if err := r.trackClasses(ctx, ns, v, current); err != nil {
		return nil, nil, err
	}
	return current, problems, nil
}

type candidate struct {
	ref  refs.Ref
	meta client.Object
}

// candidates returns the cached metadata of every existing object the
// policy may track: named, those the pod spec references and those the
// reload lists name, each read directly; matched, for a reload list with
// regular expressions, the other objects of the kind in the namespace that
// match, whose digests are worth a bulk read when there are many.
func (r *Reconciler) candidates(ctx context.Context, ns string, v *view) (named map[refs.Ref]client.Object, matched map[refs.Kind][]client.Object, err error) {
	names := maps.Clone(v.referenced)
	for _, kind := range refs.Kinds {
		for _, name := range v.policy.For(kind).Reload.Literals() {
			names[refs.Ref{Kind: kind, Name: name}] = true
		}
	}
	named = map[refs.Ref]client.Object{}
	for ref := range names {
		// SecretProviderClasses are read from their statuses (trackClasses).
		if ref.Kind == refs.SecretProviderClass || kindIgnored(r.Opts, ref.Kind) {
			continue
		}
		obj := configObject(ref.Kind)
		err := r.Get(ctx, types.NamespacedName{Namespace: ns, Name: ref.Name}, obj)
		switch {
		case err == nil:
			named[ref] = obj
		case !apierrors.IsNotFound(err):
			return nil, nil, fmt.Errorf("reading cached %s %s/%s: %w", ref.Kind, ns, ref.Name, err)
		}
	}
	matched = map[refs.Kind][]client.Object{}
	for _, kind := range refs.Kinds {
		objs, err := r.matchPatterns(ctx, ns, kind, v)
		if err != nil {
			return nil, nil, err
		}
		matched[kind] = slices.DeleteFunc(objs, func(o client.Object) bool { return named[refs.Ref{Kind: kind, Name: o.GetName()}] != nil })
	}
	return named, matched, nil
}

// matchPatterns returns the cached objects of the kind in the namespace
// that the reload list's regular expressions match.
func (r *Reconciler) matchPatterns(ctx context.Context, ns string, kind refs.Kind, v *view) ([]client.Object, error) {
	list := v.policy.For(kind).Reload
	if kindIgnored(r.Opts, kind) || !list.HasPatterns() {
		return nil, nil
	}
	cached := configList(kind)
	if err := r.List(ctx, cached, client.InNamespace(ns), client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing cached %ss: %w", kind, err)
	}
	var out []client.Object
	for i := range cached.Items {
		if list.Match(cached.Items[i].GetName()) {
			out = append(out, &cached.Items[i])
		}
	}
	return out, nil
}

// missing tells why a recorded object is not tracked now: deleted (gone
// from the API server while the workload still uses it, also when a GET
// raced the delete), untracked (the workload stopped using it, it carries
// the ignore annotation, or it left ripple's view through
// --resource-label-selector or --resources-to-ignore), or, when the API
// server has an object the cache has not caught up with (deleted and
// recreated at once), neither: its entry is kept until the cache tells.
// A SecretProviderClass without statuses is untracked: no pod mounts it,
// and pods that mount it later mount what is current; one whose statuses
// no rotation wrote is kept as recorded (csi.go).
func (r *Reconciler) missing(ctx context.Context, ns string, ref refs.Ref, referenced bool, pol *annotations.Policy) (change, error) {
	if kindIgnored(r.Opts, ref.Kind) || !mayTrack(pol, ref, referenced) {
		return untracked, nil
	}
	if ref.Kind == refs.SecretProviderClass {
		if mounted, err := r.classMounted(ctx, ns, ref.Name); err != nil || mounted {
			return 0, err
		}
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
		if last, ok := r.digests.lastAnnotations(ref.Kind, key); ok {
			if tracks, _ := pol.Tracks(ref.Kind, ref.Name, last, referenced); !tracks {
				return untracked, nil
			}
		}
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
	if kp.Exclude.Has(ref.Name) {
		return false
	}
	return kp.Reload.Match(ref.Name) || (referenced && (kp.Auto || kp.Search))
}

// mark is a change ripple saw of an object that may have made a workload
// track it on its own side (births.tracking), read with that workload's
// policy.
type mark struct {
	// at is the API server second ripple saw it at.
	at      int64
	version string
	// began says the workload did not track the object before it: its
	// ignore annotation went, match came under search, or, under
	// --resource-label-selector, it took the label.
	began bool
}

// marks reads the object's marks with the workload's policy.
func (r *Reconciler) marks(v *view, c candidate) []mark {
	kept := r.digests.born.marksOf(c.meta.GetUID())
	if len(kept) == 0 {
		return nil
	}
	out := make([]mark, len(kept))
	for i, b := range kept {
		tracked, _ := v.policy.Tracks(c.ref.Kind, c.ref.Name, b.before, v.referenced[c.ref])
		out[i] = mark{at: b.seen.Unix(), version: b.version, began: b.entered || !tracked}
	}
	return out
}

// since returns the last mark after the record written at the API server
// second at at which the workload began to track the object, if any: a
// data change after it rolls, one before it not. A mark older than the
// record, less clockSlack, cannot be why the object is missing from it.
func (t tracked) since(at int64) (mark, bool) {
	for i := len(t.marks) - 1; i >= 0 && t.marks[i].at >= at-clockSlack; i-- {
		if t.marks[i].began {
			return t.marks[i], true
		}
	}
	return mark{}, false
}

// leftOut reports whether the object may be missing from the record
// written at the API server second at for its marks, not because the cache
// missed it: the workload did not track it from its creation on, or when
// the record was written, by the first mark after it, or it began to track
// it in the seconds of the record, which whole seconds cannot order
// before or after it.
func (t tracked) leftOut(at int64) bool {
	if len(t.marks) > 0 && t.marks[0].began || t.untrackedAt(at+clockSlack) {
		return true
	}
	return slices.ContainsFunc(t.marks, func(m mark) bool {
		return m.began && m.at >= at-clockSlack && m.at <= at+clockSlack
	})
}

// untrackedAt reports whether the workload did not track the object at
// the API server second at, by the first mark after it.
func (t tracked) untrackedAt(at int64) bool {
	for _, m := range t.marks {
		if m.at > at {
			return m.began
		}
	}
	return false
}

// seenCreated is the API server second ripple saw the object created at,
// 0 if it did not. Under --resource-label-selector an object also comes
// into view when it takes the label, long after its creation, which is no
// creation: a label is not a change of the data the pods hold.
func (r *Reconciler) seenCreated(meta client.Object) int64 {
	if r.Opts.ResourceSelector != nil {
		return 0
	}
	return r.digests.born.seenAt(meta.GetUID())
}
