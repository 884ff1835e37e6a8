package controller

import (
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ripple-controller/ripple/internal/annotations"
	"github.com/ripple-controller/ripple/internal/refs"
	"github.com/ripple-controller/ripple/internal/workload"
)

// refIndex is the field index from config objects to the workloads that may
// track them. Its values are "Kind/namespace/name" for a named object, and
// "Kind/namespace/*" for a workload whose reload list holds a real regular
// expression, which only a match against each name can decide.
const refIndex = "ripple.dev/refs"

func refKey(kind refs.Kind, namespace, name string) string {
	return string(kind) + "/" + namespace + "/" + name
}

func patternKey(kind refs.Kind, namespace string) string {
	return refKey(kind, namespace, "*")
}

// indexer computes refIndex values for workloads of one kind.
type indexer struct {
	kind          workload.Kind
	keys          annotations.Keys
	autoReloadAll bool
}

func (ix indexer) policy(obj client.Object) (annotations.Policy, bool) {
	tmpl := ix.kind.Template(obj)
	if tmpl == nil {
		return annotations.Policy{}, false
	}
	return ix.keys.Parse(obj.GetAnnotations(), tmpl.Annotations, ix.autoReloadAll), true
}

// values lists every object whose change may matter to the workload: all
// referenced objects of a kind the policy tracks at all, and the reload
// lists. Objects the workload recorded but no longer names still matter:
// their deletion must reach it.
func (ix indexer) values(obj client.Object) []string {
	pol, ok := ix.policy(obj)
	if !ok {
		return nil
	}
	ns := obj.GetNamespace()
	var out []string
	for _, r := range refs.FromPodSpec(&ix.kind.Template(obj).Spec) {
		kp := pol.For(r.Kind)
		if kp.Auto || kp.Search {
			out = append(out, refKey(r.Kind, ns, r.Name))
		}
	}
	for _, kind := range refs.Kinds {
		list := pol.For(kind).Reload
		for _, name := range list.Literals() {
			out = append(out, refKey(kind, ns, name))
		}
		if list.HasPatterns() {
			out = append(out, patternKey(kind, ns))
		}
	}
	if rec, err := decodeRecord(obj.GetAnnotations()[annotations.Recorded]); err == nil {
		for r := range rec.objects {
			if !isBucket(r) {
				out = append(out, refKey(r.Kind, ns, r.Name))
			}
		}
	}
	return out
}
