package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/ripple-controller/ripple/internal/annotations"
)

// argoDirEnv names the directory hack/argo-rollouts.sh builds the Argo
// Rollouts controller and its CRDs into; `make test-e2e-argo` sets it.
const argoDirEnv = "ARGO_ROLLOUTS_DIR"

var rollouts = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "rollouts"}

// startArgoRollouts installs every Argo CRD and runs the real Argo Rollouts
// controller against the cluster until the spec ends.
func startArgoRollouts(ctx context.Context) {
	GinkgoHelper()
	dir := os.Getenv(argoDirEnv)
	Expect(dir).NotTo(BeEmpty(), "%s must name the directory hack/argo-rollouts.sh built: run `make test-e2e-argo`", argoDirEnv)
	_, err := envtest.InstallCRDs(env.Config, envtest.CRDInstallOptions{Paths: []string{filepath.Join(dir, "crds")}, ErrorIfPathMissing: true})
	Expect(err).NotTo(HaveOccurred())
	logPath := filepath.Join(env.LogDir, "argo-rollouts.log")
	logFile, err := os.Create(logPath)
	Expect(err).NotTo(HaveOccurred())
	cmd := exec.Command(filepath.Join(dir, "rollouts-controller"), "--kubeconfig="+env.Kubeconfig, "--leader-elect=false",
		"--metricsPort=0", "--healthzPort=0", "--rollout-resync=10")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	Expect(cmd.Start()).To(Succeed())
	GinkgoWriter.Printf("argo rollouts controller pid %d logs to %s\n", cmd.Process.Pid, logPath)
	DeferCleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		_ = logFile.Close()
	})
}

func newRollout(name string, ann map[string]string) *unstructured.Unstructured {
	tmpl := podTemplate(name)
	tmpl.Spec.Containers[0].EnvFrom = []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}}
	t, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&tmpl)
	Expect(err).NotTo(HaveOccurred())
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout",
		"metadata": map[string]any{"name": name},
		"spec": map[string]any{
			"replicas": int64(2),
			"selector": map[string]any{"matchLabels": map[string]any{"app": name}},
			"template": t,
			"strategy": map[string]any{"canary": map[string]any{"steps": []any{map[string]any{"setWeight": int64(100)}}}},
		},
	}}
	u.SetAnnotations(ann)
	return u
}

// rolloutState is what the specs read of a Rollout as Argo reports it.
type rolloutState struct {
	phase, stableRS, currentPodHash, restartedAt, stamp string
	updated, available                                  int64
	recorded                                            bool
}

func readRollout(ctx context.Context, client dynamic.Interface, ns, name string) (rolloutState, error) {
	u, err := client.Resource(rollouts).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return rolloutState{}, err
	}
	s := rolloutState{}
	s.phase, _, _ = unstructured.NestedString(u.Object, "status", "phase")
	s.stableRS, _, _ = unstructured.NestedString(u.Object, "status", "stableRS")
	s.currentPodHash, _, _ = unstructured.NestedString(u.Object, "status", "currentPodHash")
	s.restartedAt, _, _ = unstructured.NestedString(u.Object, "status", "restartedAt")
	s.stamp, _, _ = unstructured.NestedString(u.Object, "spec", "template", "metadata", "annotations", annotations.ConfigDigest)
	_, s.recorded = u.GetAnnotations()[annotations.Recorded]
	s.updated, _, _ = unstructured.NestedInt64(u.Object, "status", "updatedReplicas")
	s.available, _, _ = unstructured.NestedInt64(u.Object, "status", "availableReplicas")
	return s, nil
}

// healthy waits until Argo reports the Rollout fully rolled out, and returns
// its state then.
func healthy(ctx context.Context, client dynamic.Interface, ns, name string, check func(g Gomega, s rolloutState)) rolloutState {
	GinkgoHelper()
	var out rolloutState
	Eventually(func(g Gomega) {
		s, err := readRollout(ctx, client, ns, name)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(s.phase).To(Equal("Healthy"))
		g.Expect(s.stableRS).To(Equal(s.currentPodHash))
		g.Expect(s.updated).To(BeEquivalentTo(2))
		g.Expect(s.available).To(BeEquivalentTo(2))
		check(g, s)
		out = s
	}).WithContext(ctx).WithTimeout(rolloutTimeout).Should(Succeed())
	return out
}

func runningPods(ctx context.Context, ns, name string) []string {
	GinkgoHelper()
	pods, err := clientset.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=" + name})
	Expect(err).NotTo(HaveOccurred())
	var out []string
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			out = append(out, string(p.UID))
		}
	}
	return out
}

var _ = Describe("Argo Rollouts under the real Argo Rollouts controller", Label("argo-controller"), func() {
	DescribeTable("rolls a Rollout to completion when its ConfigMap changes",
		func(ctx SpecContext, strategy string) {
			startArgoRollouts(ctx)
			client, err := dynamic.NewForConfig(env.Config)
			Expect(err).NotTo(HaveOccurred())
			ns := newNamespace(ctx)
			_, err = clientset.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg"}, Data: map[string]string{"k": "1"}}, metav1.CreateOptions{})
			Expect(err).NotTo(HaveOccurred())
			ann := map[string]string{annotations.Auto: "true"}
			if strategy != "" {
				ann[annotations.RolloutStrategy] = strategy
			}
			_, err = client.Resource(rollouts).Namespace(ns).Create(ctx, newRollout("web", ann), metav1.CreateOptions{})
			Expect(err).NotTo(HaveOccurred())
			startRipple("--is-Argo-Rollouts=true")
			before := healthy(ctx, client, ns, "web", func(g Gomega, s rolloutState) {
				g.Expect(s.recorded).To(BeTrue(), "ripple recorded the Rollout")
			})
			pods := runningPods(ctx, ns, "web")
			Expect(pods).To(HaveLen(2))

			editConfigMap(ctx, ns, "cfg", "2")
			if strategy == "restart" {
				healthy(ctx, client, ns, "web", func(g Gomega, s rolloutState) {
					g.Expect(s.restartedAt).NotTo(BeEmpty(), "Argo restarted the pods")
					g.Expect(s.stableRS).To(Equal(before.stableRS), "same ReplicaSet")
					g.Expect(runningPods(ctx, ns, "web")).To(And(HaveLen(2), Not(ContainElements(pods))), "new pods")
				})
				return
			}
			healthy(ctx, client, ns, "web", func(g Gomega, s rolloutState) {
				g.Expect(s.stamp).NotTo(Equal(before.stamp), "ripple stamped the template")
				g.Expect(s.stableRS).NotTo(Equal(before.stableRS), "a new ReplicaSet is stable")
				g.Expect(runningPods(ctx, ns, "web")).To(And(HaveLen(2), Not(ContainElements(pods))))
			})
		},
		Entry("through the pod template (Reloader's default)", "", SpecTimeout(5*time.Minute)),
		Entry("through spec.restartAt (rollout-strategy: restart)", "restart", SpecTimeout(5*time.Minute)),
	)
})
