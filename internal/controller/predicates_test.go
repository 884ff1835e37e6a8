package controller

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/ripple-controller/ripple/internal/annotations"
	"github.com/ripple-controller/ripple/internal/options"
	"github.com/ripple-controller/ripple/internal/workload"
)

func TestEqualExceptIgnoresOnlyThoseKeys(t *testing.T) {
	const key, also = "skip", "also"
	tests := []struct {
		name string
		a, b map[string]string
		want bool
	}{
		{"both missing", nil, map[string]string{}, true},
		{"the same", map[string]string{"a": "1"}, map[string]string{"a": "1"}, true},
		{"only the key differs", map[string]string{"a": "1", key: "x"}, map[string]string{"a": "1", key: "y"}, true},
		{"the key on one side only", map[string]string{key: "x"}, nil, true},
		{"another value differs", map[string]string{"a": "1", key: "x"}, map[string]string{"a": "2", key: "x"}, false},
		{"another key added", map[string]string{"a": "1"}, map[string]string{"a": "1", "b": "2"}, false},
		{"the key traded for another", map[string]string{"a": "1", key: "x"}, map[string]string{"a": "1", "b": "x"}, false},
		{"another key traded for the key", map[string]string{"a": "1", "b": "2"}, map[string]string{"a": "1", key: "2"}, false},
		{"both keys differ", map[string]string{"a": "1", key: "x", also: "x"}, map[string]string{"a": "1", key: "y", also: "y"}, true},
		{"one key traded for the other", map[string]string{"a": "1", key: "x"}, map[string]string{"a": "1", also: "x"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := equalExcept(tt.a, tt.b, key, also); got != tt.want {
				t.Errorf("equalExcept(%v, %v) = %v, want %v", tt.a, tt.b, got, tt.want)
			}
			if got := equalExcept(tt.b, tt.a, key, also); got != tt.want {
				t.Errorf("equalExcept(%v, %v) = %v, want %v", tt.b, tt.a, got, tt.want)
			}
		})
	}
}

func TestTemplateChangedPassesTemplateChangesOnly(t *testing.T) {
	deployments, _ := workload.ByPlural("deployments")
	deployment := func(uid types.UID, gen int64, volume string) *appsv1.Deployment {
		d := &appsv1.Deployment{}
		d.UID, d.Generation = uid, gen
		d.Spec.Template.Spec.Volumes = []corev1.Volume{{Name: volume}}
		return d
	}
	tests := []struct {
		name     string
		old, new *appsv1.Deployment
		passes   bool
	}{
		{"a status update", deployment("a", 3, "cfg"), deployment("a", 3, "cfg"), false},
		{"a new generation with the same template (replicas)", deployment("a", 3, "cfg"), deployment("a", 4, "cfg"), false},
		{"a new generation with another template", deployment("a", 3, "cfg"), deployment("a", 4, "other"), true},
		{"a recreation at the same generation, seen as an update after a relist", deployment("a", 1, "cfg"), deployment("b", 1, "other"), true},
		{"no generation known", deployment("a", 0, "cfg"), deployment("a", 0, "other"), true},
		{"a new generation whose template only writes a quantity otherwise", sized(deployment("a", 3, "cfg"), "1"), sized(deployment("a", 4, "cfg"), "1000m"), false},
		{"a new generation with another quantity", sized(deployment("a", 3, "cfg"), "1"), sized(deployment("a", 4, "cfg"), "2"), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := templateChanged(deployments).Update(event.UpdateEvent{ObjectOld: tt.old, ObjectNew: tt.new}); got != tt.passes {
				t.Errorf("passes = %v, want %v", got, tt.passes)
			}
		})
	}
}

// sized gives the Deployment's first volume an emptyDir of that size.
func sized(d *appsv1.Deployment, size string) *appsv1.Deployment {
	q := resource.MustParse(size)
	d.Spec.Template.Spec.Volumes[0].EmptyDir = &corev1.EmptyDirVolumeSource{SizeLimit: &q}
	return d
}

func TestSemanticallyEqualAgreesWithTheSemanticComparison(t *testing.T) {
	spec := func(env []corev1.EnvVar, size string) *corev1.PodSpec {
		q := resource.MustParse(size)
		return &corev1.PodSpec{
			Volumes:    []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: &q}}}},
			Containers: []corev1.Container{{Name: "app", Env: env}},
		}
	}
	one := []corev1.EnvVar{{Name: "A", Value: "1"}}
	tests := []struct {
		name string
		a, b *corev1.PodSpec
		want bool
	}{
		{"identical", spec(one, "1"), spec(one, "1"), true},
		{"a quantity written otherwise", spec(one, "1"), spec(one, "1000m"), true},
		{"no env and an empty env", spec(nil, "1"), spec([]corev1.EnvVar{}, "1"), true},
		{"another env value", spec(one, "1"), spec([]corev1.EnvVar{{Name: "A", Value: "2"}}, "1"), false},
		{"another quantity", spec(one, "1"), spec(one, "2"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := semanticallyEqual(tt.a, tt.b)
			if semantic := equality.Semantic.DeepEqual(tt.a, tt.b); got != semantic || got != tt.want {
				t.Errorf("semanticallyEqual = %v, equality.Semantic.DeepEqual = %v, want both %v", got, semantic, tt.want)
			}
		})
	}
}

func TestInputsChangedPassesOnlyWhatReconcileReads(t *testing.T) {
	deployments, _ := workload.ByPlural("deployments")
	opts := &options.Options{Keys: annotations.DefaultKeys(), ReloadStrategy: workload.StampAnnotations}
	r := &Reconciler{Type: deployments, Opts: opts, views: newViews(deployments, opts), own: newOwnWrites()}
	deployment := func(version string, gen int64, digest, size string, env []corev1.EnvVar) *appsv1.Deployment {
		d := &appsv1.Deployment{}
		d.Spec.Template.Spec.Volumes = []corev1.Volume{{Name: "cfg"}}
		d = sized(d, size)
		d.UID, d.ResourceVersion, d.Generation = "a", version, gen
		d.Annotations = map[string]string{annotations.Recorded: (record{keyID: "k", at: gen}).encode()}
		d.Spec.Template.Annotations = map[string]string{annotations.ConfigDigest: digest}
		d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "app", Env: env}}
		return d
	}
	one := []corev1.EnvVar{{Name: "A", Value: "1"}}
	tests := []struct {
		name     string
		old, new *appsv1.Deployment
		passes   bool
	}{
		{"a status update", deployment("1", 3, "d1", "1", one), deployment("2", 3, "d1", "1", one), false},
		{"ripple's own rollout: its digest and record", deployment("1", 3, "d1", "1", one), deployment("2", 4, "d2", "1", one), false},
		{"a new generation whose spec only writes a quantity otherwise", deployment("1", 3, "d1", "1", one), deployment("2", 4, "d1", "1000m", one), false},
		{"a new generation whose spec drops an empty env", deployment("1", 3, "d1", "1", []corev1.EnvVar{}), deployment("2", 4, "d1", "1", nil), false},
		{"another env value", deployment("1", 3, "d1", "1", one), deployment("2", 4, "d1", "1", []corev1.EnvVar{{Name: "A", Value: "2"}}), true},
		{"another quantity", deployment("1", 3, "d1", "1", one), deployment("2", 4, "d1", "2", one), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := r.inputsChanged().Update(event.UpdateEvent{ObjectOld: tt.old, ObjectNew: tt.new}); got != tt.passes {
				t.Errorf("passes = %v, want %v", got, tt.passes)
			}
		})
	}
}
