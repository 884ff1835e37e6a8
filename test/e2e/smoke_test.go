package e2e

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

const (
	rolloutTimeout = 2 * time.Minute
	// templateAnnotation is what the specs change in a pod template to make
	// a workload roll, as ripple does.
	templateAnnotation = "e2e.ripple.dev/revision"
)

// The smoke specs check that the local cluster really rolls workloads out,
// which every spec about ripple relies on.
var _ = Describe("The local cluster", func() {
	var ns string

	BeforeEach(func(ctx SpecContext) {
		ns = newNamespace(ctx)
	})

	It("makes a Deployment Available and completes a rollout to a new ReplicaSet when the pod template changes", func(ctx SpecContext) {
		deployments := clientset.AppsV1().Deployments(ns)
		_, err := deployments.Create(ctx, &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "web"},
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr.To[int32](2),
				Selector: &metav1.LabelSelector{MatchLabels: appLabels("web")},
				Template: podTemplate("web"),
			},
		}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())

		By("waiting for 2 available replicas")
		Eventually(func(g Gomega) {
			d, err := deployments.Get(ctx, "web", metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(deploymentComplete(d)).To(Succeed())
		}).WithContext(ctx).WithTimeout(rolloutTimeout).Should(Succeed())
		oldRS := ownedReplicaSets(ctx, ns, "web")
		Expect(oldRS).To(HaveLen(1))

		By("changing the pod template")
		patchTemplate(ctx, func(name string, patch []byte) error {
			_, err := deployments.Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
			return err
		}, "web")

		By("waiting for the rollout to complete")
		Eventually(func(g Gomega) {
			d, err := deployments.Get(ctx, "web", metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(d.Status.ObservedGeneration).To(BeNumerically(">=", 2))
			g.Expect(deploymentComplete(d)).To(Succeed())

			sets := ownedReplicaSets(ctx, ns, "web")
			g.Expect(sets).To(HaveLen(2))
			for _, rs := range sets {
				if rs.Name == oldRS[0].Name {
					g.Expect(rs.Spec.Replicas).To(HaveValue(BeZero()), "old ReplicaSet %s scaled to 0", rs.Name)
					g.Expect(rs.Status.Replicas).To(BeZero(), "old ReplicaSet %s has no pods", rs.Name)
					continue
				}
				g.Expect(rs.Spec.Template.Annotations).To(HaveKeyWithValue(templateAnnotation, "2"))
				g.Expect(rs.Status.ReadyReplicas).To(BeEquivalentTo(2), "new ReplicaSet %s has 2 ready pods", rs.Name)
			}
		}).WithContext(ctx).WithTimeout(rolloutTimeout).Should(Succeed())
	}, SpecTimeout(5*time.Minute))

	It("runs a StatefulSet's 2 replicas and completes a rolling update when the pod template changes", func(ctx SpecContext) {
		statefulSets := clientset.AppsV1().StatefulSets(ns)
		_, err := statefulSets.Create(ctx, &appsv1.StatefulSet{
			ObjectMeta: metav1.ObjectMeta{Name: "db"},
			Spec: appsv1.StatefulSetSpec{
				Replicas:    ptr.To[int32](2),
				ServiceName: "db",
				Selector:    &metav1.LabelSelector{MatchLabels: appLabels("db")},
				Template:    podTemplate("db"),
			},
		}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())

		By("waiting for 2 ready replicas")
		var firstRevision string
		Eventually(func(g Gomega) {
			s, err := statefulSets.Get(ctx, "db", metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(statefulSetComplete(s)).To(Succeed())
			firstRevision = s.Status.UpdateRevision
		}).WithContext(ctx).WithTimeout(rolloutTimeout).Should(Succeed())

		By("changing the pod template")
		patchTemplate(ctx, func(name string, patch []byte) error {
			_, err := statefulSets.Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
			return err
		}, "db")

		By("waiting for the rolling update to complete")
		Eventually(func(g Gomega) {
			s, err := statefulSets.Get(ctx, "db", metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(s.Status.ObservedGeneration).To(BeNumerically(">=", 2))
			g.Expect(s.Status.UpdateRevision).NotTo(Equal(firstRevision))
			g.Expect(statefulSetComplete(s)).To(Succeed())
			g.Expect(podsOf(ctx, ns, "db")).To(HaveEach(HaveField("ObjectMeta.Labels", HaveKeyWithValue(appsv1.ControllerRevisionHashLabelKey, s.Status.UpdateRevision))))
		}).WithContext(ctx).WithTimeout(rolloutTimeout).Should(Succeed())
	}, SpecTimeout(5*time.Minute))

	It("runs a DaemonSet pod on every node and updates them all when the pod template changes", func(ctx SpecContext) {
		daemonSets := clientset.AppsV1().DaemonSets(ns)
		_, err := daemonSets.Create(ctx, &appsv1.DaemonSet{
			ObjectMeta: metav1.ObjectMeta{Name: "agent"},
			Spec: appsv1.DaemonSetSpec{
				Selector: &metav1.LabelSelector{MatchLabels: appLabels("agent")},
				Template: podTemplate("agent"),
			},
		}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())

		By("waiting for an available pod on each node")
		Eventually(func(g Gomega) {
			d, err := daemonSets.Get(ctx, "agent", metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(daemonSetComplete(d)).To(Succeed())
		}).WithContext(ctx).WithTimeout(rolloutTimeout).Should(Succeed())

		By("changing the pod template")
		patchTemplate(ctx, func(name string, patch []byte) error {
			_, err := daemonSets.Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
			return err
		}, "agent")

		By("waiting for every pod to be updated and available")
		Eventually(func(g Gomega) {
			d, err := daemonSets.Get(ctx, "agent", metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(d.Status.ObservedGeneration).To(BeNumerically(">=", 2))
			g.Expect(daemonSetComplete(d)).To(Succeed())
			pods := podsOf(ctx, ns, "agent")
			g.Expect(pods).To(HaveLen(len(env.Nodes)))
			g.Expect(pods).To(HaveEach(HaveField("ObjectMeta.Annotations", HaveKeyWithValue(templateAnnotation, "2"))))
		}).WithContext(ctx).WithTimeout(rolloutTimeout).Should(Succeed())
	}, SpecTimeout(5*time.Minute))
})

// newNamespace creates a namespace for one spec and deletes it after.
func newNamespace(ctx context.Context) string {
	ns, err := clientset.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "smoke-"},
	}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func(ctx SpecContext) {
		Expect(clientset.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{})).To(Succeed())
	})
	return ns.Name
}

func appLabels(app string) map[string]string { return map[string]string{"app": app} }

func podTemplate(app string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{
			Labels:      appLabels(app),
			Annotations: map[string]string{templateAnnotation: "1"},
		},
		Spec: corev1.PodSpec{
			// kwok runs no containers; the image is never pulled.
			Containers: []corev1.Container{{Name: app, Image: "registry.k8s.io/pause:3.10"}},
		},
	}
}

// patchTemplate sets the template annotation of workload name to "2" with
// patch.
func patchTemplate(ctx context.Context, patch func(name string, data []byte) error, name string) {
	data := fmt.Appendf(nil, `{"spec":{"template":{"metadata":{"annotations":{%q:"2"}}}}}`, templateAnnotation)
	Expect(patch(name, data)).To(Succeed())
}

func deploymentComplete(d *appsv1.Deployment) error {
	want := ptr.Deref(d.Spec.Replicas, 1)
	s := d.Status
	switch {
	case s.ObservedGeneration < d.Generation:
		return fmt.Errorf("generation %d not observed yet (%d)", d.Generation, s.ObservedGeneration)
	case s.UpdatedReplicas != want || s.AvailableReplicas != want || s.ReadyReplicas != want || s.Replicas != want:
		return fmt.Errorf("replicas %d, updated %d, ready %d, available %d; want %d of each",
			s.Replicas, s.UpdatedReplicas, s.ReadyReplicas, s.AvailableReplicas, want)
	}
	for _, c := range s.Conditions {
		if c.Type == appsv1.DeploymentAvailable && c.Status != corev1.ConditionTrue {
			return fmt.Errorf("not Available: %s", c.Message)
		}
	}
	return nil
}

func statefulSetComplete(s *appsv1.StatefulSet) error {
	want := ptr.Deref(s.Spec.Replicas, 1)
	st := s.Status
	switch {
	case st.ObservedGeneration < s.Generation:
		return fmt.Errorf("generation %d not observed yet (%d)", s.Generation, st.ObservedGeneration)
	case st.UpdateRevision != st.CurrentRevision:
		return fmt.Errorf("update revision %s is not current (%s)", st.UpdateRevision, st.CurrentRevision)
	case st.ReadyReplicas != want || st.UpdatedReplicas != want || st.CurrentReplicas != want:
		return fmt.Errorf("ready %d, updated %d, current %d; want %d of each", st.ReadyReplicas, st.UpdatedReplicas, st.CurrentReplicas, want)
	}
	return nil
}

func daemonSetComplete(d *appsv1.DaemonSet) error {
	s := d.Status
	switch {
	case s.ObservedGeneration < d.Generation:
		return fmt.Errorf("generation %d not observed yet (%d)", d.Generation, s.ObservedGeneration)
	case s.DesiredNumberScheduled != int32(len(env.Nodes)):
		return fmt.Errorf("%d pods desired, want one on each of %d nodes", s.DesiredNumberScheduled, len(env.Nodes))
	case s.UpdatedNumberScheduled != s.DesiredNumberScheduled || s.NumberAvailable != s.DesiredNumberScheduled || s.NumberUnavailable != 0:
		return fmt.Errorf("desired %d, updated %d, available %d, unavailable %d",
			s.DesiredNumberScheduled, s.UpdatedNumberScheduled, s.NumberAvailable, s.NumberUnavailable)
	}
	return nil
}

// ownedReplicaSets lists the ReplicaSets of Deployment app.
func ownedReplicaSets(ctx context.Context, ns, app string) []appsv1.ReplicaSet {
	list, err := clientset.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{
		LabelSelector: labels.SelectorFromSet(appLabels(app)).String(),
	})
	Expect(err).NotTo(HaveOccurred())
	return list.Items
}

// podsOf lists the pods of app that are not being deleted.
func podsOf(ctx context.Context, ns, app string) []corev1.Pod {
	list, err := clientset.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{
		LabelSelector: labels.SelectorFromSet(appLabels(app)).String(),
	})
	Expect(err).NotTo(HaveOccurred())
	var pods []corev1.Pod
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil {
			pods = append(pods, p)
		}
	}
	return pods
}
