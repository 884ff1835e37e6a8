package workload

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func init() {
	t := newType[appsv1.DaemonSet, appsv1.DaemonSetList](appsv1.SchemeGroupVersion, "DaemonSet", "daemonsets",
		func(o *appsv1.DaemonSet) *corev1.PodTemplateSpec { return &o.Spec.Template })
	// A DaemonSet cannot be paused: ripple holds its changes instead.
	t.Selector = func(o client.Object) *metav1.LabelSelector {
		if w, ok := o.(*appsv1.DaemonSet); ok {
			return w.Spec.Selector
		}
		return nil
	}
	t.Available = func(o client.Object) bool {
		d, ok := o.(*appsv1.DaemonSet)
		if !ok {
			return true
		}
		st := d.Status
		if st.ObservedGeneration < d.Generation {
			return false
		}
		// Under OnDelete the controller replaces no pod: there is nothing
		// to wait for once it saw the change.
		if d.Spec.UpdateStrategy.Type == appsv1.OnDeleteDaemonSetStrategyType {
			return true
		}
		return st.UpdatedNumberScheduled == st.DesiredNumberScheduled && st.NumberAvailable == st.DesiredNumberScheduled
	}
	t.Pause = PauseHold
	t.Trim = trimmer(func(o *appsv1.DaemonSet) {
		o.Spec = appsv1.DaemonSetSpec{UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: o.Spec.UpdateStrategy.Type}, Template: trimTemplate(o.Spec.Template)}
		o.Status = appsv1.DaemonSetStatus{ObservedGeneration: o.Status.ObservedGeneration, DesiredNumberScheduled: o.Status.DesiredNumberScheduled,
			UpdatedNumberScheduled: o.Status.UpdatedNumberScheduled, NumberAvailable: o.Status.NumberAvailable}
	})
	register(t)
}
