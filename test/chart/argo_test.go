package chart

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ripple-controller/ripple/internal/annotations"
	"github.com/ripple-controller/ripple/internal/workload"
	"github.com/ripple-controller/ripple/test/cluster"
)

var _ = Describe("The chart installed with isArgoRollouts and Deployments ignored", Label("install"), Ordered, func() {
	var sa *identity
	BeforeAll(func(ctx SpecContext) {
		crds, err := cluster.InstallCRDs(admin, cluster.RolloutCRD)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { Expect(cluster.UninstallCRDs(admin, crds, cluster.RolloutCRD)).To(Succeed()) })
		createNamespaces(ctx, "apps-argo")
		inst := installChart(ctx, "ripple-argo", "ripple-argo", "default",
			"--set", "isArgoRollouts=true", "--set", "ignoredWorkloadTypes={deployments}")
		sa = serviceAccount(ctx, inst.namespace, inst.sa)
		startRipple(sa.config, inst.args)
	})

	It("lets ripple restart a Rollout whose workloadRef Deployment uses a changed ConfigMap, and only read that Deployment", func(ctx SpecContext) {
		const ns, name = "apps-argo", "web"
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string]string{"greeting": "hello"}}
		labels := map[string]string{"app": name}
		d := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr.To[int32](0),
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:1",
						EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: name}}}}}}},
				},
			},
		}
		ro := &unstructured.Unstructured{}
		ro.SetGroupVersionKind(workload.ArgoGroupVersion.WithKind("Rollout"))
		ro.SetNamespace(ns)
		ro.SetName(name)
		ro.SetAnnotations(map[string]string{annotations.Auto: "true"})
		ro.Object["spec"] = map[string]any{
			"replicas":    int64(1),
			"workloadRef": map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
			"strategy":    map[string]any{"canary": map[string]any{}},
		}
		for _, o := range []client.Object{cm, d, ro} {
			Expect(k8s.Create(ctx, o)).To(Succeed())
			DeferCleanup(func(ctx context.Context) { Expect(client.IgnoreNotFound(k8s.Delete(ctx, o))).To(Succeed()) })
		}
		field := func(path ...string) func(g Gomega) string {
			return func(g Gomega) string {
				g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(ro), ro)).To(Succeed())
				v, _, _ := unstructured.NestedString(ro.Object, path...)
				return v
			}
		}
		Eventually(field("metadata", "annotations", annotations.Recorded)).WithTimeout(waitFor).WithPolling(pollAt).
			Should(ContainSubstring("ConfigMap/"+name+"="), "ripple records the Rollout, with what its Deployment uses")
		Expect(field("spec", "restartAt")(Default)).To(BeEmpty(), "first sight must not restart")

		cm.Data["greeting"] = fmt.Sprintf("hello at %d", time.Now().UnixNano())
		Expect(k8s.Update(ctx, cm)).To(Succeed())
		Eventually(field("spec", "restartAt")).WithTimeout(waitFor).WithPolling(pollAt).ShouldNot(BeEmpty(), "a ConfigMap edit restarts the Rollout")

		forbidden(sa.client.Patch(ctx, d, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"x":"y"}}}`))), "patching a Deployment")
	})
})
