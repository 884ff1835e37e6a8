// Package integration holds ripple's Ginkgo specs against a real
// kube-apiserver and etcd. No controllers run, so a workload's generation
// and resourceVersion move only when ripple (or the spec) writes to it.
package integration

import (
	"context"
	"os"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/ripple-controller/ripple/test/cluster"
)

// pollInterval is how often Eventually and Consistently poll.
const pollInterval = 100 * time.Millisecond

// podNamespace is the variable ripple takes its own namespace from.
const podNamespace = "POD_NAMESPACE"

var (
	controlPlane *cluster.ControlPlane
	restConfig   *rest.Config
	k8s          client.Client
	watcher      client.WithWatch
	clientset    kubernetes.Interface
	suiteCtx     context.Context
)

func TestIntegration(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "ripple integration")
}

var _ = BeforeSuite(func() {
	ctrl.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	// Gomega polls every 10 ms by default: each poll is a request, and
	// eight processes polling so made most of the API servers' and etcd's
	// work (at 100 ms the suite took 28% less CPU). What the specs wait
	// for stays once it happens (a write, a rollout), so a later poll sees
	// it all the same.
	SetDefaultEventuallyPollingInterval(pollInterval)
	SetDefaultConsistentlyPollingInterval(pollInterval)
	// ripple keeps its digest key in its own namespace, which it takes from
	// POD_NAMESPACE first. Pin it, so that neither the machine running the
	// specs (a pod, a kubeconfig) nor a spec that moves it leaks into others.
	Expect(os.Setenv(podNamespace, metav1.NamespaceDefault)).To(Succeed())
	var cancel context.CancelFunc
	suiteCtx, cancel = context.WithCancel(context.Background())
	DeferCleanup(cancel)

	var err error
	controlPlane, err = cluster.StartControlPlane()
	Expect(err).NotTo(HaveOccurred(), "the control plane must start; nothing is skipped")
	DeferCleanup(func() { Expect(controlPlane.Stop()).To(Succeed()) })
	restConfig = controlPlane.Config
	k8s, err = client.New(restConfig, client.Options{Scheme: clientgoscheme.Scheme})
	Expect(err).NotTo(HaveOccurred())
	watcher, err = client.NewWithWatch(restConfig, client.Options{Scheme: clientgoscheme.Scheme})
	Expect(err).NotTo(HaveOccurred())
	clientset, err = kubernetes.NewForConfig(restConfig)
	Expect(err).NotTo(HaveOccurred())
})

var _ = ReportAfterEach(func(r SpecReport) {
	if r.Failed() && controlPlane != nil {
		controlPlane.KeepLogs()
	}
})
