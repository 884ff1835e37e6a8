package controller

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestEqualExceptIgnoresOnlyThatKey(t *testing.T) {
	const key = "skip"
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
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := equalExcept(tt.a, tt.b, key); got != tt.want {
				t.Errorf("equalExcept(%v, %v) = %v, want %v", tt.a, tt.b, got, tt.want)
			}
			if got := equalExcept(tt.b, tt.a, key); got != tt.want {
				t.Errorf("equalExcept(%v, %v) = %v, want %v", tt.b, tt.a, got, tt.want)
			}
		})
	}
}

func TestSameEncodingTellsPodSpecsApartAsSemanticEqualityDoes(t *testing.T) {
	spec := func(edit func(*corev1.PodSpec)) *corev1.PodSpec {
		s := &corev1.PodSpec{Containers: []corev1.Container{{
			Name:      "app",
			Env:       []corev1.EnvVar{{Name: "A", Value: "1"}},
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")}},
		}}}
		if edit != nil {
			edit(s)
		}
		return s
	}
	tests := []struct {
		name string
		a, b *corev1.PodSpec
		want bool
	}{
		{"the same spec", spec(nil), spec(nil), true},
		{"a quantity written otherwise", spec(nil), spec(func(s *corev1.PodSpec) {
			s.Containers[0].Resources.Limits[corev1.ResourceCPU] = resource.MustParse("1000m")
		}), true},
		{"an empty list for a missing one", spec(nil), spec(func(s *corev1.PodSpec) { s.Volumes = []corev1.Volume{} }), true},
		{"an env value changed", spec(nil), spec(func(s *corev1.PodSpec) { s.Containers[0].Env[0].Value = "2" }), false},
		{"a volume added", spec(nil), spec(func(s *corev1.PodSpec) {
			s.Volumes = []corev1.Volume{{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{}}}}
		}), false},
		{"an optional flag set to its default", spec(func(s *corev1.PodSpec) {
			s.Containers[0].EnvFrom = []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{}}}
		}), spec(func(s *corev1.PodSpec) {
			f := false
			s.Containers[0].EnvFrom = []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{Optional: &f}}}
		}), false},
		{"a spec and none", spec(nil), nil, false},
		{"no spec on either side", nil, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := sameEncoding(tt.a, tt.b); got != tt.want {
				t.Errorf("sameEncoding = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSameSpecTrustsOnlyAKnownGeneration(t *testing.T) {
	at := func(gen int64) *appsv1.Deployment {
		d := &appsv1.Deployment{}
		d.Generation = gen
		return d
	}
	tests := []struct {
		name   string
		a, b   int64
		expect bool
	}{
		{"the same generation: a status update", 3, 3, true},
		{"a new generation: the spec changed", 3, 4, false},
		{"no generation known", 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := sameSpec(at(tt.a), at(tt.b)); got != tt.expect {
				t.Errorf("sameSpec(%d, %d) = %v, want %v", tt.a, tt.b, got, tt.expect)
			}
		})
	}
}
