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
		st := s.Status
		if st.ObservedGeneration < s.Generation {
			return false
		}
		// Under OnDelete the controller replaces no pod: the rollout is
		// whatever pods someone deletes, so there is nothing to wait for.
		if s.Spec.UpdateStrategy.Type == appsv1.OnDeleteStatefulSetStrategyType {
			return true
		}
		want := replicas(s.Spec.Replicas)
		if st.AvailableReplicas != want {
			return false
		}
		// A partition keeps the pods below it on the old revision, so the
		// two revisions never meet: the rollout is done once the pods from
		// the partition up are updated, as kubectl rollout status reads it.
		// A change undone makes the old revision the update revision again;
		// then the pods below the partition count as updated, and every pod
		// must be.
		if p := partition(s); p > 0 && st.CurrentRevision != st.UpdateRevision {
			return st.UpdatedReplicas >= want-p
		}
		return st.UpdatedReplicas == want && st.CurrentRevision == st.UpdateRevision
	}
	t.Pause = PauseHold
	t.Trim = trimmer(func(o *appsv1.StatefulSet) {
		o.Spec = appsv1.StatefulSetSpec{Replicas: o.Spec.Replicas, UpdateStrategy: o.Spec.UpdateStrategy, Template: trimTemplate(o.Spec.Template)}
		o.Status = appsv1.StatefulSetStatus{ObservedGeneration: o.Status.ObservedGeneration, UpdatedReplicas: o.Status.UpdatedReplicas,
			AvailableReplicas: o.Status.AvailableReplicas, CurrentRevision: o.Status.CurrentRevision, UpdateRevision: o.Status.UpdateRevision}
	})
	register(t)
}

// partition is the ordinal below which a StatefulSet's rolling update
// leaves pods as they are.
func partition(s *appsv1.StatefulSet) int32 {
	if ru := s.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.Partition != nil {
		return *ru.Partition
	}
	return 0
}
