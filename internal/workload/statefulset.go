package workload

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

func init() {
	t := newType[appsv1.StatefulSet, appsv1.StatefulSetList](appsv1.SchemeGroupVersion, "StatefulSet", "statefulsets",
		func(o *appsv1.StatefulSet) *corev1.PodTemplateSpec { return &o.Spec.Template })
	// A StatefulSet cannot be paused: ripple holds its changes instead.
	t.Pause = PauseHold
	t.Trim = trimmer(func(o *appsv1.StatefulSet) {
		o.Spec = appsv1.StatefulSetSpec{Template: trimTemplate(o.Spec.Template)}
		o.Status = appsv1.StatefulSetStatus{}
	})
	register(t)
}
