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
	t.Pause = PauseHold
	t.Trim = trimmer(func(o *appsv1.StatefulSet) {
		o.Spec = appsv1.StatefulSetSpec{Template: trimTemplate(o.Spec.Template)}
		o.Status = appsv1.StatefulSetStatus{}
	})
	register(t)
}
