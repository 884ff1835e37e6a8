// Package e2e holds the end-to-end specs, which run against a full local
// cluster (test/cluster.StartFull): real kube-apiserver, controller manager
// and scheduler, and kwok nodes on which pods become Ready.
package e2e

import (
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/kubernetes"

	"github.com/ripple-controller/ripple/test/cluster"
)

var (
	env       *cluster.Cluster
	clientset kubernetes.Interface
)

func TestE2E(t *testing.T) {
	RegisterFailHandler(Fail)
	suiteConfig, reporterConfig := GinkgoConfiguration()
	// Time out in Ginkgo a minute before `go test -timeout` would panic, so
	// that the cleanup still runs and stops the cluster.
	if deadline, ok := t.Deadline(); ok {
		if left := time.Until(deadline) - time.Minute; left > 0 && left < suiteConfig.Timeout {
			suiteConfig.Timeout = left
		}
	}
	RunSpecs(t, "e2e", suiteConfig, reporterConfig)
}

var _ = BeforeSuite(func(ctx SpecContext) {
	// Each poll is a request to a cluster busy rolling out; what the specs
	// wait for stays once it happens, so Gomega's 10 ms is needless load.
	SetDefaultEventuallyPollingInterval(100 * time.Millisecond)
	SetDefaultConsistentlyPollingInterval(100 * time.Millisecond)
	var err error
	env, err = cluster.StartFull(ctx, cluster.Options{Nodes: 2})
	Expect(err).NotTo(HaveOccurred(), "starting the local cluster")
	DeferCleanup(env.Stop)
	GinkgoWriter.Printf("local cluster up: KUBECONFIG=%s, logs in %s\n", env.Kubeconfig, env.LogDir)

	clientset, err = kubernetes.NewForConfig(env.Config)
	Expect(err).NotTo(HaveOccurred())
}, NodeTimeout(5*time.Minute))

// A failed or interrupted spec keeps the cluster's logs for the post-mortem.
var _ = ReportAfterEach(func(report SpecReport) {
	if report.Failed() && env != nil {
		env.KeepLogs()
	}
})
