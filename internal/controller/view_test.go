package controller

import (
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ripple-controller/ripple/internal/annotations"
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
	return newViews(typ, annotations.DefaultKeys(), false, "")
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
