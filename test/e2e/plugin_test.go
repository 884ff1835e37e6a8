package e2e

import (
	"os"
	"os/exec"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ripple-controller/ripple/internal/annotations"
)

// kubectl runs a plugin by finding kubectl-<name> on PATH and executing it
// with the arguments after the name and kubectl's environment
// (https://kubernetes.io/docs/tasks/extend-kubectl/kubectl-plugins/). This
// spec runs the binary exactly so, under that name.
var _ = Describe("The ripple binary as a kubectl plugin", func() {
	It("explains a ConfigMap when run as kubectl-ripple with KUBECONFIG from the environment", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		_, err := clientset.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg"}}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		createDeploymentReading(ctx, ns, "web", map[string]string{annotations.Auto: "true"})
		plugin := filepath.Join(GinkgoT().TempDir(), "kubectl-ripple")
		Expect(os.Symlink(rippleBinary(), plugin)).To(Succeed())

		cmd := exec.CommandContext(ctx, plugin, "explain", "configmap", "cfg", "-n", ns)
		cmd.Env = append(os.Environ(), "KUBECONFIG="+env.Kubeconfig)
		out, err := cmd.CombinedOutput()

		Expect(err).NotTo(HaveOccurred(), "%s", out)
		Expect(string(out)).To(Equal("ConfigMap " + ns + "/cfg\n" +
			"WORKLOAD        ROLLS  WHY\n" +
			"Deployment/web  yes    auto: reloader.stakater.com/auto=true; uses it: envFrom of container web\n"))
	})
})
