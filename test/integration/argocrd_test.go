package integration

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/ripple-controller/ripple/internal/workload"
)

// argoRolloutsModule is the Argo Rollouts release whose Rollout CRD the
// specs install, straight from the Go module, never a copy kept here.
const argoRolloutsModule = "github.com/argoproj/argo-rollouts@v1.10.1"

// rolloutCRD is the installed CRD, nil while it is not installed. Each
// process of the suite has its own API server, and its specs run one at a
// time, so installing and uninstalling it concerns no other process.
var rolloutCRD []*apiextensionsv1.CustomResourceDefinition

// rolloutCRDFile finds the CRD in the module cache, downloading the module
// through the Go toolchain if needed.
func rolloutCRDFile() string {
	GinkgoHelper()
	// Outside ripple's module, so that its go.mod and go.sum stay as they are.
	dir, err := os.MkdirTemp("", "ripple-argo-crd-")
	Expect(err).NotTo(HaveOccurred())
	defer func() { _ = os.RemoveAll(dir) }()
	cmd := exec.Command("go", "mod", "download", "-json", argoRolloutsModule)
	cmd.Dir = dir
	out, err := cmd.Output()
	Expect(err).NotTo(HaveOccurred(), "go mod download %s: %s", argoRolloutsModule, out)
	var mod struct{ Dir string }
	Expect(json.Unmarshal(out, &mod)).To(Succeed())
	return filepath.Join(mod.Dir, "manifests", "crds", "rollout-crd.yaml")
}

// installRolloutCRD makes the API server serve Rollouts, and waits until it
// does.
func installRolloutCRD() {
	GinkgoHelper()
	if rolloutCRD != nil {
		return
	}
	crds, err := envtest.InstallCRDs(restConfig, envtest.CRDInstallOptions{Paths: []string{rolloutCRDFile()}, ErrorIfPathMissing: true})
	Expect(err).NotTo(HaveOccurred())
	Expect(crds).To(HaveLen(1))
	rolloutCRD = crds
}

// uninstallRolloutCRD stops the API server serving Rollouts, and waits
// until its discovery, which ripple reads at start, says so too.
func uninstallRolloutCRD() {
	GinkgoHelper()
	if rolloutCRD == nil {
		return
	}
	Expect(envtest.UninstallCRDs(restConfig, envtest.CRDInstallOptions{CRDs: rolloutCRD})).To(Succeed())
	rolloutCRD = nil
	Eventually(func() error {
		_, err := clientset.Discovery().ServerResourcesForGroupVersion(workload.ArgoGroupVersion.String())
		return err
	}, 30*time.Second).Should(Satisfy(apierrors.IsNotFound))
}
