package workload

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	t.Strategy = &Strategy{Annotation: annotations.CronJobStrategy, Values: []string{CronJobRunJob, CronJobStampTemplate}, Flag: "cronjob-strategy"}
	t.Held = func(obj client.Object, strategy string) string {
		if cj, ok := obj.(*batchv1.CronJob); ok && strategy != CronJobStampTemplate && cj.Spec.Suspend != nil && *cj.Spec.Suspend {
			return "the CronJob is suspended; its next run after it is resumed uses the new config"
		}
		return ""
	}
	t.Roll = func(ctx context.Context, c client.Client, obj client.Object, ch Change) (Result, error) {
		return rollCronJob(ctx, c, t, obj, ch)
	}
	register(t)
}

// rollCronJob runs the CronJob's jobTemplate now, as `kubectl create job
// --from` and Reloader do, unless it is suspended (Reloader issue #822) or
// a run would break its concurrencyPolicy Forbid. The Job is created before
// the record is written and its name comes from the change, so an attempt
// repeated after a conflict or a restart finds it instead of starting a
// second one. The jobTemplate takes the Job's stamp with the record: it
// says when ripple last ran it, which --min-rollout-interval counts from,
// and what config that run used, the evidence a lost record leaves.
func rollCronJob(ctx context.Context, c client.Client, t Type, obj client.Object, ch Change) (Result, error) {
	cj, ok := obj.(*batchv1.CronJob)
	if !ok || ch.Strategy == CronJobStampTemplate {
		return Result{}, t.Stamp(ctx, c, obj, ch)
	}
	if why := t.Held(obj, ch.Strategy); why != "" {
		return Result{Held: why}, t.Write(ctx, c, obj, ch.Record, "")
	}
	if cj.Spec.ConcurrencyPolicy == batchv1.ForbidConcurrent {
		running, err := jobRunning(ctx, c, cj)
		if err != nil || running {
			return Result{Wait: forbiddenRetry}, err
		}
	}
	job := jobFrom(cj, ch)
	if err := c.Create(ctx, job, client.FieldOwner(FieldOwner)); err != nil && !apierrors.IsAlreadyExists(err) {
		return Result{}, fmt.Errorf("creating Job %s/%s: %w", job.Namespace, job.Name, err)
	}
	return Result{Created: job, Cause: ch.Cause}, t.Write(ctx, c, obj, ch.Record, ch.Stamp)
}

// jobRunning reports whether a Job of the CronJob has not finished: one
// its controller started, listed in its status, or one started for it
// (ripple's, or kubectl create job --from), which the CronJob controller
// leaves out of its status, only warning that it saw it.
func jobRunning(ctx context.Context, c client.Reader, cj *batchv1.CronJob) (bool, error) {
	if len(cj.Status.Active) > 0 {
		return true, nil
	}
	ctx, cancel := context.WithTimeout(ctx, jobsReadTimeout)
	defer cancel()
	jobs := &batchv1.JobList{}
	if err := c.List(ctx, jobs, client.InNamespace(cj.Namespace), client.UnsafeDisableDeepCopy); err != nil {
		return false, fmt.Errorf("listing the Jobs of CronJob %s/%s: %w", cj.Namespace, cj.Name, err)
	}
	for i := range jobs.Items {
		job := &jobs.Items[i]
		if owner := metav1.GetControllerOfNoCopy(job); owner != nil && owner.UID == cj.UID && !jobFinished(job) {
			return true, nil
		}
	}
	return false, nil
}

// jobFrom builds the Job that runs a CronJob's jobTemplate for a change.
func jobFrom(cj *batchv1.CronJob, ch Change) *batchv1.Job {
	tmpl := cj.Spec.JobTemplate.DeepCopy()
	ann := maps.Clone(tmpl.Annotations)
	if ann == nil {
		ann = map[string]string{}
	}
	ann["cronjob.kubernetes.io/instantiate"] = "manual"
	ann[annotations.ReloadCause] = ch.Cause
	if tmpl.Spec.Template.Annotations == nil {
		tmpl.Spec.Template.Annotations = map[string]string{}
	}
	tmpl.Spec.Template.Annotations[annotations.ConfigDigest] = ch.Stamp
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name:            reloadJobName(cj.Name, ch.ID),
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
func reloadJobName(cronJob, id string) string {
	const suffix = len("-reload-") + 8
	if len(cronJob) > 63-suffix {
		// A name cut after a dot would start the next DNS label with "-".
		cronJob = strings.TrimRight(cronJob[:63-suffix], ".")
	}
	return cronJob + "-reload-" + id[:8]
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
