package cluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// startTimeout bounds how long one component may take to become healthy. It
// is generous because on a 2-core CI machine the API server competes with
// the compiler and other test binaries.
const startTimeout = 2 * time.Minute

// ControlPlane is etcd and kube-apiserver run by envtest, for integration
// tests that need a real API server but no controllers, scheduler or nodes.
type ControlPlane struct {
	// Config authenticates as a cluster administrator.
	Config *rest.Config
	// LogDir holds etcd.log and kube-apiserver.log.
	LogDir string

	env      *envtest.Environment
	logs     []*os.File
	mu       sync.Mutex
	keepLogs bool
	stopped  bool
}

// StartControlPlane starts etcd and kube-apiserver on free loopback ports and
// waits until the API server serves. It fails, rather than skips, when a
// binary is missing or the control plane does not come up, and then keeps
// the logs and names them in the error.
//
// Callers must call Stop, e.g. with Ginkgo's DeferCleanup, and should call
// KeepLogs when a spec failed.
func StartControlPlane() (*ControlPlane, error) {
	dir, err := ControlPlaneAssetsDir()
	if err != nil {
		return nil, err
	}
	bins, err := findBinaries(dir, "etcd", "kube-apiserver")
	if err != nil {
		return nil, err
	}
	logDir, err := os.MkdirTemp("", "ripple-controlplane-logs-")
	if err != nil {
		return nil, fmt.Errorf("creating the control plane log dir: %w", err)
	}
	c := &ControlPlane{LogDir: logDir}
	etcdLog, err := c.openLog("etcd.log")
	if err != nil {
		return nil, errors.Join(err, c.cleanup())
	}
	apiLog, err := c.openLog("kube-apiserver.log")
	if err != nil {
		return nil, errors.Join(err, c.cleanup())
	}

	useExisting := false
	c.env = &envtest.Environment{
		// USE_EXISTING_CLUSTER must never point the tests at a real cluster.
		UseExistingCluster:       &useExisting,
		BinaryAssetsDirectory:    dir,
		ControlPlaneStartTimeout: startTimeout,
		ErrorIfCRDPathMissing:    true,
	}
	c.env.ControlPlane.Etcd = &envtest.Etcd{Path: bins["etcd"], Out: etcdLog, Err: etcdLog}
	api := c.env.ControlPlane.GetAPIServer()
	api.Path = bins["kube-apiserver"]
	api.Out, api.Err = apiLog, apiLog
	// Without these, envtest's 20 s stop timeout expires whenever a client
	// such as a controller under test still has a watch open.
	for _, f := range quickShutdown {
		api.Configure().Set(f.name, f.value)
	}
	// API Priority and Fairness only queues requests, which a test's few
	// clients never need, at a cost: with it off, kube-apiserver took
	// about a fifth less CPU to create, patch and read 300 Deployments.
	// The full cluster (StartFull) keeps it, as a real cluster does.
	api.Configure().Set("enable-priority-and-fairness", "false")

	cfg, err := c.env.Start()
	if err != nil {
		c.KeepLogs()
		stopErr := c.Stop()
		return nil, errors.Join(fmt.Errorf("starting etcd and kube-apiserver from %s (logs in %s): %w", dir, logDir, err), stopErr)
	}
	c.Config = cfg
	return c, nil
}

func (c *ControlPlane) openLog(name string) (*os.File, error) {
	f, err := os.Create(filepath.Join(c.LogDir, name))
	if err != nil {
		return nil, fmt.Errorf("creating the %s log: %w", name, err)
	}
	c.logs = append(c.logs, f)
	return f, nil
}

// KeepLogs makes Stop leave LogDir in place and print where it is, for a run
// whose failure someone will want to read about.
func (c *ControlPlane) KeepLogs() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.keepLogs = true
}

// Stop stops the API server and etcd and removes their data and, unless
// KeepLogs was called, their logs. It is safe to call more than once.
func (c *ControlPlane) Stop() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return nil
	}
	c.stopped = true
	var err error
	if c.env != nil {
		if stopErr := c.env.Stop(); stopErr != nil {
			c.keepLogs = true
			err = fmt.Errorf("stopping the control plane: %w", stopErr)
		}
	}
	return errors.Join(err, c.cleanup())
}

func (c *ControlPlane) cleanup() error {
	var errs []error
	for _, f := range c.logs {
		errs = append(errs, f.Close())
	}
	if c.keepLogs {
		fmt.Fprintf(os.Stderr, "control plane logs kept in %s\n", c.LogDir)
	} else if err := os.RemoveAll(c.LogDir); err != nil {
		errs = append(errs, fmt.Errorf("removing the control plane logs: %w", err))
	}
	return errors.Join(errs...)
}
