package workload

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// lastApplied is kubectl's copy of the whole object: often the largest
// annotation a workload carries, and one ripple never reads.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// trimmer returns a Type.Trim for objects of type PT: the object's own
// metadata loses its labels, managed fields and kubectl's last-applied
// copy, and trim cuts the rest of the object down to what ripple reads.
func trimmer[T any, PT interface {
	*T
	client.Object
}](trim func(PT)) func(client.Object) {
	return func(o client.Object) {
		t, ok := o.(PT)
		if !ok {
			return
		}
		t.SetLabels(nil)
		t.SetManagedFields(nil)
		if a := t.GetAnnotations(); a != nil {
			delete(a, lastApplied)
		}
		trim(t)
	}
}

// trimTemplate keeps of a pod template what ripple reads and writes: the
// template's annotations (its stamp), the volumes, and of each container
// its name, its restart policy and what can reference a ConfigMap or Secret
// or carry ripple's env var. Containers stay in place, so a JSON patch
// built from the trimmed template addresses the same containers as the
// live one.
func trimTemplate(t corev1.PodTemplateSpec) corev1.PodTemplateSpec {
	s := t.Spec
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Annotations: t.Annotations},
		Spec: corev1.PodSpec{
			Volumes:             s.Volumes,
			InitContainers:      trimContainers(s.InitContainers),
			Containers:          trimContainers(s.Containers),
			EphemeralContainers: trimEphemeral(s.EphemeralContainers),
		},
	}
}

func trimContainers(cs []corev1.Container) []corev1.Container {
	if cs == nil {
		return nil
	}
	out := make([]corev1.Container, len(cs))
	for i, c := range cs {
		// An init container's restart policy tells a sidecar, which runs
		// as long as the pod, from one that ran once.
		out[i] = corev1.Container{Name: c.Name, Env: c.Env, EnvFrom: c.EnvFrom, VolumeMounts: c.VolumeMounts, RestartPolicy: c.RestartPolicy}
	}
	return out
}

func trimEphemeral(cs []corev1.EphemeralContainer) []corev1.EphemeralContainer {
	if cs == nil {
		return nil
	}
	out := make([]corev1.EphemeralContainer, len(cs))
	for i, c := range cs {
		out[i].Name, out[i].Env, out[i].EnvFrom, out[i].VolumeMounts = c.Name, c.Env, c.EnvFrom, c.VolumeMounts
	}
	return out
}

// replicas is a workload's spec.replicas, which defaults to 1.
func replicas(n *int32) int32 {
	if n == nil {
		return 1
	}
	return *n
}
