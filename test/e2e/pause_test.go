package e2e

import (
	"context"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"

	"github.com/ripple-controller/ripple/internal/annotations"
)

// createDeploymentReading creates a Deployment of two replicas that reads
// ConfigMap cfg through envFrom, with the given annotations.
func createDeploymentReading(ctx context.Context, ns, name string, ann map[string]string) {
	GinkgoHelper()
	tmpl := podTemplate(name)
	tmpl.Spec.Containers[0].EnvFrom = []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}}
	_, err := clientset.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: ann},
		Spec:       appsv1.DeploymentSpec{Replicas: ptr.To[int32](2), Selector: &metav1.LabelSelector{MatchLabels: appLabels(name)}, Template: tmpl},
	}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
}

// replicaSets counts the Deployment's ReplicaSets: one per rollout.
func replicaSets(ctx context.Context, ns, name string) func() int {
	return func() int {
		list, err := clientset.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(appLabels(name)).String()})
		Expect(err).NotTo(HaveOccurred())
		return len(list.Items)
	}
}

// completeDeployment checks that the Deployment completed its rollout and
// that ripple recorded it, so that an edit after it is a change.
func completeDeployment(ctx context.Context, ns, name string) func() error {
	return func() error {
		d, err := clientset.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if _, ok := d.Annotations[annotations.Recorded]; !ok {
			return fmt.Errorf("ripple has not recorded Deployment %s yet", name)
		}
		return deploymentComplete(d)
	}
}

var _ = Describe("Pause periods and the env-vars strategy on a full cluster", func() {
	It("holds a paused Deployment's rollout for its period and then rolls it once with every change made meanwhile", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		_, err := clientset.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg"}, Data: map[string]string{"k": "1"}}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		createDeploymentReading(ctx, ns, "web", map[string]string{annotations.Auto: "true", annotations.PausePeriod: "8s"})
		startRipple()
		Eventually(completeDeployment(ctx, ns, "web")).WithContext(ctx).WithTimeout(rolloutTimeout).Should(Succeed())
		Expect(replicaSets(ctx, ns, "web")()).To(Equal(1))

		editConfigMap(ctx, ns, "cfg", "2")
		Eventually(func() bool {
			d, err := clientset.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
			Expect(err).NotTo(HaveOccurred())
			return d.Spec.Paused
		}).WithContext(ctx).WithTimeout(30 * time.Second).Should(BeTrue())
		editConfigMap(ctx, ns, "cfg", "3")
		Consistently(replicaSets(ctx, ns, "web")).WithContext(ctx).WithTimeout(4*time.Second).Should(Equal(1), "no rollout while paused")

		Eventually(replicaSets(ctx, ns, "web")).WithContext(ctx).WithTimeout(rolloutTimeout).Should(Equal(2), "one rollout when the pause ends")
		Eventually(completeDeployment(ctx, ns, "web")).WithContext(ctx).WithTimeout(rolloutTimeout).Should(Succeed())
		Consistently(replicaSets(ctx, ns, "web")).WithContext(ctx).WithTimeout(3 * time.Second).Should(Equal(2))
	}, SpecTimeout(5*time.Minute))

	It("rolls a Deployment to pods that carry Reloader's variable under --reload-strategy=env-vars", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		_, err := clientset.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg"}, Data: map[string]string{"k": "1"}}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		createDeploymentReading(ctx, ns, "web", map[string]string{annotations.ConfigMapReload: "cfg"})
		startRipple("--reload-strategy=env-vars")
		Eventually(completeDeployment(ctx, ns, "web")).WithContext(ctx).WithTimeout(rolloutTimeout).Should(Succeed())

		editConfigMap(ctx, ns, "cfg", "2")

		Eventually(func(g Gomega) {
			pods, err := clientset.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(appLabels("web")).String()})
			g.Expect(err).NotTo(HaveOccurred())
			running := 0
			for _, p := range pods.Items {
				if p.DeletionTimestamp != nil {
					continue
				}
				running++
				g.Expect(envNames(p.Spec.Containers[0].Env)).To(ContainElement("STAKATER_CFG_CONFIGMAP"), "pod %s runs the new template", p.Name)
			}
			g.Expect(running).To(Equal(2))
		}).WithContext(ctx).WithTimeout(rolloutTimeout).Should(Succeed())
		Eventually(completeDeployment(ctx, ns, "web")).WithContext(ctx).WithTimeout(rolloutTimeout).Should(Succeed())
	}, SpecTimeout(5*time.Minute))
})

func envNames(env []corev1.EnvVar) []string {
	out := make([]string, 0, len(env))
	for _, e := range env {
		out = append(out, strings.TrimSpace(e.Name))
	}
	return out
}
