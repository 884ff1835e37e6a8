package chart

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// objects is a rendered manifest, in order.
type objects []*unstructured.Unstructured

// parseManifest decodes a multi-document YAML stream, skipping empty documents.
func parseManifest(manifest string) (objects, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(manifest), 4096)
	var out objects
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("decoding the manifest: %w", err)
		}
		if len(u.Object) > 0 {
			out = append(out, u)
		}
	}
}

func (o objects) find(kind, namespace, name string) *unstructured.Unstructured {
	for _, u := range o {
		if u.GetKind() == kind && u.GetNamespace() == namespace && u.GetName() == name {
			return u
		}
	}
	return nil
}

func (o objects) ofKind(kind string) objects {
	var out objects
	for _, u := range o {
		if u.GetKind() == kind {
			out = append(out, u)
		}
	}
	return out
}

// ids lists kind/namespace/name of every object, sorted.
func (o objects) ids() []string {
	out := make([]string, 0, len(o))
	for _, u := range o {
		out = append(out, u.GetKind()+"/"+u.GetNamespace()+"/"+u.GetName())
	}
	slices.Sort(out)
	return out
}

// into converts u into a typed object.
func into[T any](u *unstructured.Unstructured) T {
	var out T
	if u == nil {
		panic("into: no object")
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, &out, true); err != nil {
		panic(fmt.Sprintf("converting %s %s: %v", u.GetKind(), u.GetName(), err))
	}
	return out
}

func deploymentOf(o objects) appsv1.Deployment {
	d := o.ofKind("Deployment")
	if len(d) != 1 {
		panic(fmt.Sprintf("want one Deployment, have %d", len(d)))
	}
	return into[appsv1.Deployment](d[0])
}

// rules gathers the rules of every Role and ClusterRole, keyed by
// "Kind namespace/name".
func (o objects) rules() map[string][]rbacv1.PolicyRule {
	out := map[string][]rbacv1.PolicyRule{}
	for _, u := range o {
		switch u.GetKind() {
		case "Role":
			out["Role "+u.GetNamespace()+"/"+u.GetName()] = into[rbacv1.Role](u).Rules
		case "ClusterRole":
			out["ClusterRole "+u.GetName()] = into[rbacv1.ClusterRole](u).Rules
		}
	}
	return out
}

// grants tells whether any rule allows verb on resource in group, and on
// which resourceNames (nil for all).
func grants(rules []rbacv1.PolicyRule, group, resource, verb string) (bool, []string) {
	for _, r := range rules {
		if slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb) {
			return true, r.ResourceNames
		}
	}
	return false, nil
}

// expandArgs resolves $(VAR) references to the container's downward API
// environment, as the kubelet does, for a pod in namespace.
func expandArgs(c corev1.Container, namespace string) []string {
	vars := map[string]string{}
	for _, e := range c.Env {
		if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace" {
			vars[e.Name] = namespace
		} else if e.ValueFrom == nil {
			vars[e.Name] = e.Value
		}
	}
	out := make([]string, len(c.Args))
	for i, a := range c.Args {
		for k, v := range vars {
			a = strings.ReplaceAll(a, "$("+k+")", v)
		}
		out[i] = a
	}
	return out
}

// diffLines is a small line diff for a failure message: the first lines
// that differ, with their numbers.
func diffLines(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b bytes.Buffer
	shown := 0
	for i := 0; i < max(len(w), len(g)) && shown < 20; i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			fmt.Fprintf(&b, "line %d:\n  golden: %q\n  render: %q\n", i+1, wl, gl)
			shown++
		}
	}
	return b.String()
}
