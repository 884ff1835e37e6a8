package e2e

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/ripple-controller/ripple/internal/annotations"
)

// reference is one way a pod spec uses a ConfigMap and a Secret.
type reference struct {
	name string
	use  func(s *corev1.PodSpec, configMap, secret string)
}

var references = []reference{
	{"volume", func(s *corev1.PodSpec, cm, sec string) {
		s.Volumes = append(s.Volumes,
			corev1.Volume{Name: "cm", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: cm}}}},
			corev1.Volume{Name: "secret", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: sec}}})
	}},
	{"projected", func(s *corev1.PodSpec, cm, sec string) {
		s.Volumes = append(s.Volumes, corev1.Volume{Name: "projected", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
			Sources: []corev1.VolumeProjection{
				{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: cm}}},
				{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: sec}}},
			}}}})
	}},
	{"env-valuefrom", func(s *corev1.PodSpec, cm, sec string) {
		s.Containers[0].Env = append(s.Containers[0].Env,
			corev1.EnvVar{Name: "FROM_CM", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: cm}, Key: "k"}}},
			corev1.EnvVar{Name: "FROM_SECRET", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: sec}, Key: "k"}}})
	}},
	{"envfrom", func(s *corev1.PodSpec, cm, sec string) {
		s.Containers[0].EnvFrom = append(s.Containers[0].EnvFrom,
			corev1.EnvFromSource{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: cm}}},
			corev1.EnvFromSource{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: sec}}})
	}},
}

// rollable is one workload kind as the e2e specs drive it.
type rollable struct {
	kind   string
	create func(ctx context.Context, ns, name string, tmpl corev1.PodTemplateSpec)
	get    func(ctx context.Context, ns, name string) (metav1.Object, *corev1.PodTemplateSpec, error)
}

var rollables = []rollable{
	{
		kind: "Deployment",
		create: func(ctx context.Context, ns, name string, tmpl corev1.PodTemplateSpec) {
			_, err := clientset.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{
				ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{annotations.Auto: "true"}},
				Spec:       appsv1.DeploymentSpec{Replicas: ptr.To[int32](2), Selector: &metav1.LabelSelector{MatchLabels: appLabels(name)}, Template: tmpl},
			}, metav1.CreateOptions{})
			Expect(err).NotTo(HaveOccurred())
		},
		get: func(ctx context.Context, ns, name string) (metav1.Object, *corev1.PodTemplateSpec, error) {
			d, err := clientset.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return nil, nil, err
			}
			return d, &d.Spec.Template, deploymentComplete(d)
		},
	},
	{
		kind: "StatefulSet",
		create: func(ctx context.Context, ns, name string, tmpl corev1.PodTemplateSpec) {
			_, err := clientset.AppsV1().StatefulSets(ns).Create(ctx, &appsv1.StatefulSet{
				ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{annotations.Auto: "true"}},
				Spec:       appsv1.StatefulSetSpec{Replicas: ptr.To[int32](2), Selector: &metav1.LabelSelector{MatchLabels: appLabels(name)}, Template: tmpl},
			}, metav1.CreateOptions{})
			Expect(err).NotTo(HaveOccurred())
		},
		get: func(ctx context.Context, ns, name string) (metav1.Object, *corev1.PodTemplateSpec, error) {
			s, err := clientset.AppsV1().StatefulSets(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return nil, nil, err
			}
			return s, &s.Spec.Template, statefulSetComplete(s)
		},
	},
	{
		kind: "DaemonSet",
		create: func(ctx context.Context, ns, name string, tmpl corev1.PodTemplateSpec) {
			_, err := clientset.AppsV1().DaemonSets(ns).Create(ctx, &appsv1.DaemonSet{
				ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{annotations.Auto: "true"}},
				Spec:       appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: appLabels(name)}, Template: tmpl},
			}, metav1.CreateOptions{})
			Expect(err).NotTo(HaveOccurred())
		},
		get: func(ctx context.Context, ns, name string) (metav1.Object, *corev1.PodTemplateSpec, error) {
			d, err := clientset.AppsV1().DaemonSets(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return nil, nil, err
			}
			return d, &d.Spec.Template, daemonSetComplete(d)
		},
	},
}

var _ = Describe("ripple on a full cluster", func() {
	for _, w := range rollables {
		It("completes rollouts of each "+w.kind+" after a ConfigMap edit and after a Secret edit, whichever way it uses them", func(ctx SpecContext) {
			ns := newNamespace(ctx)
			_, err := clientset.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg"}, Data: map[string]string{"k": "1"}}, metav1.CreateOptions{})
			Expect(err).NotTo(HaveOccurred())
			_, err = clientset.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "creds"}, StringData: map[string]string{"k": "1"}}, metav1.CreateOptions{})
			Expect(err).NotTo(HaveOccurred())
			for _, ref := range references {
				tmpl := podTemplate(ref.name)
				ref.use(&tmpl.Spec, "cfg", "creds")
				w.create(ctx, ns, ref.name, tmpl)
			}
			startRipple()

			By("waiting for every workload to be available and recorded without a rollout")
			digests := waitAllComplete(ctx, w, ns, "")

			By("editing the ConfigMap")
			cm, err := clientset.CoreV1().ConfigMaps(ns).Get(ctx, "cfg", metav1.GetOptions{})
			Expect(err).NotTo(HaveOccurred())
			cm.Data["k"] = "2"
			_, err = clientset.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{})
			Expect(err).NotTo(HaveOccurred())
			afterConfigMap := waitAllRolled(ctx, w, ns, digests)

			By("editing the Secret")
			sec, err := clientset.CoreV1().Secrets(ns).Get(ctx, "creds", metav1.GetOptions{})
			Expect(err).NotTo(HaveOccurred())
			sec.Data["k"] = []byte("2")
			_, err = clientset.CoreV1().Secrets(ns).Update(ctx, sec, metav1.UpdateOptions{})
			Expect(err).NotTo(HaveOccurred())
			waitAllRolled(ctx, w, ns, afterConfigMap)
		}, SpecTimeout(6*time.Minute))
	}
})

// waitAllComplete waits until every reference's workload has completed its
// rollout with the given digest, and returns the digests.
func waitAllComplete(ctx context.Context, w rollable, ns, digest string) map[string]string {
	GinkgoHelper()
	out := map[string]string{}
	for _, ref := range references {
		Eventually(func(g Gomega) {
			obj, tmpl, err := w.get(ctx, ns, ref.name)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(obj.GetAnnotations()).To(HaveKey(annotations.Recorded))
			g.Expect(tmpl.Annotations[annotations.ConfigDigest]).To(Equal(digest))
			out[ref.name] = tmpl.Annotations[annotations.ConfigDigest]
		}).WithContext(ctx).WithTimeout(rolloutTimeout).Should(Succeed(), "%s %s", w.kind, ref.name)
	}
	return out
}

// waitAllRolled waits until every workload has a new digest and its
// rollout with it has completed, and returns the new digests.
func waitAllRolled(ctx context.Context, w rollable, ns string, before map[string]string) map[string]string {
	GinkgoHelper()
	out := map[string]string{}
	for _, ref := range references {
		Eventually(func(g Gomega) {
			_, tmpl, err := w.get(ctx, ns, ref.name)
			g.Expect(tmpl).NotTo(BeNil())
			g.Expect(tmpl.Annotations[annotations.ConfigDigest]).NotTo(Equal(before[ref.name]), "%s %s rolled", w.kind, ref.name)
			g.Expect(err).NotTo(HaveOccurred(), "%s %s completed its rollout", w.kind, ref.name)
			out[ref.name] = tmpl.Annotations[annotations.ConfigDigest]
		}).WithContext(ctx).WithTimeout(rolloutTimeout).Should(Succeed())
	}
	return out
}
