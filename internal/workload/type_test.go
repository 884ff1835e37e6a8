package workload

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func TestAll_HasEveryWorkloadKind(t *testing.T) {
	want := map[string][]string{
		"Deployment":  {"deployments", "spec.template"},
		"StatefulSet": {"statefulsets", "spec.template"},
		"DaemonSet":   {"daemonsets", "spec.template"},
		"CronJob":     {"cronjobs", "spec.jobTemplate.spec.template"},
		"Job":         {"jobs", "spec.template"},
		"Rollout":     {"rollouts", "spec.template"},
	}
	if len(All) != len(want) {
		t.Fatalf("All has %d kinds, want %d", len(All), len(want))
	}
	for _, k := range All {
		if want[k.Kind][0] != k.Plural {
			t.Errorf("kind %s has plural %q, want %q", k.Kind, k.Plural, want[k.Kind][0])
		}
		if k.New == nil || k.NewList == nil || k.Template == nil {
			t.Errorf("kind %s lacks a constructor or accessor", k.Kind)
			continue
		}
		if got := strings.Join(k.TemplatePath, "."); got != want[k.Kind][1] {
			t.Errorf("kind %s TemplatePath = %v", k.Kind, got)
		}
		if got := reflect.TypeOf(k.New()).Elem().Name(); got != k.Kind {
			t.Errorf("kind %s New() returns a %s", k.Kind, got)
		}
		if got := reflect.TypeOf(k.NewList()).Elem().Name(); got != k.Kind+"List" {
			t.Errorf("kind %s NewList() returns a %s", k.Kind, got)
		}
		if k.New() == k.New() {
			t.Errorf("kind %s New() returns a shared object", k.Kind)
		}
	}
}

func TestByPlural_IsCaseInsensitive(t *testing.T) {
	cases := []struct {
		in   string
		want string
	}{
		{"deployments", "Deployment"},
		{"Deployments", "Deployment"},
		{"STATEFULSETS", "StatefulSet"},
		{"daemonSets", "DaemonSet"},
		{"deployment", ""},
		{"jobs", "Job"},
		{"CronJobs", "CronJob"},
		{"rollouts", "Rollout"},
		{"rollout", ""},
		{"", ""},
		{" deployments", ""},
	}
	for _, c := range cases {
		k, ok := ByPlural(c.in)
		if ok != (c.want != "") || k.Kind != c.want {
			t.Errorf("ByPlural(%q) = %q, %v; want %q", c.in, k.Kind, ok, c.want)
		}
	}
}

func TestTemplate_ReturnsTheObjectsOwnTemplate(t *testing.T) {
	ann := map[string]string{"a": "b"}
	objects := map[string]client.Object{
		"Deployment":  &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Annotations: ann}}}},
		"StatefulSet": &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Annotations: ann}}}},
		"DaemonSet":   &appsv1.DaemonSet{Spec: appsv1.DaemonSetSpec{Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Annotations: ann}}}},
		"Job":         &batchv1.Job{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Annotations: ann}}}},
		"CronJob": &batchv1.CronJob{Spec: batchv1.CronJobSpec{JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Annotations: ann}}}}}},
		"Rollout": &Rollout{Spec: RolloutSpec{Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Annotations: ann}}}},
	}
	for _, k := range All {
		t.Run(k.Kind, func(t *testing.T) {
			obj := objects[k.Kind]
			tmpl := k.Template(obj)
			if tmpl == nil || tmpl.Annotations["a"] != "b" {
				t.Fatalf("Template = %v", tmpl)
			}
			// It is the object's template, not a copy: edits land on the object.
			tmpl.Annotations = map[string]string{"edited": "yes"}
			if again := k.Template(obj); again.Annotations["edited"] != "yes" {
				t.Errorf("Template returned a copy")
			}
			if k.Template(k.New()) == nil {
				t.Errorf("Template of an empty %s is nil", k.Kind)
			}
			for name, other := range objects {
				if name != k.Kind && k.Template(other) != nil {
					t.Errorf("Template of a %s returned a template", name)
				}
			}
		})
	}
}

func patchJSON(t *testing.T, k Type, rv string, meta, tmpl map[string]string) string {
	t.Helper()
	b, err := json.Marshal(k.TemplatePatch(rv, meta, tmpl))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestTemplatePatch_Shape(t *testing.T) {
	k, _ := ByPlural("deployments")
	cases := []struct {
		name       string
		rv         string
		meta, tmpl map[string]string
		want       string
	}{
		{"resourceVersion only", "7", nil, nil,
			`{"metadata":{"resourceVersion":"7"}}`},
		{"empty maps are left out", "7", map[string]string{}, map[string]string{},
			`{"metadata":{"resourceVersion":"7"}}`},
		{"metadata annotations", "8", map[string]string{"ripple.dev/recorded": "key=x;at=1"}, nil,
			`{"metadata":{"annotations":{"ripple.dev/recorded":"key=x;at=1"},"resourceVersion":"8"}}`},
		{"template annotations", "9", nil, map[string]string{"ripple.dev/config-digest": "abc"},
			`{"metadata":{"resourceVersion":"9"},"spec":{"template":{"metadata":{"annotations":{"ripple.dev/config-digest":"abc"}}}}}`},
		{"both", "10", map[string]string{"m": "1"}, map[string]string{"t": "2"},
			`{"metadata":{"annotations":{"m":"1"},"resourceVersion":"10"},"spec":{"template":{"metadata":{"annotations":{"t":"2"}}}}}`},
		{"empty resourceVersion is still sent", "", nil, nil,
			`{"metadata":{"resourceVersion":""}}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := patchJSON(t, k, c.rv, c.meta, c.tmpl); got != c.want {
				t.Errorf("patch = %s\nwant    %s", got, c.want)
			}
		})
	}
}

func TestTemplatePatch_AppliesToEveryKind(t *testing.T) {
	for _, k := range All {
		t.Run(k.Kind, func(t *testing.T) {
			body := patchJSON(t, k, "3", map[string]string{"m": "1"}, map[string]string{"t": "2"})
			obj := k.New()
			if err := json.Unmarshal([]byte(body), obj); err != nil {
				t.Fatalf("the patch does not fit a %s: %v", k.Kind, err)
			}
			if obj.GetResourceVersion() != "3" || obj.GetAnnotations()["m"] != "1" {
				t.Errorf("metadata not set by %s", body)
			}
			if tmpl := k.Template(obj); tmpl.Annotations["t"] != "2" {
				t.Errorf("pod template annotation not set by %s", body)
			}
		})
	}
}

func TestTemplatePatch_PathFollowsTemplatePath(t *testing.T) {
	k := Type{TemplatePath: []string{"spec", "jobTemplate", "spec", "template"}}
	got := patchJSON(t, k, "1", nil, map[string]string{"t": "2"})
	want := `{"metadata":{"resourceVersion":"1"},"spec":{"jobTemplate":{"spec":{"template":{"metadata":{"annotations":{"t":"2"}}}}}}}`
	if got != want {
		t.Errorf("patch = %s\nwant    %s", got, want)
	}
}
