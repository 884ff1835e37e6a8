package workload

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ripple-controller/ripple/internal/refs"
)

// always makes an init container a sidecar.
var always = corev1.ContainerRestartPolicyAlways

// fullTemplate uses config every way a pod can, beside much ripple never
// reads.
func fullTemplate() corev1.PodTemplateSpec {
	app := corev1.Container{
		Name:  "app",
		Image: "registry.invalid/app:1",
		Args:  []string{"--serve"},
		Env: []corev1.EnvVar{{Name: "K", ValueFrom: &corev1.EnvVarSource{
			ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "env-cm"}, Key: "k"}}}},
		EnvFrom:      []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "envfrom-secret"}}}},
		VolumeMounts: []corev1.VolumeMount{{Name: "vol", MountPath: "/etc/app"}},
		Resources:    corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}},
		Ports:        []corev1.ContainerPort{{ContainerPort: 8080}},
	}
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "a"}, Annotations: map[string]string{"ripple.dev/config-digest": "stamp"}},
		Spec: corev1.PodSpec{
			Volumes: []corev1.Volume{{Name: "vol", VolumeSource: corev1.VolumeSource{
				ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "vol-cm"}}}}},
			InitContainers:      []corev1.Container{{Name: "init", Image: "i", RestartPolicy: &always, EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "init-cm"}}}}}},
			Containers:          []corev1.Container{{Name: "sidecar", Image: "s"}, app},
			EphemeralContainers: []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debug", Image: "d", Env: []corev1.EnvVar{{Name: "STAKATER_X_CONFIGMAP", Value: "v"}}}}},
			NodeSelector:        map[string]string{"zone": "a"},
			Tolerations:         []corev1.Toleration{{Key: "k"}},
		},
	}
}

func fullMeta() metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name: "w", Namespace: "ns", UID: "u", ResourceVersion: "7", Generation: 3,
		Labels:        map[string]string{"team": "a"},
		Annotations:   map[string]string{"reloader.stakater.com/auto": "true", lastApplied: `{"huge":"copy"}`},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
	}
}

func TestTrimKeepsWhatRippleReadsAndWrites(t *testing.T) {
	selector := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a"}}
	tests := []struct {
		plural string
		obj    client.Object
	}{
		{"deployments", &appsv1.Deployment{ObjectMeta: fullMeta(), Spec: appsv1.DeploymentSpec{Selector: selector, Paused: true, Template: fullTemplate()},
			Status: appsv1.DeploymentStatus{Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Message: "long"}}}}},
		{"statefulsets", &appsv1.StatefulSet{ObjectMeta: fullMeta(), Spec: appsv1.StatefulSetSpec{Selector: selector, ServiceName: "s", Template: fullTemplate()},
			Status: appsv1.StatefulSetStatus{Replicas: 3}}},
		{"daemonsets", &appsv1.DaemonSet{ObjectMeta: fullMeta(), Spec: appsv1.DaemonSetSpec{Selector: selector, Template: fullTemplate()},
			Status: appsv1.DaemonSetStatus{NumberReady: 2}}},
	}
	for _, tt := range tests {
		t.Run(tt.plural, func(t *testing.T) {
			typ, ok := ByPlural(tt.plural)
			if !ok || typ.Trim == nil {
				t.Fatalf("%s has no Trim", tt.plural)
			}
			before := tt.obj.DeepCopyObject().(client.Object)
			typ.Trim(tt.obj)

			want := refs.FromPodSpec(&typ.Template(before).Spec)
			if got := refs.FromPodSpec(&typ.Template(tt.obj).Spec); len(want) != 4 || !equality.Semantic.DeepEqual(got, want) {
				t.Errorf("references after trimming = %v, want the 4 of %v", got, want)
			}
			for _, ref := range want {
				if got, want := refs.UsedBy(&typ.Template(tt.obj).Spec, ref), refs.UsedBy(&typ.Template(before).Spec, ref); got != want {
					t.Errorf("env-vars would choose container %q for %v after trimming, %q before", got, ref, want)
				}
			}
			if got := typ.Template(tt.obj).Annotations; !equality.Semantic.DeepEqual(got, typ.Template(before).Annotations) {
				t.Errorf("template annotations (the stamp) = %v, want them kept", got)
			}
			wantNames := []string{"sidecar", "app"}
			for i, c := range typ.Template(tt.obj).Spec.Containers {
				if c.Name != wantNames[i] || c.Image != "" || c.Resources.Limits != nil {
					t.Errorf("container %d = %+v, want only %q's name, env and mounts, in place", i, c, wantNames[i])
				}
			}
			if p := typ.Template(tt.obj).Spec.InitContainers[0].RestartPolicy; p == nil || *p != always {
				t.Errorf("the init container's restart policy = %v, want Always kept: the refresh strategy tells a sidecar by it", p)
			}
			if typ.Template(tt.obj).Spec.NodeSelector != nil || typ.Template(tt.obj).Labels != nil {
				t.Errorf("the template kept what ripple never reads: %+v", typ.Template(tt.obj))
			}
			wantAnn := map[string]string{"reloader.stakater.com/auto": "true"}
			if got := tt.obj.GetAnnotations(); !equality.Semantic.DeepEqual(got, wantAnn) {
				t.Errorf("annotations = %v, want %v (the opt-in kept, kubectl's copy dropped)", got, wantAnn)
			}
			if tt.obj.GetLabels() != nil || tt.obj.GetManagedFields() != nil {
				t.Errorf("labels %v or managed fields %v kept", tt.obj.GetLabels(), tt.obj.GetManagedFields())
			}
			if tt.obj.GetResourceVersion() != "7" || tt.obj.GetGeneration() != 3 || tt.obj.GetUID() != "u" {
				t.Errorf("identity lost: %+v", tt.obj)
			}
			if typ.OwnerPaused != nil && !typ.OwnerPaused(tt.obj) {
				t.Errorf("an owner's pause was trimmed away")
			}
		})
	}
}
