package cluster

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

func TestStartFailsLoudlyWithoutBinaries(t *testing.T) {
	t.Setenv(assetsEnv, t.TempDir())

	if c, err := StartControlPlane(); err == nil || !strings.Contains(err.Error(), "kube-apiserver") {
		if c != nil {
			_ = c.Stop()
		}
		t.Fatalf("StartControlPlane without binaries: got error %v, want one naming kube-apiserver", err)
	}
	if c, err := StartFull(context.Background(), Options{}); err == nil || !strings.Contains(err.Error(), "kube-controller-manager") {
		if c != nil {
			_ = c.Stop()
		}
		t.Fatalf("StartFull without binaries: got error %v, want one naming kube-controller-manager", err)
	}
}

func TestProcessThatExitsFailsToStartAndQuotesItsLog(t *testing.T) {
	p := &Process{
		name:    "liar",
		path:    "/bin/sh",
		args:    []string{"-c", "echo no such luck; exit 3"},
		logPath: t.TempDir() + "/liar.log",
		healthy: func(context.Context) error { return os.ErrNotExist },
	}
	err := p.Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), "exit status 3") || !strings.Contains(err.Error(), "no such luck") {
		t.Fatalf("got %v, want the exit status and the log in the error", err)
	}
	if p.Running() {
		t.Fatal("still running after a failed start")
	}
}

func TestControlPlaneServesAndCleansUp(t *testing.T) {
	c, err := StartControlPlane()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop() })
	client := kubernetes.NewForConfigOrDie(c.Config)
	if _, err := client.CoreV1().Namespaces().Get(context.Background(), "default", metav1.GetOptions{}); err != nil {
		t.Fatalf("getting the default namespace: %v", err)
	}
	// A controller under test often still watches when the suite ends.
	w, err := client.CoreV1().ConfigMaps("").Watch(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if err := c.Stop(); err != nil {
		t.Fatalf("stopping with a watch open: %v", err)
	}
	if _, err := os.Stat(c.LogDir); !os.IsNotExist(err) {
		t.Fatalf("log dir %s left behind after a clean stop: %v", c.LogDir, err)
	}
}

func TestThirdPartyCRDsInstallFromTheirModulesAndUninstall(t *testing.T) {
	c, err := StartControlPlane()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop() })
	disc := kubernetes.NewForConfigOrDie(c.Config).Discovery()
	served := func(gv, resource string) bool {
		list, err := disc.ServerResourcesForGroupVersion(gv)
		if err != nil {
			return false
		}
		for _, r := range list.APIResources {
			if r.Name == resource {
				return true
			}
		}
		return false
	}
	crds, err := InstallCRDs(c.Config, AllCRDs...)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range [][2]string{
		{"argoproj.io/v1alpha1", "rollouts"},
		{"secrets-store.csi.x-k8s.io/v1", "secretproviderclasses"},
		{"secrets-store.csi.x-k8s.io/v1", "secretproviderclasspodstatuses"},
	} {
		if !served(want[0], want[1]) {
			t.Errorf("%s %s is not served after InstallCRDs", want[0], want[1])
		}
	}
	if err := UninstallCRDs(c.Config, crds, RolloutCRD); err != nil {
		t.Fatal(err)
	}
	if served("argoproj.io/v1alpha1", "rollouts") {
		t.Errorf("rollouts are still served after UninstallCRDs")
	}
	if !served("secrets-store.csi.x-k8s.io/v1", "secretproviderclasses") {
		t.Errorf("UninstallCRDs of the Rollout CRD uninstalled another")
	}
}

// A later spec takes the API server away and brings it back; the cluster must
// carry on, with the same address, credentials and data.
func TestFullClusterCarriesOnAfterAnAPIServerRestart(t *testing.T) {
	ctx := context.Background()
	c, err := StartFull(ctx, Options{Nodes: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			c.KeepLogs()
		}
		if err := c.Stop(); err != nil {
			t.Error(err)
		}
	})
	client := kubernetes.NewForConfigOrDie(c.Config)

	// The controller manager, the scheduler and kwok all watch; the API
	// server must still go at once, not after its minute of grace.
	start := time.Now()
	if err := c.APIServer.Stop(); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took >= stopGrace {
		t.Fatalf("kube-apiserver took %s to stop, so it was killed", took)
	}
	if _, err := client.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{}); err == nil {
		t.Fatal("the API server still answers after Stop")
	}
	if err := c.APIServer.Start(ctx); err != nil {
		t.Fatal(err)
	}

	deployments := client.AppsV1().Deployments(metav1.NamespaceDefault)
	labels := map[string]string{"app": "after-restart"}
	_, err = deployments.Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "after-restart"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}}},
			},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		d, err := deployments.Get(ctx, "after-restart", metav1.GetOptions{})
		return err == nil && d.Status.AvailableReplicas == 1, nil
	})
	if err != nil {
		t.Fatalf("the Deployment created after the restart never became available: %v", err)
	}
}
