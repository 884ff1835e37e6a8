package bench

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/ripple-controller/ripple/test/cluster"
)

// RippleUser is the user ripple authenticates as, and the floor too. The API
// server's audit policy logs this user's requests and nobody else's, so the
// bench counts exactly the requests ripple makes (the floor never runs at
// the same time), and each request of ripple and of the floor costs the API
// server the same audit write.
const RippleUser = "ripple-bench"

// auditPolicy logs the metadata of every request of RippleUser and nothing
// of anyone else: the bench's own creates and edits stay out of the log and
// cost the API server nothing.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
  users: ["` + RippleUser + `"]
- level: None
`

// Cluster is etcd and kube-apiserver tuned so that the API server is not
// the bottleneck: priority and fairness off and no in-flight limits, etcd
// without fsync. It uses the binaries of test/cluster (bin/k8s, `make tools`).
type Cluster struct {
	// Admin authenticates as a cluster administrator, for the bench itself.
	Admin *rest.Config
	// RippleKubeconfig is a kubeconfig file for RippleUser, a cluster admin,
	// and RippleConfig the same user's client configuration.
	RippleKubeconfig string
	RippleConfig     *rest.Config
	// AuditLog is the API server's audit log of RippleUser's requests.
	AuditLog string
	// Dir holds the logs, the audit policy and the kubeconfig.
	Dir string

	env *envtest.Environment
}

// StartCluster starts the control plane in a new directory under the system
// temporary directory.
func StartCluster() (*Cluster, error) {
	assets, err := cluster.ControlPlaneAssetsDir()
	if err != nil {
		return nil, err
	}
	for _, bin := range []string{"etcd", "kube-apiserver"} {
		if _, err := os.Stat(filepath.Join(assets, bin)); err != nil {
			return nil, fmt.Errorf("%s missing in %s: run `make tools`: %w", bin, assets, err)
		}
	}
	dir, err := os.MkdirTemp("", "ripple-bench-")
	if err != nil {
		return nil, err
	}
	c := &Cluster{Dir: dir, AuditLog: filepath.Join(dir, "audit.log")}
	policy := filepath.Join(dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		return nil, err
	}
	etcdLog, err := os.Create(filepath.Join(dir, "etcd.log"))
	if err != nil {
		return nil, err
	}
	apiLog, err := os.Create(filepath.Join(dir, "kube-apiserver.log"))
	if err != nil {
		return nil, err
	}
	useExisting := false
	c.env = &envtest.Environment{
		UseExistingCluster:       &useExisting,
		BinaryAssetsDirectory:    assets,
		ControlPlaneStartTimeout: 3 * time.Minute,
		ControlPlaneStopTimeout:  time.Minute,
	}
	etcd := &envtest.Etcd{Path: filepath.Join(assets, "etcd"), Out: etcdLog, Err: etcdLog}
	etcd.Configure().Set("unsafe-no-fsync", "true").Set("quota-backend-bytes", "8589934592")
	c.env.ControlPlane.Etcd = etcd
	api := c.env.ControlPlane.GetAPIServer()
	api.Path = filepath.Join(assets, "kube-apiserver")
	api.Out, api.Err = apiLog, apiLog
	api.Configure().
		// Without priority and fairness, 0 lifts the in-flight limits.
		Set("enable-priority-and-fairness", "false").
		Set("max-requests-inflight", "0").
		Set("max-mutating-requests-inflight", "0").
		Set("audit-policy-file", policy).
		Set("audit-log-path", c.AuditLog).
		Set("audit-log-format", "json").
		Set("audit-log-mode", "blocking")

	cfg, err := c.env.Start()
	if err != nil {
		return nil, errors.Join(fmt.Errorf("starting the control plane (logs in %s): %w", dir, err), c.env.Stop())
	}
	c.Admin = cfg
	user, err := c.env.ControlPlane.AddUser(envtest.User{Name: RippleUser, Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return nil, errors.Join(err, c.Stop())
	}
	c.RippleConfig = user.Config()
	c.RippleKubeconfig = filepath.Join(dir, "ripple.kubeconfig")
	if err := cluster.WriteKubeconfig(c.RippleKubeconfig, user.Config(), ""); err != nil {
		return nil, errors.Join(err, c.Stop())
	}
	return c, nil
}

// Stop stops the control plane; Cleanup removes its directory.
func (c *Cluster) Stop() error { return c.env.Stop() }

// Cleanup removes the cluster's directory.
func (c *Cluster) Cleanup() error { return os.RemoveAll(c.Dir) }

// Clientset returns a clientset for the bench with no client-side rate
// limit, speaking protobuf.
func (c *Cluster) Clientset() (kubernetes.Interface, error) {
	cfg := rest.CopyConfig(c.Admin)
	cfg.QPS, cfg.Burst = -1, 0
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	cfg.UserAgent = "ripple-bench"
	return kubernetes.NewForConfig(cfg)
}
