package e2e

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/ripple-controller/ripple/internal/annotations"
)

func jobTemplate(cm string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever,
		// kwok runs no containers; the image is never pulled.
		Containers: []corev1.Container{{Name: "job", Image: "registry.k8s.io/pause:3.10",
			EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: cm}}}}}},
	}}
}

func editConfigMap(ctx context.Context, ns, name, value string) {
	GinkgoHelper()
	cm, err := clientset.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
	Expect(err).NotTo(HaveOccurred())
	cm.Data["k"] = value
	_, err = clientset.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{})
	Expect(err).NotTo(HaveOccurred())
}

func jobSucceeded(j *batchv1.Job) error {
	for _, c := range j.Status.Conditions {
		if c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue {
			return nil
		}
	}
	return fmt.Errorf("job %s: succeeded %d, active %d, not complete", j.Name, j.Status.Succeeded, j.Status.Active)
}

var _ = Describe("CronJobs and Jobs on a full cluster", func() {
	It("runs a CronJob's jobTemplate as a Job that completes when its ConfigMap changes", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		_, err := clientset.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg"}, Data: map[string]string{"k": "1"}}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		_, err = clientset.BatchV1().CronJobs(ns).Create(ctx, &batchv1.CronJob{
			ObjectMeta: metav1.ObjectMeta{Name: "nightly", Annotations: map[string]string{annotations.Auto: "true"}},
			Spec:       batchv1.CronJobSpec{Schedule: "0 0 1 1 *", JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: jobTemplate("cfg")}}},
		}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		startRipple()
		Eventually(func(g Gomega) {
			cj, err := clientset.BatchV1().CronJobs(ns).Get(ctx, "nightly", metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(cj.Annotations).To(HaveKey(annotations.Recorded))
		}).WithContext(ctx).WithTimeout(rolloutTimeout).Should(Succeed())

		editConfigMap(ctx, ns, "cfg", "2")
		Eventually(func(g Gomega) {
			jobs, err := clientset.BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(jobs.Items).To(HaveLen(1))
			g.Expect(jobs.Items[0].Name).To(HavePrefix("nightly-reload-"))
			g.Expect(jobSucceeded(&jobs.Items[0])).To(Succeed())
		}).WithContext(ctx).WithTimeout(rolloutTimeout).Should(Succeed())
	}, SpecTimeout(4*time.Minute))

	It("recreates a running Job only once its pods are gone, and the new Job completes", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		// The Job's pod waits for a node labelled for this spec, so the Job
		// is still running when its ConfigMap changes.
		gate := "ripple-e2e/" + ns
		_, err := clientset.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg"}, Data: map[string]string{"k": "1"}}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		tmpl := jobTemplate("cfg")
		tmpl.Spec.NodeSelector = map[string]string{gate: "open"}
		old, err := clientset.BatchV1().Jobs(ns).Create(ctx, &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Name: "migrate", Annotations: map[string]string{annotations.Auto: "true"}},
			Spec:       batchv1.JobSpec{BackoffLimit: ptr.To[int32](1), Template: tmpl},
		}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		oldPods := metav1.ListOptions{LabelSelector: batchv1.ControllerUidLabel + "=" + string(old.UID)}
		Eventually(func() ([]corev1.Pod, error) {
			pods, err := clientset.CoreV1().Pods(ns).List(ctx, oldPods)
			return pods.Items, err
		}).WithContext(ctx).WithTimeout(rolloutTimeout).ShouldNot(BeEmpty(), "the Job runs a pod")
		startRipple()
		Eventually(func(g Gomega) {
			j, err := clientset.BatchV1().Jobs(ns).Get(ctx, "migrate", metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(j.Annotations).To(HaveKey(annotations.Recorded))
		}).WithContext(ctx).WithTimeout(rolloutTimeout).Should(Succeed())

		editConfigMap(ctx, ns, "cfg", "2")
		var next *batchv1.Job
		Eventually(func(g Gomega) {
			j, err := clientset.BatchV1().Jobs(ns).Get(ctx, "migrate", metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(j.UID).NotTo(Equal(old.UID))
			next = j
		}).WithContext(ctx).WithTimeout(rolloutTimeout).Should(Succeed())
		pods, err := clientset.CoreV1().Pods(ns).List(ctx, oldPods)
		Expect(err).NotTo(HaveOccurred())
		Expect(pods.Items).To(BeEmpty(), "the old Job's pods were gone when the new Job was created")
		Expect(next.Spec.Template.Annotations).To(HaveKey(annotations.ConfigDigest))

		openGate(ctx, gate)
		Eventually(func() error {
			j, err := clientset.BatchV1().Jobs(ns).Get(ctx, "migrate", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if j.UID != next.UID {
				return fmt.Errorf("the Job was recreated again")
			}
			return jobSucceeded(j)
		}).WithContext(ctx).WithTimeout(rolloutTimeout).Should(Succeed())
	}, SpecTimeout(4*time.Minute))
})

// openGate labels a kwok node with gate=open until the spec ends.
func openGate(ctx context.Context, gate string) {
	GinkgoHelper()
	nodes, err := clientset.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	Expect(err).NotTo(HaveOccurred())
	Expect(nodes.Items).NotTo(BeEmpty())
	name := nodes.Items[0].Name
	label := func(value string) []byte {
		if value == "" {
			return fmt.Appendf(nil, `{"metadata":{"labels":{%q:null}}}`, gate)
		}
		return fmt.Appendf(nil, `{"metadata":{"labels":{%q:%q}}}`, gate, value)
	}
	_, err = clientset.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, label("open"), metav1.PatchOptions{})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func(ctx SpecContext) {
		_, err := clientset.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, label(""), metav1.PatchOptions{})
		Expect(err).NotTo(HaveOccurred())
	})
}
