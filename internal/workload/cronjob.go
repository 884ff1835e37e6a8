package workload

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ripple-controller/ripple/internal/annotations"
)

// CronJob strategies: see annotations.CronJobStrategy.
const (
	CronJobRunJob        = "job"
	CronJobStampTemplate = "template"
)

// jobsReadTimeout bounds the read of a CronJob's Jobs: from the API server
// when ripple caches no Jobs, which may not answer.
const jobsReadTimeout = 30 * time.Second

// forbiddenRetry is how often a change waits for a CronJob's running Job
// under concurrencyPolicy Forbid: the CronJob's status, which says when the
// Job ends, is not among the updates that queue a workload.
const forbiddenRetry = 5 * time.Second

func init() {
	t := newType[batchv1.CronJob, batchv1.CronJobList](batchv1.SchemeGroupVersion, "CronJob", "cronjobs",
		func(o *batchv1.CronJob) *corev1.PodTemplateSpec { return &o.Spec.JobTemplate.Spec.Template })
	t.TemplatePath = []string{"spec", "jobTemplate", "spec", "template"}
	t.Strategy = &Strategy{Annotation: annotations.CronJobStrategy, Values: []string{CronJobRunJob, CronJobStampTemplate}, Flag: "cronjob-strategy",
		Untemplated: []string{CronJobRunJob}}
	t.Held = func(obj client.Object, strategy string) string {
		if cj, ok := obj.(*batchv1.CronJob); ok && strategy != CronJobStampTemplate && cj.Spec.Suspend != nil && *cj.Spec.Suspend {
			return "the CronJob is suspended; its next run after it is resumed uses the new config"
		}
		return ""
	}
	t.Roll = func(ctx context.Context, c client.Client, obj client.Object, ch Change) (Result, error) {
		return rollCronJob(ctx, c, t, obj, ch)
	}
	t.Resume = func(ctx context.Context, c client.Client, obj client.Object) (Result, bool, error) {
		return resumeCronJob(ctx, c, t, obj)
	}
	register(t)
}

// pendingRun is the Run annotation's value: the Job to run for a change.
type pendingRun struct {
	Job   string `json:"job"`
	Stamp string `json:"stamp"`
	Cause string `json:"cause"`
}

// rollCronJob runs the CronJob's jobTemplate now, as `kubectl create job
// --from` and Reloader do, unless it is suspended (Reloader issue #822) or
// a run would break its concurrencyPolicy Forbid. The record goes first,
// under the version ripple read, with the Run annotation naming the Job,
// whose name comes from the change: a read older than the last record
// conflicts, and a write the API server refuses, before any Job runs
// (creating the Job first ran it once per stale read, and again at each
// retry of a refused record once the Job was cleaned up). The jobTemplate
// takes the Job's stamp with the record: it says when ripple last ran it,
// which --min-rollout-interval counts from, and what config that run used,
// the evidence a lost record leaves.
func rollCronJob(ctx context.Context, c client.Client, t Type, obj client.Object, ch Change) (Result, error) {
	cj, ok := obj.(*batchv1.CronJob)
	if !ok || ch.Strategy == CronJobStampTemplate {
		err := t.Stamp(ctx, c, obj, ch)
		return Result{Patched: err == nil}, err
	}
	if why := t.Held(obj, ch.Strategy); why != "" {
		// Its next run reads the config as it is now, which the
		// jobTemplate's stamp, that of the last run, does not name: a lost
		// record read against that stamp ran a Job for this change after
		// the CronJob was resumed.
		err := t.Write(ctx, c, obj, map[string]string{annotations.Recorded: ch.Record, annotations.PodsConfigDigest: ch.Stamp})
		return Result{Held: why, Patched: err == nil}, err
	}
	if cj.Spec.ConcurrencyPolicy == batchv1.ForbidConcurrent {
		running, err := jobRunning(ctx, c, cj)
		if err != nil || running {
			return Result{Wait: forbiddenRetry}, err
		}
	}
	run := pendingRun{Job: reloadJobName(cj, ch.ID), Stamp: ch.Stamp, Cause: ch.Cause}
	raw, err := json.Marshal(run)
	if err != nil {
		return Result{}, fmt.Errorf("encoding the Job to run: %w", err)
	}
	body := t.TemplatePatch(cj.ResourceVersion, map[string]string{annotations.Recorded: ch.Record, annotations.Run: string(raw)},
		map[string]string{annotations.ConfigDigest: ch.Stamp})
	if err := t.patch(ctx, c, obj, body); err != nil {
		return Result{}, err
	}
	job, created, err := startRun(ctx, c, t, cj, run)
	if err == nil && !created {
		// The same record and config as a run before: a record written
		// back (a GitOps tool, a restore) makes the same change again.
		return Result{Held: fmt.Sprintf("its Job %s for this change exists already", run.Job), Patched: true}, nil
	}
	res := ran(job, created, ch.Cause)
	res.Patched = true
	return res, err
}

// ran is the Result of a run: the Job only if this call created it, never
// a nil *Job in the interface, which reads as one.
func ran(job *batchv1.Job, created bool, cause string) Result {
	res := Result{Cause: cause}
	if created {
		res.Created = job
	}
	return res
}

// resumeCronJob creates the Job a Run annotation still names: ripple
// stopped, or the API server refused it, after the record was written.
func resumeCronJob(ctx context.Context, c client.Client, t Type, obj client.Object) (Result, bool, error) {
	cj, ok := obj.(*batchv1.CronJob)
	if !ok {
		return Result{}, false, nil
	}
	raw, marked := cj.Annotations[annotations.Run]
	if !marked || cj.DeletionTimestamp != nil {
		// A CronJob being deleted runs nothing more: the garbage collector
		// would kill its Job mid-run, or an orphaning delete leave it.
		return Result{}, false, nil
	}
	run, err := decodeRun(raw)
	original := run.Job
	run.Job = refit(cj, run.Job)
	if err != nil || len(run.Job) > maxJobName(cj) || len(validation.IsDNS1123Subdomain(run.Job)) > 0 {
		// Not ripple's (a hand edit): nothing to run, and the record is
		// written. A Job under such a name would be refused for good.
		return Result{}, true, t.patch(ctx, c, obj, withoutRun())
	}
	exists, running, err := jobsOf(ctx, c, cj, run.Job)
	if err == nil && !exists && original != run.Job {
		// Created under the name it had before its CronJob became
		// Indexed: run once, as any.
		exists, running, err = jobsOf(ctx, c, cj, original)
	}
	switch {
	case err != nil:
		return Result{}, true, err
	case exists:
		// Created before the annotation's removal failed, or before this
		// read of the CronJob caught up with that removal.
		return Result{}, true, t.patch(ctx, c, obj, withoutRun())
	}
	// What holds a run holds this one, as it did before the record.
	if why := t.Held(obj, CronJobRunJob); why != "" {
		return Result{Held: why, Cause: run.Cause}, true, t.patch(ctx, c, obj, withoutRun())
	}
	if running && cj.Spec.ConcurrencyPolicy == batchv1.ForbidConcurrent {
		return Result{Wait: forbiddenRetry}, true, nil
	}
	job, created, err := startRun(ctx, c, t, cj, run)
	return ran(job, created, run.Cause), true, err
}

// decodeRun reads the Run annotation's value.
func decodeRun(raw string) (pendingRun, error) {
	var run pendingRun
	err := json.Unmarshal([]byte(raw), &run)
	run.Cause = readCause(run.Cause)
	return run, err
}

// startRun creates the Job run names, unless it exists, then removes the
// Run annotation; created says this call created it.
func startRun(ctx context.Context, c client.Client, t Type, cj *batchv1.CronJob, run pendingRun) (*batchv1.Job, bool, error) {
	job := jobFrom(cj, run)
	err := c.Create(ctx, job, client.FieldOwner(FieldOwner))
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, false, fmt.Errorf("creating Job %s/%s: %w", job.Namespace, job.Name, err)
	}
	// The client clears it, decoding the answer; the Event names the kind.
	job.SetGroupVersionKind(batchv1.SchemeGroupVersion.WithKind("Job"))
	return job, err == nil, t.patch(ctx, c, cj, withoutRun())
}

func withoutRun() map[string]any {
	return map[string]any{"metadata": map[string]any{"annotations": map[string]any{annotations.Run: nil}}}
}

// jobRunning reports whether a Job of the CronJob has not finished: one
// its controller started, listed in its status, or one started for it
// (ripple's, or kubectl create job --from), which the CronJob controller
// leaves out of its status, only warning that it saw it.
func jobRunning(ctx context.Context, c client.Reader, cj *batchv1.CronJob) (bool, error) {
	if len(cj.Status.Active) > 0 {
		return true, nil
	}
	_, running, err := jobsOf(ctx, c, cj, "")
	return running, err
}

// jobsOf reads the CronJob's Jobs: whether the one named own exists, and
// whether another has not finished (jobRunning).
func jobsOf(ctx context.Context, c client.Reader, cj *batchv1.CronJob, own string) (exists, running bool, err error) {
	running = slices.ContainsFunc(cj.Status.Active, func(ref corev1.ObjectReference) bool { return ref.Name != own })
	ctx, cancel := context.WithTimeout(ctx, jobsReadTimeout)
	defer cancel()
	jobs := &batchv1.JobList{}
	if err := c.List(ctx, jobs, client.InNamespace(cj.Namespace), client.UnsafeDisableDeepCopy); err != nil {
		return false, false, fmt.Errorf("listing the Jobs of CronJob %s/%s: %w", cj.Namespace, cj.Name, err)
	}
	for i := range jobs.Items {
		job := &jobs.Items[i]
		if owner := metav1.GetControllerOfNoCopy(job); owner == nil || owner.UID != cj.UID {
			continue
		}
		if job.Name == own {
			exists = true
		} else if !jobFinished(job) {
			running = true
		}
	}
	return exists, running, nil
}

// jobFrom builds the Job that runs a CronJob's jobTemplate for a change.
func jobFrom(cj *batchv1.CronJob, run pendingRun) *batchv1.Job {
	tmpl := cj.Spec.JobTemplate.DeepCopy()
	ann := maps.Clone(tmpl.Annotations)
	if ann == nil {
		ann = map[string]string{}
	}
	ann["cronjob.kubernetes.io/instantiate"] = "manual"
	ann[annotations.ReloadCause] = run.Cause
	if tmpl.Spec.Template.Annotations == nil {
		tmpl.Spec.Template.Annotations = map[string]string{}
	}
	tmpl.Spec.Template.Annotations[annotations.ConfigDigest] = run.Stamp
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name:            run.Job,
			Namespace:       cj.Namespace,
			Labels:          tmpl.Labels,
			Annotations:     ann,
			OwnerReferences: []metav1.OwnerReference{cronJobOwner(cj)},
		},
		Spec: tmpl.Spec,
	}
	job.SetGroupVersionKind(batchv1.SchemeGroupVersion.WithKind("Job"))
	return job
}

// reloadJobName says why the Job exists: <cronjob>-reload-<change>. A Job's
// name becomes a label value, so it must fit 63 characters.
func reloadJobName(cj *batchv1.CronJob, id string) string {
	const suffix = len("-reload-") + 8
	name := cj.Name
	if limit := maxJobName(cj) - suffix; len(name) > limit {
		// A name cut after a dot would start the next DNS label with "-".
		name = strings.TrimRight(name[:limit], ".")
	}
	return name + "-reload-" + id[:8]
}

// refit gives a Job name of ripple's that is too long for the CronJob its
// current name: one an earlier ripple wrote for an Indexed CronJob, which
// the API server refuses, or one written before its completions grew.
func refit(cj *batchv1.CronJob, job string) string {
	const mark = "-reload-"
	i := strings.LastIndex(job, mark)
	if len(job) <= maxJobName(cj) || i < 0 || len(job)-i != len(mark)+8 {
		return job
	}
	return reloadJobName(cj, job[i+len(mark):])
}

// maxJobName is the longest name the API server admits for a Job of the
// CronJob: 63, the job-name label's limit, less, for an Indexed Job, the
// "-<index>" its pods' host names add to it.
func maxJobName(cj *batchv1.CronJob) int {
	spec := cj.Spec.JobTemplate.Spec
	if spec.CompletionMode == nil || *spec.CompletionMode != batchv1.IndexedCompletion || spec.Completions == nil || *spec.Completions < 1 {
		return 63
	}
	return 63 - len("-") - len(strconv.Itoa(int(*spec.Completions-1)))
}

// cronJobOwner makes the CronJob the Job's controller, as the CronJob
// controller does, so that deleting the CronJob deletes the Job. It does
// not block the owner's deletion, which would need update on cronjobs/
// finalizers where the OwnerReferencesPermissionEnforcement admission
// plugin is on.
func cronJobOwner(cj *batchv1.CronJob) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: batchv1.SchemeGroupVersion.String(), Kind: "CronJob", Name: cj.Name, UID: cj.UID,
		Controller: ptr.To(true)}
}
