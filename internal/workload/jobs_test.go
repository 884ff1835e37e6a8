package workload

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	"github.com/ripple-controller/ripple/internal/annotations"
)

const id = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestReloadJobName_SaysWhyAndIsAValidJobName(t *testing.T) {
	indexed := func(completions int32) batchv1.JobSpec {
		return batchv1.JobSpec{CompletionMode: ptr.To(batchv1.IndexedCompletion), Completions: ptr.To(completions)}
	}
	cases := []struct {
		cronJob string
		spec    batchv1.JobSpec
		want    string
	}{
		{"nightly", batchv1.JobSpec{}, "nightly-reload-01234567"},
		{strings.Repeat("a", 52), batchv1.JobSpec{}, strings.Repeat("a", 47) + "-reload-01234567"},
		{strings.Repeat("a", 46) + ".b", batchv1.JobSpec{}, strings.Repeat("a", 46) + "-reload-01234567"},
		{strings.Repeat("a", 52), indexed(2), strings.Repeat("a", 45) + "-reload-01234567"},
		{strings.Repeat("a", 52), indexed(11), strings.Repeat("a", 44) + "-reload-01234567"},
		{"nightly", indexed(2), "nightly-reload-01234567"},
	}
	for _, c := range cases {
		cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: c.cronJob},
			Spec: batchv1.CronJobSpec{JobTemplate: batchv1.JobTemplateSpec{Spec: c.spec}}}
		got := reloadJobName(cj, id)
		if got != c.want {
			t.Errorf("reloadJobName(%q) = %q, want %q", c.cronJob, got, c.want)
		}
		if errs := validation.IsDNS1123Subdomain(got); len(errs) > 0 {
			t.Errorf("%q is not a valid Job name: %v", got, errs)
		}
		if errs := validation.IsValidLabelValue(got); len(errs) > 0 {
			t.Errorf("%q cannot be the job-name label: %v", got, errs)
		}
		if c.spec.Completions != nil {
			// As the API server checks an Indexed Job: its last pod's host name.
			host := fmt.Sprintf("%s-%d", got, *c.spec.Completions-1)
			if errs := validation.IsDNS1123Label(host); len(errs) > 0 {
				t.Errorf("%q cannot be an Indexed pod's host name: %v", host, errs)
			}
		}
	}
}

func TestJobFrom_RunsTheJobTemplateOwnedByTheCronJob(t *testing.T) {
	cj := &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: "ns", UID: "cj-uid"},
		Spec: batchv1.CronJobSpec{JobTemplate: batchv1.JobTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"team": "a"}, Annotations: map[string]string{"note": "x"}},
			Spec:       batchv1.JobSpec{BackoffLimit: ptr.To[int32](2)},
		}},
	}
	job := jobFrom(cj, pendingRun{Job: reloadJobName(cj, id), Stamp: "k:1:d", Cause: "ConfigMap/app"})

	if job.Name != "nightly-reload-01234567" || job.Namespace != "ns" {
		t.Errorf("Job %s/%s", job.Namespace, job.Name)
	}
	owner := metav1.GetControllerOf(job)
	if owner == nil || owner.Kind != "CronJob" || owner.UID != "cj-uid" {
		t.Errorf("controller = %+v, want the CronJob", owner)
	}
	want := map[string]string{"note": "x", "cronjob.kubernetes.io/instantiate": "manual", annotations.ReloadCause: "ConfigMap/app"}
	for k, v := range want {
		if job.Annotations[k] != v {
			t.Errorf("annotation %s = %q, want %q", k, job.Annotations[k], v)
		}
	}
	if job.Labels["team"] != "a" || *job.Spec.BackoffLimit != 2 {
		t.Errorf("the jobTemplate's labels or spec were not copied: %+v", job)
	}
	if job.Spec.Template.Annotations[annotations.ConfigDigest] != "k:1:d" {
		t.Errorf("the pod template carries no stamp")
	}
	if len(cj.Spec.JobTemplate.Annotations) != 1 || cj.Spec.JobTemplate.Spec.Template.Annotations != nil {
		t.Errorf("the CronJob was changed: %+v", cj.Spec.JobTemplate)
	}
}

func TestRecreated_KeepsTheSpecAndDropsWhatTheAPIServerGenerated(t *testing.T) {
	generated := map[string]string{"controller-uid": "u", batchv1.ControllerUidLabel: "u", "job-name": "migrate", batchv1.JobNameLabel: "migrate", "app": "db"}
	old := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "migrate", Namespace: "ns", UID: "u", ResourceVersion: "9",
			Labels:      generated,
			Annotations: map[string]string{annotations.Recreate: "{}", annotations.Recorded: "rec", "note": "x"},
			Finalizers:  []string{annotations.Recreate},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "example.com/v1", Kind: "Migration", Name: "m", UID: "mu",
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}},
		Spec: batchv1.JobSpec{
			Selector:       &metav1.LabelSelector{MatchLabels: map[string]string{batchv1.ControllerUidLabel: "u"}},
			ManualSelector: ptr.To(false),
			BackoffLimit:   ptr.To[int32](4),
			Template:       corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: generated}},
		},
		Status: batchv1.JobStatus{Active: 1},
	}
	job := recreated(old, pendingJob{Stamp: "k:1:d", Cause: "Secret/db"})

	if job.Name != "migrate" || job.UID != "" || job.ResourceVersion != "" || len(job.Finalizers) != 0 || job.Status.Active != 0 {
		t.Errorf("the new Job carries the old one's identity: %+v", job.ObjectMeta)
	}
	if job.Spec.Selector != nil || job.Spec.ManualSelector != nil || *job.Spec.BackoffLimit != 4 {
		t.Errorf("spec = %+v", job.Spec)
	}
	for _, labels := range []map[string]string{job.Labels, job.Spec.Template.Labels} {
		if len(labels) != 1 || labels["app"] != "db" {
			t.Errorf("labels = %v, want only app=db", labels)
		}
	}
	if _, ok := job.Annotations[annotations.Recreate]; ok || job.Annotations[annotations.Recorded] != "rec" ||
		job.Annotations[annotations.ReloadCause] != "Secret/db" {
		t.Errorf("annotations = %v", job.Annotations)
	}
	if job.Spec.Template.Annotations[annotations.ConfigDigest] != "k:1:d" {
		t.Errorf("the pod template carries no stamp")
	}
	// Setting blockOwnerDeletion needs update on the owner's finalizers,
	// which ripple has not, where OwnerReferencesPermissionEnforcement is on.
	if refs := job.OwnerReferences; len(refs) != 1 || refs[0].UID != "mu" || !*refs[0].Controller || refs[0].BlockOwnerDeletion != nil {
		t.Errorf("owner references = %+v, want the old ones, blocking no deletion", refs)
	}
	if old.Labels["job-name"] != "migrate" || old.Spec.Selector == nil || !*old.OwnerReferences[0].BlockOwnerDeletion {
		t.Errorf("the old Job was changed")
	}
}

func TestRecreated_CarriesTheEnvVarsStrategysVariablesInsteadOfTheStamp(t *testing.T) {
	old := func() *batchv1.Job {
		return &batchv1.Job{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "app", Env: []corev1.EnvVar{{Name: "STAKATER_DB_SECRET", Value: "sha1"}}}}}}}}
	}
	for _, tc := range []struct {
		name      string
		env       []EnvVar
		wantEnv   []corev1.EnvVar
		wantStamp bool
	}{
		{"variables set and taken over",
			[]EnvVar{{Container: "app", Name: "STAKATER_CFG_CONFIGMAP", Value: "s"}, {Container: "app", Name: "STAKATER_DB_SECRET", Value: "s"}},
			[]corev1.EnvVar{{Name: "STAKATER_DB_SECRET", Value: "s"}, {Name: "STAKATER_CFG_CONFIGMAP", Value: "s"}}, false},
		{"no variables: the stamp", nil, []corev1.EnvVar{{Name: "STAKATER_DB_SECRET", Value: "sha1"}}, true},
		{"a container gone from a mangled annotation: the stamp",
			[]EnvVar{{Container: "gone", Name: "STAKATER_CFG_CONFIGMAP", Value: "s"}},
			[]corev1.EnvVar{{Name: "STAKATER_DB_SECRET", Value: "sha1"}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prev := old()
			job := recreated(prev, pendingJob{Stamp: "k:1:d", Env: tc.env})
			if got := job.Spec.Template.Spec.Containers[0].Env; !equality.Semantic.DeepEqual(got, tc.wantEnv) {
				t.Errorf("env = %v, want %v", got, tc.wantEnv)
			}
			if _, stamped := job.Spec.Template.Annotations[annotations.ConfigDigest]; stamped != tc.wantStamp {
				t.Errorf("stamp annotation present = %v, want %v", stamped, tc.wantStamp)
			}
			if prev.Spec.Template.Spec.Containers[0].Env[0].Value != "sha1" {
				t.Errorf("the old Job was changed")
			}
		})
	}
}

func TestJobTemplate_LeavesACronJobsJobToTheCronJob(t *testing.T) {
	jobs, _ := ByPlural("jobs")
	cases := []struct {
		name   string
		owners []metav1.OwnerReference
		want   bool
	}{
		{"no owner", nil, true},
		{"controlled by a CronJob", []metav1.OwnerReference{{Kind: "CronJob", Name: "c", Controller: ptr.To(true)}}, false},
		{"owned, not controlled, by a CronJob", []metav1.OwnerReference{{Kind: "CronJob", Name: "c"}}, true},
		{"controlled by something else", []metav1.OwnerReference{{Kind: "Workflow", Name: "w", Controller: ptr.To(true)}}, true},
	}
	for _, c := range cases {
		job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{OwnerReferences: c.owners}}
		if got := jobs.Template(job) != nil; got != c.want {
			t.Errorf("%s: has a template = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestJobCompleted_ACompleteOrSuccessCriteriaMetConditionCounts(t *testing.T) {
	cases := []struct {
		name       string
		conditions []batchv1.JobCondition
		want       bool
	}{
		{"running", nil, false},
		{"complete", []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}, true},
		{"succeeded, its last pods terminating", []batchv1.JobCondition{{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue}}, true},
		{"failed is run again", []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue}}, false},
		{"complete false", []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionFalse}}, false},
	}
	for _, c := range cases {
		if got := jobCompleted(&batchv1.Job{Status: batchv1.JobStatus{Conditions: c.conditions}}); got != c.want {
			t.Errorf("%s: completed = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestFullByTheOldJob_LetsOnlyAQuotaOfJobsTheOldOneFillsThrough(t *testing.T) {
	jobs := schema.GroupResource{Group: "batch", Resource: "jobs"}
	forbidden := func(msg string) error { return apierrors.NewForbidden(jobs, "migrate", errors.New(msg)) }
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"a quota of Jobs the old one fills", forbidden("exceeded quota: one-job, requested: count/jobs.batch=1, used: count/jobs.batch=1, limited: count/jobs.batch=1"), true},
		{"a quota of Jobs others fill too", forbidden("exceeded quota: q, requested: count/jobs.batch=1, used: count/jobs.batch=3, limited: count/jobs.batch=3"), true},
		{"a quota of no Jobs at all", forbidden("exceeded quota: none, requested: count/jobs.batch=1, used: count/jobs.batch=1, limited: count/jobs.batch=0"), false},
		{"a quota of other resources too", forbidden("exceeded quota: q, requested: count/jobs.batch=1,count/pods=1, used: count/jobs.batch=1,count/pods=1, limited: count/jobs.batch=1,count/pods=1"), false},
		{"a policy that words its refusal like a quota", forbidden("denied: exceeded quota of good ideas"), false},
		{"a policy's refusal", forbidden("ValidatingAdmissionPolicy 'p' denied request: frozen"), false},
		{"not a refusal", apierrors.NewInternalError(errors.New("exceeded quota: q, requested: count/jobs.batch=1, used: count/jobs.batch=1, limited: count/jobs.batch=1")), false},
		{"no error", nil, false},
	}
	for _, c := range cases {
		if got := fullByTheOldJob(c.err); got != c.want {
			t.Errorf("%s: fullByTheOldJob = %v, want %v", c.name, got, c.want)
		}
	}
}

// A Job name of ripple's too long for its CronJob, which an earlier ripple
// wrote for an Indexed CronJob, is fitted to it, the change's ID kept; any
// other name is left as it is.
func TestRefit_FitsAnOldJobNameOfRipplesToItsCronJob(t *testing.T) {
	long := strings.Repeat("a", 52)
	indexed := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: long}, Spec: batchv1.CronJobSpec{JobTemplate: batchv1.JobTemplateSpec{
		Spec: batchv1.JobSpec{CompletionMode: ptr.To(batchv1.IndexedCompletion), Completions: ptr.To[int32](2)}}}}
	tests := []struct{ name, job, want string }{
		{"an earlier ripple's name", long[:47] + "-reload-0123abcd", long[:45] + "-reload-0123abcd"},
		{"a name that fits", long[:45] + "-reload-0123abcd", long[:45] + "-reload-0123abcd"},
		{"a name not ripple's", long[:47] + "-reload-xyz", long[:47] + "-reload-xyz"},
		{"none", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := refit(indexed, tt.job); got != tt.want {
				t.Errorf("refit(%q) = %q, want %q", tt.job, got, tt.want)
			}
		})
	}
}

// A cause written by hand into a run's or a recreation's annotation reaches
// logs, alerts, Events and the new Job only in the form ripple writes: a
// chat mention or a link would be posted as if ripple had said it.
func TestDecode_ReadsBackOnlyACauseOfTheFormRippleWrites(t *testing.T) {
	decoders := []struct {
		name  string
		cause func(raw string) string
	}{
		{"a CronJob's run", func(raw string) string { run, _ := decodeRun(raw); return run.Cause }},
		{"a Job's recreation", func(raw string) string { return decodeJob(raw).Cause }},
	}
	causes := []struct {
		cause string
		kept  bool
	}{
		{"ConfigMap/cfg", true},
		{"ConfigMap/app-config, Secret/db.creds, SecretProviderClass/vault", true},
		{"ConfigMap/cfg (keys a.yaml, B_2, and-3 and 12 more), Secret/s, and 4 more", true},
		{"a ConfigMap of record bucket #07", true},
		{"the config the pods run (the record predates the workload): ConfigMap/a, Secret/b", true},
		{"ConfigMap/a (since the workload's creation)", true},
		{"the config the pods run (the record was lost): no object it tracks now", true},
		{"Secret/b (since a record under another key)", true},
		{"<!channel> URGENT: re-enter your credentials at <https://evil.example|the SSO portal>", false},
		{"ConfigMap/cfg <@U123>", false},
		{"ConfigMap cfg", false},
		{"ConfigMap/" + strings.Repeat("x", 1100), false},
		{"", false},
	}
	for _, d := range decoders {
		for _, c := range causes {
			t.Run(d.name+"/"+c.cause[:min(len(c.cause), 40)], func(t *testing.T) {
				raw, _ := json.Marshal(map[string]string{"job": "x-reload-deadbeef", "stamp": "s", "cause": c.cause})
				want := unnamedCause
				if c.kept {
					want = c.cause
				}
				if got := d.cause(string(raw)); got != want {
					t.Errorf("cause = %q, want %q", got, want)
				}
			})
		}
	}
}

// Variables written by hand into a recreation's annotation would set what
// the new Job's pods run with, which the Job's template does not let
// anyone change: only ripple's are read back.
func TestDecodeJob_ReadsBackOnlyRipplesVariables(t *testing.T) {
	raw := `{"stamp":"k:1:d","cause":"ConfigMap/cfg","env":[` +
		`{"Container":"app","Name":"STAKATER_CFG_CONFIGMAP","Value":"k:1:d"},` +
		`{"Container":"app","Name":"LD_PRELOAD","Value":"k:1:d"},` +
		`{"Container":"app","Name":"STAKATER_DB_SECRET","Value":"other"}]}`
	got := decodeJob(raw).Env
	if len(got) != 1 || got[0].Name != "STAKATER_CFG_CONFIGMAP" {
		t.Errorf("env = %+v, want ripple's variable alone", got)
	}
}
