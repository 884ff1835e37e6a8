// Package chart tests how ripple is shipped: the Helm chart in charts/ripple
// and the kustomize bases in config/.
//
// Offline specs lint the chart and compare `helm template` with golden files
// (regenerate them with `go test ./test/chart -update`). The other specs
// install the chart, or apply config/, into a local kube-apiserver with RBAC
// enforced and run ripple in-process under the ServiceAccount the install
// created, with the arguments its Deployment passes: ripple must do its whole
// job with those rights, and be refused what it must not have.
package chart

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/ripple-controller/ripple/test/cluster"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/ from the current chart")

var (
	// root is the repository, chartDir the chart in it.
	root, chartDir string
	helm           *helmCLI

	controlPlane *cluster.ControlPlane
	admin        *rest.Config
	k8s          client.Client
	clientset    kubernetes.Interface
)

func TestChart(t *testing.T) {
	RegisterFailHandler(Fail)
	suiteConfig, reporterConfig := GinkgoConfiguration()
	// Time out in Ginkgo a minute before `go test -timeout` panics, so the
	// cleanup still stops the control plane.
	if deadline, ok := t.Deadline(); ok {
		if left := time.Until(deadline) - time.Minute; left > 0 && left < suiteConfig.Timeout {
			suiteConfig.Timeout = left
		}
	}
	RunSpecs(t, "ripple chart and kustomize", suiteConfig, reporterConfig)
}

var _ = BeforeSuite(func() {
	ctrl.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	var err error
	root, err = repoRoot()
	Expect(err).NotTo(HaveOccurred())
	chartDir = filepath.Join(root, "charts", "ripple")
	helm, err = newHelm(root, GinkgoT().TempDir())
	Expect(err).NotTo(HaveOccurred(), "the helm binary must be there; nothing is skipped")

	controlPlane, err = cluster.StartControlPlane()
	Expect(err).NotTo(HaveOccurred(), "the control plane must start; nothing is skipped")
	DeferCleanup(func() { Expect(controlPlane.Stop()).To(Succeed()) })
	admin = controlPlane.Config
	k8s, err = client.New(admin, client.Options{Scheme: clientgoscheme.Scheme})
	Expect(err).NotTo(HaveOccurred())
	clientset, err = kubernetes.NewForConfig(admin)
	Expect(err).NotTo(HaveOccurred())
	Expect(helm.useCluster(admin)).To(Succeed())
})

var _ = ReportAfterEach(func(r SpecReport) {
	if r.Failed() && controlPlane != nil {
		controlPlane.KeepLogs()
	}
})

// repoRoot walks up from the working directory (the package directory under
// `go test`) to the directory holding go.mod.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", os.ErrNotExist
		}
		dir = parent
	}
}

// testCtx bounds one API call or one helm run made by a spec.
func testCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), time.Minute)
}
