package workload

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func init() {
	t := newType[appsv1.StatefulSet, appsv1.StatefulSetList](appsv1.SchemeGroupVersion, "StatefulSet", "statefulsets",
		func(o *appsv1.StatefulSet) *corev1.PodTemplateSpec { return &o.Spec.Template })
	// A StatefulSet cannot be paused: ripple holds its changes instead.
	t.Selector = func(o client.Object) *metav1.LabelSelector {
		if w, ok := o.(*appsv1.StatefulSet); ok {
			return w.Spec.Selector
		}
		return nil
	}
	t.Available = func(o client.Object) bool {
		s, ok := o.(*appsv1.StatefulSet)
		if !ok {
			return true
		}
		want := replicas(s.Spec.Replicas)
		st := s.Status
		return st.ObservedGeneration >= s.Generation && st.UpdatedReplicas == want && st.AvailableReplicas == want &&
			st.CurrentRevision == st.UpdateRevision
	}
	t.Pause = PauseHold
	t.Trim = trimmer(func(o *appsv1.StatefulSet) {
		o.Spec = appsv1.StatefulSetSpec{Replicas: o.Spec.Replicas, Template: trimTemplate(o.Spec.Template)}
		o.Status = appsv1.StatefulSetStatus{ObservedGeneration: o.Status.ObservedGeneration, UpdatedReplicas: o.Status.UpdatedReplicas,
			AvailableReplicas: o.Status.AvailableReplicas, CurrentRevision: o.Status.CurrentRevision, UpdateRevision: o.Status.UpdateRevision}
	})
	register(t)
}
