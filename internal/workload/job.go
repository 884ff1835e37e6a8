package workload

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ripple-controller/ripple/internal/annotations"
)

// A Job's pod template cannot change, so ripple rolls a Job as Reloader
// does, by deleting and recreating it, but safely: a Job that completed is
// left alone, and the new Job is created only once the old one's pods are
// gone. The rollout spans several reconciles and survives a restart:
//  1. rollJob marks the Job (the Recreate annotation and finalizer, and the
//     record) and deletes it with foreground propagation;
//  2. the garbage collector deletes its pods, then removes its
//     foregroundDeletion finalizer;
//  3. resumeJob sees only ripple's finalizer left and, once a dry run says
//     the API server would admit the new Job, removes the finalizer and
//     creates the Job again under the same name.
func init() {
	t := newType[batchv1.Job, batchv1.JobList](batchv1.SchemeGroupVersion, "Job", "jobs",
		func(o *batchv1.Job) *corev1.PodTemplateSpec { return &o.Spec.Template })
	template := t.Template
	// A CronJob's Job is the CronJob's to rerun: it inherits the
	// jobTemplate's annotations, and would otherwise be recreated too.
	t.Template = func(o client.Object) *corev1.PodTemplateSpec {
		tmpl := template(o)
		if tmpl == nil {
			return nil
		}
		if owner := metav1.GetControllerOfNoCopy(o); owner != nil && owner.Kind == "CronJob" {
			return nil
		}
		return tmpl
	}
	t.Held = func(obj client.Object, _ string) string {
		if job, ok := obj.(*batchv1.Job); ok && jobCompleted(job) {
			return "the Job completed, so it is not run again"
		}
		return ""
	}
	t.Roll = func(ctx context.Context, c client.Client, obj client.Object, ch Change) (Result, error) {
		return rollJob(ctx, c, t, obj, ch)
	}
	t.Resume = func(ctx context.Context, c client.Client, obj client.Object) (Result, bool, error) {
		return resumeJob(ctx, c, t, obj)
	}
	register(t)
}

// pendingJob is the Recreate annotation's value.
type pendingJob struct {
	Stamp string `json:"stamp"`
	Cause string `json:"cause"`
	// Env are the variables of the env-vars strategy, which the new Job's
	// template carries instead of the stamp annotation.
	Env []EnvVar `json:"env,omitempty"`
}

// decodeJob reads the Recreate annotation's value. A mangled one still
// recreates the Job, without a stamp. A Job's template cannot change, so
// the variables are only those ripple sets: under its prefix, with the
// stamp for value; others, written by hand, would let anyone who may
// annotate the Job set what its new pods run with.
func decodeJob(raw string) pendingJob {
	var pending pendingJob
	_ = json.Unmarshal([]byte(raw), &pending)
	pending.Cause = readCause(pending.Cause)
	pending.Env = slices.DeleteFunc(pending.Env, func(e EnvVar) bool {
		return !strings.HasPrefix(e.Name, EnvVarPrefix) || pending.Stamp == "" || e.Value != pending.Stamp
	})
	return pending
}

func rollJob(ctx context.Context, c client.Client, t Type, obj client.Object, ch Change) (Result, error) {
	job, ok := obj.(*batchv1.Job)
	if !ok {
		return Result{}, fmt.Errorf("%T is not a Job", obj)
	}
	if why := t.Held(obj, ch.Strategy); why != "" {
		err := t.Write(ctx, c, obj, map[string]string{annotations.Recorded: ch.Record})
		return Result{Held: why, Patched: err == nil}, err
	}
	pending, err := json.Marshal(pendingJob{Stamp: ch.Stamp, Cause: ch.Cause, Env: ch.Env})
	if err != nil {
		return Result{}, fmt.Errorf("encoding the Job to recreate: %w", err)
	}
	body := t.TemplatePatch(job.ResourceVersion, map[string]string{annotations.Recorded: ch.Record, annotations.Recreate: string(pending)}, nil)
	body["metadata"].(map[string]any)["finalizers"] = append(slices.Clone(job.Finalizers), annotations.Recreate)
	if err := t.patch(ctx, c, obj, body); err != nil {
		return Result{}, err
	}
	return Result{Patched: true}, deleteForeground(ctx, c, t, job, client.Preconditions{UID: &job.UID})
}

// deleteForeground deletes the Job once its pods are gone. A Job already
// being deleted must not be deleted again from a stale read: that adds the
// foregroundDeletion finalizer back after the garbage collector removed
// it, and the Job waits for a collection that already happened.
func deleteForeground(ctx context.Context, c client.Client, t Type, job *batchv1.Job, only client.Preconditions) error {
	if err := c.Delete(ctx, t.Metadata(job.Namespace, job.Name), client.PropagationPolicy(metav1.DeletePropagationForeground),
		only); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting Job %s/%s to recreate it: %w", job.Namespace, job.Name, err)
	}
	return nil
}

// jobCompleted reports whether the Job succeeded: complete, or, from the
// moment its success policy is met, while its last pods terminate.
func jobCompleted(job *batchv1.Job) bool {
	return hasCondition(job, batchv1.JobComplete) || hasCondition(job, batchv1.JobSuccessCriteriaMet)
}

// jobFinished reports whether the Job ended, as the CronJob controller
// reads it: complete or failed.
func jobFinished(job *batchv1.Job) bool {
	return hasCondition(job, batchv1.JobComplete) || hasCondition(job, batchv1.JobFailed)
}

func hasCondition(job *batchv1.Job, typ batchv1.JobConditionType) bool {
	for _, c := range job.Status.Conditions {
		if c.Type == typ && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// resumeJob carries a recreation on from wherever it stopped: deleting the
// marked Job, waiting for its pods, or creating the new one.
func resumeJob(ctx context.Context, c client.Client, t Type, obj client.Object) (Result, bool, error) {
	job, ok := obj.(*batchv1.Job)
	if !ok {
		return Result{}, false, nil
	}
	raw, marked := job.Annotations[annotations.Recreate]
	switch {
	case !marked:
		return Result{}, false, nil
	case jobCompleted(job):
		// It completed after ripple marked it: before ripple's deletion
		// (one refused, cut off, or a moment late), and perhaps deleted
		// since by someone else (its TTL, a Helm hook's policy). Its run is
		// over, and a Job that completed is never run again: the mark goes,
		// on this version alone, and a deletion under way goes on.
		done := slices.DeleteFunc(slices.Clone(job.Finalizers), func(f string) bool { return f == annotations.Recreate })
		body := map[string]any{"metadata": map[string]any{"resourceVersion": job.ResourceVersion,
			"annotations": map[string]any{annotations.Recreate: nil}, "finalizers": done}}
		return Result{Held: t.Held(job, ""), Cause: decodeJob(raw).Cause}, true, t.patch(ctx, c, obj, body)
	case job.DeletionTimestamp == nil:
		// This version may be stale: the delete applies to it alone.
		return Result{}, true, deleteForeground(ctx, c, t, job, client.Preconditions{UID: &job.UID, ResourceVersion: &job.ResourceVersion})
	case slices.ContainsFunc(job.Finalizers, func(f string) bool { return f != annotations.Recreate }):
		// The garbage collector is deleting the pods; its finalizer goes
		// when they are gone, and that update queues the Job again.
		return Result{}, true, nil
	}
	pending := decodeJob(raw)
	next := recreated(job, pending)
	err := wouldCreate(ctx, c, next)
	ending := errors.Is(err, errNamespaceEnding)
	if err != nil && !ending {
		return Result{}, true, err
	}
	// From the finalizer's removal to the creation, the Job lives only in
	// ripple's memory: a shutdown of ripple (an upgrade, a drain) cancels
	// ctx, and must not end that stretch in between. A lost leadership
	// ends the process at once, and still may.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), handOverTimeout)
	defer cancel()
	body := map[string]any{"metadata": map[string]any{"resourceVersion": job.ResourceVersion, "finalizers": []string{}}}
	if err := t.patch(ctx, c, obj, body); client.IgnoreNotFound(err) != nil {
		return Result{}, true, err
	}
	if ending {
		// The namespace's deletion waits for the finalizer, and takes the
		// Job with it.
		return Result{}, true, nil
	}
	if err := createRetrying(ctx, c, next); err != nil {
		return Result{Owed: next, Cause: pending.Cause}, true, err
	}
	return Result{Created: next, Cause: pending.Cause}, true, nil
}

// handOverTimeout bounds the finalizer's removal and the new Job's
// creation, which a shutdown of ripple does not cut short: within the
// manager's graceful shutdown (30 s), beyond createRetrying's second and
// a half.
const handOverTimeout = 10 * time.Second

// ErrNotAdmitted marks the error of a recreation the API server did not
// admit in a dry run: the old Job waits, deleted, for a later try.
var ErrNotAdmitted = errors.New("the API server did not admit the new Job in a dry run")

// errNamespaceEnding says the Job's namespace is being deleted: no Job can
// be created in it again.
var errNamespaceEnding = errors.New("the namespace is being deleted")

// wouldCreate asks the API server, by a dry run, whether it would admit
// job, before ripple lets the old Job go: once it is gone, a refused Job
// would live only in ripple's memory, and a restart would lose it. The old
// Job still holds the name, so an admitted dry run ends in AlreadyExists,
// which the API server checks after admission.
func wouldCreate(ctx context.Context, c client.Client, job *batchv1.Job) error {
	err := c.Create(ctx, job.DeepCopy(), client.DryRunAll, client.FieldOwner(FieldOwner))
	switch {
	case err == nil, apierrors.IsAlreadyExists(err), fullByTheOldJob(err):
		return nil
	case NamespaceEnding(err):
		return errNamespaceEnding
	}
	return fmt.Errorf("%w: Job %s/%s: %w", ErrNotAdmitted, job.Namespace, job.Name, err)
}

// quotaRefusal is how the ResourceQuota admission refuses a Job for a
// quota of Jobs alone: the resources exceeded, then the amounts.
var quotaRefusal = regexp.MustCompile(`exceeded quota: [^,]+, requested: count/jobs\.batch=1, used: count/jobs\.batch=(\d+), limited: count/jobs\.batch=(\d+)$`)

// fullByTheOldJob reports whether err refuses the new Job only for a quota
// of Jobs that removing the old one, which it counts, leaves room in.
func fullByTheOldJob(err error) bool {
	var status apierrors.APIStatus
	if !apierrors.IsForbidden(err) || !errors.As(err, &status) {
		return false
	}
	m := quotaRefusal.FindStringSubmatch(status.Status().Message)
	if m == nil {
		return false
	}
	used, errU := strconv.Atoi(m[1])
	limited, errL := strconv.Atoi(m[2])
	return errU == nil && errL == nil && used <= limited
}

// createRetrying creates the new Job, trying five times over about a
// second and a half before leaving it to the caller as owed.
func createRetrying(ctx context.Context, c client.Client, job *batchv1.Job) error {
	var last error
	err := wait.ExponentialBackoffWithContext(ctx, wait.Backoff{Duration: 100 * time.Millisecond, Factor: 2, Steps: 5},
		func(ctx context.Context) (bool, error) {
			last = c.Create(ctx, job, client.FieldOwner(FieldOwner))
			// An earlier try may have been created though its answer was lost.
			if apierrors.IsAlreadyExists(last) {
				last = nil
			}
			return last == nil || NamespaceEnding(last), nil
		})
	if err = errors.Join(last, err); err != nil {
		return fmt.Errorf("recreating Job %s/%s: %w", job.Namespace, job.Name, err)
	}
	return nil
}

// NamespaceEnding reports whether err refused a creation because its
// namespace is gone or being deleted, which no retry undoes.
func NamespaceEnding(err error) bool {
	return apierrors.IsNotFound(err) || apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause)
}

// generatedJobLabels are set by the API server on a Job and its pod
// template from the Job's UID and name: a new Job gets its own.
var generatedJobLabels = []string{"controller-uid", batchv1.ControllerUidLabel, "job-name", batchv1.JobNameLabel}

// recreated is the Job to create in place of old: the same spec and
// owners, without what the API server generated for old. Like the Jobs of
// a CronJob (cronJobOwner), it does not block its owners' deletion: that
// needs update on each owner's finalizers where the
// OwnerReferencesPermissionEnforcement admission plugin is on (OpenShift),
// and a Job an operator made with it was deleted and never created again.
func recreated(old *batchv1.Job, pending pendingJob) *batchv1.Job {
	spec := old.Spec.DeepCopy()
	spec.Selector = nil
	spec.ManualSelector = nil
	spec.Template.Labels = withoutKeys(spec.Template.Labels, generatedJobLabels)
	if spec.Template.Annotations == nil {
		spec.Template.Annotations = map[string]string{}
	}
	// The variables were computed from this template, whose containers a
	// Job cannot change: one that lands on no container is a mangled
	// annotation, and the Job is recreated with the stamp instead.
	envs, err := withEnv(spec.Template.Spec.Containers, pending.Env)
	switch {
	case len(pending.Env) > 0 && err == nil:
		for i, env := range envs {
			spec.Template.Spec.Containers[i].Env = env
		}
	case pending.Stamp != "":
		spec.Template.Annotations[annotations.ConfigDigest] = pending.Stamp
	}
	ann := withoutKeys(old.Annotations, []string{annotations.Recreate})
	ann[annotations.ReloadCause] = pending.Cause
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name:            old.Name,
			Namespace:       old.Namespace,
			Labels:          withoutKeys(old.Labels, generatedJobLabels),
			Annotations:     ann,
			OwnerReferences: unblocking(old.OwnerReferences),
		},
		Spec: *spec,
	}
	job.SetGroupVersionKind(batchv1.SchemeGroupVersion.WithKind("Job"))
	return job
}

// unblocking returns a copy of refs that blocks no owner's deletion.
func unblocking(refs []metav1.OwnerReference) []metav1.OwnerReference {
	out := slices.Clone(refs)
	for i := range out {
		out[i].BlockOwnerDeletion = nil
	}
	return out
}

func withoutKeys(m map[string]string, keys []string) map[string]string {
	out := maps.Clone(m)
	if out == nil {
		out = map[string]string{}
	}
	for _, k := range keys {
		delete(out, k)
	}
	return out
}
