package controller

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ripple-controller/ripple/internal/annotations"
	"github.com/ripple-controller/ripple/internal/options"
	"github.com/ripple-controller/ripple/internal/workload"
)

func deployment(version string, ann map[string]string, volumes ...string) *appsv1.Deployment {
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "app", UID: "uid-1", ResourceVersion: version, Annotations: ann}}
	for _, v := range volumes {
		d.Spec.Template.Spec.Volumes = append(d.Spec.Template.Spec.Volumes, corev1.Volume{Name: v,
			VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: v}}}})
	}
	return d
}

func deploymentViews(t *testing.T) *views {
	t.Helper()
	typ, ok := workload.ByPlural("deployments")
	if !ok {
		t.Fatal("no deployments type")
	}
	return newViews(typ, &options.Options{Keys: annotations.DefaultKeys(), ReloadStrategy: workload.StampAnnotations})
}

func TestViews_OneViewPerWorkloadVersion(t *testing.T) {
	vs := deploymentViews(t)
	auto := map[string]string{"reloader.stakater.com/auto": "true"}
	first := vs.of(deployment("1", auto, "cfg"))
	if again := vs.of(deployment("1", auto, "cfg")); again != first {
		t.Errorf("the same version got a second view")
	}
	next := vs.of(deployment("2", auto, "cfg", "other"))
	if next == first {
		t.Fatalf("a new version kept the old view")
	}
	if got := slices.Sorted(slices.Values(vs.indexValues(deployment("2", auto, "cfg", "other")))); !slices.Equal(got, []string{"ConfigMap/ns/cfg", "ConfigMap/ns/other"}) {
		t.Errorf("index keys of the new version = %v", got)
	}
	if vs.of(&appsv1.StatefulSet{}) != nil {
		t.Errorf("an object of another type got a view")
	}
}

func TestView_WhatMakesAWorkloadInteresting(t *testing.T) {
	cases := []struct {
		name        string
		ann         map[string]string
		interesting bool
		ownRecord   bool
	}{
		{"no annotations", nil, false, false},
		{"opted in", map[string]string{"reloader.stakater.com/auto": "true"}, true, false},
		{"a mistake to report", map[string]string{"reloader.stakater.com/auto": "maybe"}, true, false},
		{"recorded by ripple", map[string]string{annotations.Recorded: "key=k;at=100;ConfigMap/cfg=aa"}, true, true},
		{"a record ripple cannot read", map[string]string{annotations.Recorded: "garbage"}, true, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := deploymentViews(t).of(deployment("1", c.ann, "cfg"))
			if v.interesting() != c.interesting || v.ownRecord() != c.ownRecord {
				t.Errorf("interesting, ownRecord = %v, %v; want %v, %v", v.interesting(), v.ownRecord(), c.interesting, c.ownRecord)
			}
		})
	}
}

func TestViews_ARolloutWithWorkloadRefIsIndexedForEveryObjectItMayTrack(t *testing.T) {
	typ, ok := workload.ByPlural("rollouts")
	if !ok {
		t.Fatal("no rollouts type")
	}
	ref := &workload.RolloutRef{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}
	cases := []struct {
		name          string
		ann           map[string]string
		ref           *workload.RolloutRef
		keys          []string
		templateRef   string
		unfollowable  bool
		strategy      string
		problemsCount int
	}{
		{"own template", map[string]string{annotations.Auto: "true"}, nil, []string{"ConfigMap/ns/cfg"}, "", false, workload.RolloutTemplate, 0},
		{"workloadRef, auto", map[string]string{annotations.Auto: "true"}, ref, []string{"ConfigMap/ns/*", "Secret/ns/*"}, "web", false, workload.RolloutTemplate, 0},
		{"workloadRef, ConfigMaps only", map[string]string{annotations.ConfigMapAuto: "true"}, ref, []string{"ConfigMap/ns/*"}, "web", false, workload.RolloutTemplate, 0},
		{"workloadRef, a reload list", map[string]string{annotations.SecretReload: "db"}, ref, []string{"Secret/ns/db"}, "web", false, workload.RolloutTemplate, 0},
		{"workloadRef, not opted in", nil, ref, nil, "web", false, workload.RolloutTemplate, 0},
		{"workloadRef to a ReplicaSet", map[string]string{annotations.Auto: "true"}, &workload.RolloutRef{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web"},
			nil, "", true, workload.RolloutTemplate, 0},
		{"restart strategy", map[string]string{annotations.Auto: "true", annotations.RolloutStrategy: "restart"}, nil, []string{"ConfigMap/ns/cfg"}, "", false, workload.RolloutRestart, 0},
		{"unknown strategy", map[string]string{annotations.Auto: "true", annotations.RolloutStrategy: "blue-green"}, nil, []string{"ConfigMap/ns/cfg"}, "", false, workload.RolloutTemplate, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ro := &workload.Rollout{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "uid", ResourceVersion: "1", Annotations: c.ann}}
			if c.ref != nil {
				ro.Spec.WorkloadRef = c.ref
			} else {
				ro.Spec.Template.Spec.Volumes = []corev1.Volume{{Name: "cfg", VolumeSource: corev1.VolumeSource{
					ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}}}
			}
			vs := newViews(typ, &options.Options{Keys: annotations.DefaultKeys(), ReloadStrategy: workload.StampAnnotations})
			v := vs.of(ro)
			if got := slices.Sorted(slices.Values(vs.indexValues(ro))); !slices.Equal(got, c.keys) {
				t.Errorf("index keys = %v, want %v", got, c.keys)
			}
			if v.templateRef != c.templateRef || (v.unfollowable != "") != c.unfollowable {
				t.Errorf("templateRef, unfollowable = %q, %q", v.templateRef, v.unfollowable)
			}
			var want []string
			if c.templateRef != "" {
				want = []string{c.templateRef}
			}
			if got := vs.templateRefValues(ro); !slices.Equal(got, want) {
				t.Errorf("template reference index = %v, want %v", got, want)
			}
			if v.strategy != c.strategy || len(v.policy.Problems) != c.problemsCount {
				t.Errorf("strategy %q with %d problems, want %q with %d", v.strategy, len(v.policy.Problems), c.strategy, c.problemsCount)
			}
		})
	}
}

// A workload whose record or pod spec names more objects than the index
// takes is indexed by pattern for each kind it names: it is still queued by
// a change of any of them, and the index does not grow with the names.
func TestViews_AWorkloadNamingTooManyObjectsIsIndexedByPattern(t *testing.T) {
	many := func(kind string, n int) string {
		var b strings.Builder
		b.WriteString("key=k;at=100")
		for i := range n {
			fmt.Fprintf(&b, ";%s/cm%d=aa", kind, i)
		}
		return b.String()
	}
	cases := []struct {
		name    string
		ann     map[string]string
		volumes []string
		keys    []string
	}{
		{"a record within the bound", map[string]string{annotations.Recorded: many("Secret", maxIndexKeys-1)}, []string{"cfg"}, nil},
		{"a record past the bound", map[string]string{annotations.Recorded: many("Secret", maxIndexKeys)}, []string{"cfg"}, []string{"ConfigMap/ns/*", "Secret/ns/*"}},
		{"auto over a pod spec past the bound", map[string]string{annotations.Auto: "true"}, volumeNames(maxIndexKeys + 1), []string{"ConfigMap/ns/*"}},
		{"a record naming the objects of the pod spec again, within the bound", map[string]string{annotations.Recorded: many("ConfigMap", maxIndexKeys)},
			volumeNames(maxIndexKeys), nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.ann[annotations.Auto] = "true"
			vs := deploymentViews(t)
			got := vs.indexValues(deployment("1", c.ann, c.volumes...))
			if c.keys == nil {
				if len(got) != maxIndexKeys || slices.ContainsFunc(got, func(k string) bool { return strings.HasSuffix(k, "/*") }) {
					t.Errorf("got %d keys, want every name, %d", len(got), maxIndexKeys)
				}
				return
			}
			if slices.Sort(got); !slices.Equal(got, c.keys) {
				t.Errorf("index keys = %v (%d), want %v", got[:min(len(got), 4)], len(got), c.keys)
			}
		})
	}
}

func volumeNames(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("cm%d", i)
	}
	return out
}
