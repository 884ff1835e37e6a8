package integration

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/ripple-controller/ripple/test/cluster"
)

// rolloutCRD is the installed Rollout CRD, the real one from the Argo
// Rollouts Go module (see test/cluster), nil while it is not installed.
// Each process of the suite has its own API server, and its specs run one
// at a time, so installing and uninstalling it concerns no other process.
var rolloutCRD []*apiextensionsv1.CustomResourceDefinition

// installRolloutCRD makes the API server serve Rollouts, and waits until it
// does.
func installRolloutCRD() {
	GinkgoHelper()
	if rolloutCRD != nil {
		return
	}
	crds, err := cluster.InstallCRDs(restConfig, cluster.RolloutCRD)
	Expect(err).NotTo(HaveOccurred())
	rolloutCRD = crds
}

// uninstallRolloutCRD stops the API server serving Rollouts, and waits
// until its discovery, which ripple reads at start, says so too.
func uninstallRolloutCRD() {
	GinkgoHelper()
	if rolloutCRD == nil {
		return
	}
	Expect(cluster.UninstallCRDs(restConfig, rolloutCRD, cluster.RolloutCRD)).To(Succeed())
	rolloutCRD = nil
}
