package workload

import (
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Kind describes one workload kind.
type Kind struct {
	// Name is the API kind, e.g. "Deployment".
	Name string
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

// All lists every kind ripple can roll, in a fixed order.
var All []Kind

func register(k Kind) { All = append(All, k) }

// ByPlural finds a kind by its plural, case-insensitively.
func ByPlural(plural string) (Kind, bool) {
	for _, k := range All {
		if strings.EqualFold(k.Plural, plural) {
			return k, true
		}
	}
	return Kind{}, false
}

// Metadata returns the named object in its metadata-only form: a patch
// sent through it gets the object's metadata back, not the whole object.
func (k Kind) Metadata(namespace, name string) *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind(k.Name))
	m.SetNamespace(namespace)
	m.SetName(name)
	return m
}

// TemplatePatch returns the body of a merge patch that sets annotations on
// the pod template and metadataAnnotations on the object's metadata.
// resourceVersion makes the patch fail on a conflict rather than act on a
// stale view.
func (k Kind) TemplatePatch(resourceVersion string, metadataAnnotations, templateAnnotations map[string]string) map[string]any {
	root := map[string]any{}
	meta := map[string]any{"resourceVersion": resourceVersion}
	if len(metadataAnnotations) > 0 {
		meta["annotations"] = metadataAnnotations
	}
	root["metadata"] = meta
	if len(templateAnnotations) > 0 {
		node := root
		for _, p := range k.TemplatePath {
			next := map[string]any{}
			node[p] = next
			node = next
		}
		node["metadata"] = map[string]any{"annotations": templateAnnotations}
	}
	return root
}

// newKind builds a Kind from the object and list types and the accessor of
// the pod template, so that each kind's file states only what differs.
func newKind[T any, L any, PT interface {
	*T
	client.Object
}, PL interface {
	*L
	client.ObjectList
}](name, plural string, template func(PT) *corev1.PodTemplateSpec) Kind {
	return Kind{
		Name:    name,
		Plural:  plural,
		New:     func() client.Object { return PT(new(T)) },
		NewList: func() client.ObjectList { return PL(new(L)) },
		Template: func(o client.Object) *corev1.PodTemplateSpec {
			if t, ok := o.(PT); ok {
				return template(t)
			}
			return nil
		},
		TemplatePath: []string{"spec", "template"},
	}
}
