package workload

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// deployments is a variable, not only registered, because an Argo Rollout
// with workloadRef takes its pod template from a Deployment.
var deployments = func() Type {
	t := newType[appsv1.Deployment, appsv1.DeploymentList](appsv1.SchemeGroupVersion, "Deployment", "deployments",
		func(o *appsv1.Deployment) *corev1.PodTemplateSpec { return &o.Spec.Template })
	t.Selector = func(o client.Object) *metav1.LabelSelector {
		if w, ok := o.(*appsv1.Deployment); ok {
			return w.Spec.Selector
		}
		return nil
	}
	t.Pause = PauseSpec
	t.Trim = trimmer(func(d *appsv1.Deployment) {
		d.Spec = appsv1.DeploymentSpec{Paused: d.Spec.Paused, Replicas: d.Spec.Replicas, Template: trimTemplate(d.Spec.Template)}
		d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Status.ObservedGeneration, Replicas: d.Status.Replicas,
			UpdatedReplicas: d.Status.UpdatedReplicas, AvailableReplicas: d.Status.AvailableReplicas}
	})
	t.Available = func(o client.Object) bool {
		d, ok := o.(*appsv1.Deployment)
		if !ok {
			return true
		}
		want := replicas(d.Spec.Replicas)
		s := d.Status
		return s.ObservedGeneration >= d.Generation && s.UpdatedReplicas == want && s.AvailableReplicas == want && s.Replicas == want
	}
	t.OwnerPaused = func(o client.Object) bool {
		d, ok := o.(*appsv1.Deployment)
		return ok && d.Spec.Paused
	}
	return t
}()

func init() { register(deployments) }
