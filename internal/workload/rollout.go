package workload

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ripple-controller/ripple/internal/annotations"
)

// Rollout strategies: see annotations.RolloutStrategy.
const (
	RolloutTemplate = "rollout"
	RolloutRestart  = "restart"
)

// ArgoFlag turns Argo Rollouts on: Reloader's flag, spelling included.
const ArgoFlag = "is-Argo-Rollouts"

// ArgoGroupVersion is where Argo Rollouts' CRD serves Rollouts.
var ArgoGroupVersion = schema.GroupVersion{Group: "argoproj.io", Version: "v1alpha1"}

// Argo Rollouts (argoproj.io/v1alpha1 Rollout), on with --is-Argo-Rollouts.
// A Rollout rolls through its pod template, as a Deployment does, or with
// the "restart" strategy through spec.restartAt. A Rollout with
// spec.workloadRef has no pod template of its own: its pods are made from
// the referenced Deployment's, so ripple tracks what that template uses
// and restarts the Rollout. It does not stamp the Deployment: that would be
// a write to an object other than the one that carries the record, and a
// failover between the two writes would lose the change or roll it twice;
// the Deployment is often another tool's (Argo CD, a Helm release), scaled
// to zero; and ripple would need patch on Deployments it does not roll.
func init() {
	t := newType[Rollout, RolloutList](ArgoGroupVersion, "Rollout", "rollouts",
		func(o *Rollout) *corev1.PodTemplateSpec { return &o.Spec.Template })
	t.EnabledBy = ArgoFlag
	t.Strategy = &Strategy{Annotation: annotations.RolloutStrategy, Values: []string{RolloutTemplate, RolloutRestart},
		Untemplated: []string{RolloutRestart}}
	t.TemplateSource = &deployments
	t.TemplateRef = rolloutTemplateRef
	t.Roll = func(ctx context.Context, c client.Client, obj client.Object, ch Change) (Result, error) {
		err := rollRollout(ctx, c, t, obj, ch)
		return Result{Patched: err == nil}, err
	}
	t.RestartedAt = func(obj client.Object) (time.Time, bool) {
		ro, ok := obj.(*Rollout)
		if !ok || ro.Spec.RestartAt == nil {
			return time.Time{}, false
		}
		return ro.Spec.RestartAt.Time, true
	}
	register(t)
}

// Rollout holds the fields of an Argo Rollout that ripple reads, and
// nothing else: the cache keeps only these, and a Rollout of any Argo
// version decodes into it. ripple never writes the whole object, only merge
// patches that name its own fields.
type Rollout struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              RolloutSpec `json:"spec,omitempty"`
}

// RolloutSpec is the part of a Rollout's spec that ripple reads.
type RolloutSpec struct {
	Template    corev1.PodTemplateSpec `json:"template,omitempty"`
	WorkloadRef *RolloutRef            `json:"workloadRef,omitempty"`
	RestartAt   *metav1.Time           `json:"restartAt,omitempty"`
}

// RolloutRef names the workload whose pod template a Rollout uses.
type RolloutRef struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
	Name       string `json:"name,omitempty"`
}

// RolloutList is a list of Rollouts.
type RolloutList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Rollout `json:"items"`
}

// DeepCopyObject implements runtime.Object.
func (r *Rollout) DeepCopyObject() runtime.Object {
	if r == nil {
		return nil
	}
	out := &Rollout{TypeMeta: r.TypeMeta}
	r.DeepCopyInto(&out.ObjectMeta)
	r.Spec.Template.DeepCopyInto(&out.Spec.Template)
	if r.Spec.WorkloadRef != nil {
		ref := *r.Spec.WorkloadRef
		out.Spec.WorkloadRef = &ref
	}
	out.Spec.RestartAt = r.Spec.RestartAt.DeepCopy()
	return out
}

// DeepCopyObject implements runtime.Object.
func (l *RolloutList) DeepCopyObject() runtime.Object {
	if l == nil {
		return nil
	}
	out := &RolloutList{TypeMeta: l.TypeMeta}
	l.DeepCopyInto(&out.ListMeta)
	if l.Items != nil {
		out.Items = make([]Rollout, len(l.Items))
		for i := range l.Items {
			out.Items[i] = *l.Items[i].DeepCopyObject().(*Rollout)
		}
	}
	return out
}

// maxQuotedRef is the most bytes of each field of spec.workloadRef that
// the error about it quotes: the fields are a user's text, which the
// Rollout's CRD may leave unbounded, and the error is logged and put in an
// Event. A whole object name fits.
const maxQuotedRef = 253

// rolloutTemplateRef reads spec.workloadRef. Argo also takes a ReplicaSet
// or a PodTemplate there; ripple follows Deployments only, the kind Argo's
// documentation migrates from, and says so rather than track nothing.
func rolloutTemplateRef(obj client.Object) (string, error) {
	ro, ok := obj.(*Rollout)
	if !ok || ro.Spec.WorkloadRef == nil {
		return "", nil
	}
	ref := ro.Spec.WorkloadRef
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil || gv.Group != deployments.GroupVersion.Group || ref.Kind != deployments.Kind || ref.Name == "" {
		return "", fmt.Errorf("spec.workloadRef names %s %q of %q: ripple follows only the pod template of a Deployment (apps/v1)",
			annotations.Shorten(ref.Kind, maxQuotedRef), annotations.Shorten(ref.Name, maxQuotedRef), annotations.Shorten(ref.APIVersion, maxQuotedRef))
	}
	return ref.Name, nil
}

// rollRollout writes a change. With the restart strategy, or a template
// that is not the Rollout's own, the record and spec.restartAt go in one
// merge patch under the Rollout's resourceVersion: either both land or
// neither does, so a failover of ripple can neither lose the restart nor
// repeat it (Reloader issue #1144, where the restart is a write of its own
// that nothing records).
func rollRollout(ctx context.Context, c client.Client, t Type, obj client.Object, ch Change) error {
	ro, ok := obj.(*Rollout)
	if !ok {
		return fmt.Errorf("%T is not a Rollout", obj)
	}
	if ch.Strategy != RolloutRestart && ro.Spec.WorkloadRef == nil {
		return t.Stamp(ctx, c, obj, ch)
	}
	// The stamp goes on the metadata: a restart leaves the template's as
	// it was, which then names older config than the pods run.
	body := t.TemplatePatch(ro.ResourceVersion, map[string]string{annotations.Recorded: ch.Record, annotations.PodsConfigDigest: ch.Stamp}, nil)
	body["spec"] = map[string]any{"restartAt": restartAt(ch.Now).Format(time.RFC3339)}
	return t.patch(ctx, c, obj, body)
}

// restartAt is the first whole second after now, the API server's time.
// Argo restarts the pods created before restartAt, comparing it with their
// creation timestamps, which the API server writes in whole seconds: a pod
// created earlier within the second of the change, from the old config,
// carries the same second and would be passed over if restartAt were now
// rounded down. A pod created later in that second is restarted once more,
// which is harmless.
func restartAt(now time.Time) time.Time {
	return now.UTC().Truncate(time.Second).Add(time.Second)
}
