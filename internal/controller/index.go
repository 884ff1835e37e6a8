package controller

import (
	"slices"

	"github.com/ripple-controller/ripple/internal/refs"
)

// refIndex is the field index from config objects to the workloads that may
// track them. Its values are "Kind/namespace/name" for a named object, and
// "Kind/namespace/*" for a workload whose reload list holds a real regular
// expression, which only a match against each name can decide.
const refIndex = "ripple.dev/refs"

// templateRefIndex is the field index from a workload whose pods are made
// from another workload's pod template (an Argo Rollout with workloadRef)
// to that workload's name, so that a change of the template reaches it.
const templateRefIndex = "ripple.dev/template-ref"

func refKey(kind refs.Kind, namespace, name string) string {
	return string(kind) + "/" + namespace + "/" + name
}

func patternKey(kind refs.Kind, namespace string) string {
	return refKey(kind, namespace, "*")
}

// indexKeys lists every object whose change may matter to the workload:
// all referenced objects of a kind the policy tracks at all, and the
// reload lists. Objects the workload recorded but no longer names still
// matter: their deletion must reach it. A workload whose pod template is
// another's cannot name what that template references from its own
// version, which the index keeps, so it is indexed like a reload list with
// a pattern: for every object of a kind its policy tracks by reference,
// and Reconcile reads the template.
func indexKeys(ns string, v *view) []string {
	var out []string
	kinds := map[refs.Kind]bool{}
	add := func(kind refs.Kind, key string) {
		out = append(out, key)
		kinds[kind] = true
	}
	if v.templateRef != "" {
		for _, kind := range refs.AllKinds {
			if kp := v.policy.For(kind); kp.Auto || kp.Search {
				add(kind, patternKey(kind, ns))
			}
		}
	}
	for r := range v.referenced {
		kp := v.policy.For(r.Kind)
		if kp.Auto || kp.Search {
			add(r.Kind, refKey(r.Kind, ns, r.Name))
		}
	}
	for _, kind := range refs.AllKinds {
		list := v.policy.For(kind).Reload
		for _, name := range list.Literals() {
			add(kind, refKey(kind, ns, name))
		}
		if list.HasPatterns() {
			add(kind, patternKey(kind, ns))
		}
	}
	if v.ownRecord() {
		for r := range v.record.objects {
			if !isBucket(r) {
				add(r.Kind, refKey(r.Kind, ns, r.Name))
			}
		}
	}
	if len(out) <= maxIndexKeys {
		return out
	}
	// A workload names most objects twice, in its pod spec and its record.
	slices.Sort(out)
	if out = slices.Compact(out); len(out) <= maxIndexKeys {
		return out
	}
	out = out[:0]
	for _, kind := range refs.AllKinds {
		if kinds[kind] {
			out = append(out, patternKey(kind, ns))
		}
	}
	return out
}

// maxIndexKeys bounds the keys one workload adds to the index, each of
// which it holds twice (namespaced and not), a few hundred bytes each: a
// record written by hand, or a pod spec naming tens of thousands of
// objects, grew it by megabytes a workload. Past it, the workload is
// indexed as a reload list with a pattern is, and queued by every object
// of each kind it names in its namespace.
const maxIndexKeys = 1024
