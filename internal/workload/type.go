package workload

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Type is one type of workload ripple rolls: how to read its pod template
// and how to write to it. The word matches --ignored-workload-types.
type Type struct {
	// Kind is the API kind, e.g. "Deployment".
	Kind string
	// GroupVersion is the API group and version the type is served at.
	GroupVersion schema.GroupVersion
	// Plural is the lower-case plural used by --ignored-workload-types.
	Plural string
	// New returns an empty object of the kind.
	New func() client.Object
	// NewList returns an empty list of the kind.
	NewList func() client.ObjectList
	// Template returns the object's pod template.
	Template func(client.Object) *corev1.PodTemplateSpec
	// TemplatePath is the path of the pod template from the object's root,
	// used to build a merge patch that touches nothing else.
	TemplatePath []string
}

// All lists every type ripple can roll, in a fixed order.
var All []Type

func register(t Type) { All = append(All, t) }

// ByPlural finds a type by its plural, case-insensitively.
func ByPlural(plural string) (Type, bool) {
	for _, t := range All {
		if strings.EqualFold(t.Plural, plural) {
			return t, true
		}
	}
	return Type{}, false
}

// Metadata returns the named object in its metadata-only form: a patch
// sent through it gets the object's metadata back, not the whole object.
func (t Type) Metadata(namespace, name string) *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(t.GroupVersion.WithKind(t.Kind))
	m.SetNamespace(namespace)
	m.SetName(name)
	return m
}

// TemplatePatch returns the body of a merge patch that sets annotations on
// the pod template and metadataAnnotations on the object's metadata.
// resourceVersion makes the patch fail on a conflict rather than act on a
// stale view.
func (t Type) TemplatePatch(resourceVersion string, metadataAnnotations, templateAnnotations map[string]string) map[string]any {
	root := map[string]any{}
	meta := map[string]any{"resourceVersion": resourceVersion}
	if len(metadataAnnotations) > 0 {
		meta["annotations"] = metadataAnnotations
	}
	root["metadata"] = meta
	if len(templateAnnotations) > 0 {
		node := root
		for _, p := range t.TemplatePath {
			next := map[string]any{}
			node[p] = next
			node = next
		}
		node["metadata"] = map[string]any{"annotations": templateAnnotations}
	}
	return root
}

// newType builds a Type from the object and list types and the accessor of
// the pod template, so that each type's file states only what differs.
func newType[T any, L any, PT interface {
	*T
	client.Object
}, PL interface {
	*L
	client.ObjectList
}](gv schema.GroupVersion, kind, plural string, template func(PT) *corev1.PodTemplateSpec) Type {
	return Type{
		Kind:         kind,
		GroupVersion: gv,
		Plural:       plural,
		New:          func() client.Object { return PT(new(T)) },
		NewList:      func() client.ObjectList { return PL(new(L)) },
		Template: func(o client.Object) *corev1.PodTemplateSpec {
			if t, ok := o.(PT); ok {
				return template(t)
			}
			return nil
		},
		TemplatePath: []string{"spec", "template"},
	}
}
