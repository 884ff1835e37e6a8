package cluster

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

const (
	// defaultNodes is enough for a DaemonSet rollout to be more than one pod
	// and for two replicas to spread.
	defaultNodes = 2
	// serviceCIDR must contain 10.0.0.1, which the serving certificate names.
	serviceCIDR = "10.0.0.0/24"

	// NodeManagedAnnotation marks the nodes kwok simulates; a Node created
	// without it stays NotReady, as one whose kubelet is gone.
	NodeManagedAnnotation = "kwok.x-k8s.io/node"
	nodeManagedValue      = "fake"
)

// controllers are the kube-controller-manager controllers the tests rely on:
// the workload controllers that roll out or run pods, garbage collection of old
// ReplicaSets and of pods, namespace deletion, the default ServiceAccount
// that the ServiceAccount admission plugin requires before a pod is
// admitted, and node lifecycle, which lifts the not-ready taint that every
// new node is given. Taint-based eviction is left out, so a paused kwok or
// API server never gets pods evicted.
var controllers = []string{
	"node-lifecycle-controller",
	"deployment-controller",
	"replicaset-controller",
	"statefulset-controller",
	"daemonset-controller",
	"job-controller",
	"cronjob-controller",
	"garbage-collector-controller",
	"namespace-controller",
	"serviceaccount-controller",
	"serviceaccount-token-controller",
	"root-ca-certificate-publisher-controller",
}

// quickShutdown are kube-apiserver flags that make it end its clients'
// watches and exit within seconds of SIGTERM. By default its HTTP server
// waits up to --request-timeout, a minute, for watches to end, and every
// controller and test client holds some open; an API server that a test
// stops should be gone at once.
var quickShutdown = []struct{ name, value string }{
	{"shutdown-watch-termination-grace-period", "2s"},
	{"shutdown-send-retry-after", "true"},
}

// Options configure StartFull. The zero value is a valid configuration.
type Options struct {
	// Nodes is the number of fake Ready nodes; zero means 2.
	Nodes int
}

// Cluster is a complete local cluster: etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler and kwok, each its own process
// that a test can stop and start again, e.g. to take the API server away
// for a while.
type Cluster struct {
	// Config authenticates as a cluster administrator.
	Config *rest.Config
	// Kubeconfig is the path of an admin kubeconfig file for Config.
	Kubeconfig string
	// Dir holds everything of the cluster: data, keys and logs.
	Dir string
	// LogDir holds one <component>.log per process.
	LogDir string
	// Nodes are the names of the fake Ready nodes.
	Nodes []string

	Etcd              *Process
	APIServer         *Process
	ControllerManager *Process
	Scheduler         *Process
	Kwok              *Process

	mu       sync.Mutex
	keepLogs bool
	stopped  bool
}

// StartFull starts a full cluster on free loopback ports in a new temporary
// directory and waits until its nodes are Ready and pods can be admitted.
// It fails, rather than skips, when a binary is missing or a component does
// not come up, and then keeps the logs and names them in the error.
//
// Callers must call Stop, e.g. with Ginkgo's DeferCleanup, and should call
// KeepLogs when a spec failed.
func StartFull(ctx context.Context, opts Options) (*Cluster, error) {
	if opts.Nodes == 0 {
		opts.Nodes = defaultNodes
	}
	if opts.Nodes < 0 {
		return nil, fmt.Errorf("starting a cluster: %d nodes", opts.Nodes)
	}
	kubeDir, err := ControlPlaneAssetsDir()
	if err != nil {
		return nil, err
	}
	bins, err := findBinaries(kubeDir, "etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler")
	if err != nil {
		return nil, err
	}
	kwokDir, err := KwokAssetsDir()
	if err != nil {
		return nil, err
	}
	kwokBin, err := findBinaries(kwokDir, "kwok")
	if err != nil {
		return nil, err
	}
	stages, err := findStages(kwokDir)
	if err != nil {
		return nil, err
	}

	dir, err := os.MkdirTemp("", "ripple-cluster-")
	if err != nil {
		return nil, fmt.Errorf("creating the cluster dir: %w", err)
	}
	c := &Cluster{Dir: dir, LogDir: filepath.Join(dir, "logs")}
	for i := range opts.Nodes {
		c.Nodes = append(c.Nodes, fmt.Sprintf("kwok-node-%d", i))
	}
	if err := c.configure(bins, kwokBin["kwok"], stages); err != nil {
		// Nothing ran, so there are no logs worth keeping.
		return nil, errors.Join(err, c.Stop())
	}
	if err := c.start(ctx); err != nil {
		c.KeepLogs()
		return nil, errors.Join(fmt.Errorf("starting the cluster (logs in %s): %w", c.LogDir, err), c.Stop())
	}
	return c, nil
}

// configure makes the cluster's keys, kubeconfig and processes, choosing
// every port up front so that a restarted process gets its old one back.
func (c *Cluster) configure(bins map[string]string, kwok string, stages []string) error {
	for _, d := range []string{c.LogDir, c.path("home"), c.path("etcd")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("creating %s: %w", d, err)
		}
	}
	ports, err := freePorts(6)
	if err != nil {
		return err
	}
	etcdPort, peerPort, apiPort, kcmPort, schedPort, kwokPort := ports[0], ports[1], ports[2], ports[3], ports[4], ports[5]

	pki, err := newPKI(c.path("pki"))
	if err != nil {
		return err
	}
	c.Config = &rest.Config{
		Host: "https://" + hostPort(apiPort),
		TLSClientConfig: rest.TLSClientConfig{
			CAData:   pki.caPEM,
			CertData: pki.adminCertPEM,
			KeyData:  pki.adminKeyPEM,
		},
		// Tests are the only clients; client-side throttling would only
		// slow them down.
		QPS:   1000,
		Burst: 2000,
	}
	c.Kubeconfig = c.path("kubeconfig")
	if err := WriteKubeconfig(c.Kubeconfig, c.Config, ""); err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		return fmt.Errorf("creating a client: %w", err)
	}

	etcdURL := "http://" + hostPort(etcdPort)
	peerURL := "http://" + hostPort(peerPort)
	c.Etcd = c.process("etcd", bins["etcd"], httpProbe(http.DefaultClient, etcdURL+"/health"),
		"--name=default",
		"--data-dir="+c.path("etcd"),
		"--listen-client-urls="+etcdURL,
		"--advertise-client-urls="+etcdURL,
		"--listen-peer-urls="+peerURL,
		"--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=default="+peerURL,
		// Durability is worthless for a throwaway cluster; fsync is slow.
		"--unsafe-no-fsync",
		"--log-level=warn",
	)
	apiArgs := []string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(apiPort),
		"--tls-cert-file=" + pki.path("apiserver.crt"),
		"--tls-private-key-file=" + pki.path("apiserver.key"),
		"--client-ca-file=" + pki.path("ca.crt"),
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file=" + pki.path("sa.pub"),
		"--service-account-signing-key-file=" + pki.path("sa.key"),
		"--service-cluster-ip-range=" + serviceCIDR,
		"--authorization-mode=RBAC",
		"--allow-privileged=true",
		"--profiling=false",
	}
	for _, f := range quickShutdown {
		apiArgs = append(apiArgs, "--"+f.name+"="+f.value)
	}
	c.APIServer = c.process("kube-apiserver", bins["kube-apiserver"], apiServerProbe(client), apiArgs...)
	// The controller manager and the scheduler serve health checks over TLS
	// with certificates they make up in their cert dirs; the probes only ask
	// whether they answer, on loopback, so they need not verify them.
	insecure := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	c.ControllerManager = c.process("kube-controller-manager", bins["kube-controller-manager"],
		httpProbe(insecure, "https://"+hostPort(kcmPort)+"/healthz"),
		"--kubeconfig="+c.Kubeconfig,
		"--leader-elect=false",
		"--controllers="+strings.Join(controllers, ","),
		"--service-account-private-key-file="+pki.path("sa.key"),
		"--root-ca-file="+pki.path("ca.crt"),
		"--bind-address=127.0.0.1",
		"--secure-port="+strconv.Itoa(kcmPort),
		"--cert-dir="+c.path("kube-controller-manager"),
		"--kube-api-qps=100",
		"--kube-api-burst=200",
		"--profiling=false",
	)
	c.Scheduler = c.process("kube-scheduler", bins["kube-scheduler"],
		httpProbe(insecure, "https://"+hostPort(schedPort)+"/healthz"),
		"--kubeconfig="+c.Kubeconfig,
		"--leader-elect=false",
		"--bind-address=127.0.0.1",
		"--secure-port="+strconv.Itoa(schedPort),
		"--cert-dir="+c.path("kube-scheduler"),
		"--profiling=false",
	)
	c.Kwok = c.process("kwok", kwok, httpProbe(http.DefaultClient, "http://"+hostPort(kwokPort)+"/healthz"),
		"--kubeconfig="+c.Kubeconfig,
		"--config="+strings.Join(stages, ","),
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector="+NodeManagedAnnotation+"="+nodeManagedValue,
		"--node-lease-duration-seconds=40",
		"--server-address="+hostPort(kwokPort),
	)
	return nil
}

func (c *Cluster) path(name string) string { return filepath.Join(c.Dir, name) }

func (c *Cluster) process(name, path string, healthy func(context.Context) error, args ...string) *Process {
	return &Process{
		name:    name,
		path:    path,
		args:    args,
		env:     c.childEnv(),
		logPath: filepath.Join(c.LogDir, name+".log"),
		healthy: healthy,
	}
}

// childEnv is our environment with HOME moved into the cluster dir and
// KUBECONFIG dropped, so that no component reads or writes the files of the
// person or CI job running the tests.
func (c *Cluster) childEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "HOME=") || strings.HasPrefix(kv, "KUBECONFIG=") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+c.path("home"))
}

// Processes lists the components in the order they start: each depends only
// on those before it.
func (c *Cluster) Processes() []*Process {
	return []*Process{c.Etcd, c.APIServer, c.ControllerManager, c.Scheduler, c.Kwok}
}

func (c *Cluster) start(ctx context.Context) error {
	client, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		return fmt.Errorf("creating a client: %w", err)
	}
	for _, p := range c.Processes() {
		if p == c.Kwok {
			if err := c.createNodes(ctx, client); err != nil {
				return err
			}
		}
		if err := p.Start(ctx); err != nil {
			return err
		}
	}
	if err := c.waitUsable(ctx, client); err != nil {
		return err
	}
	// Third-party workloads and config sources ripple handles: the e2e
	// specs create their objects.
	_, err = InstallCRDs(c.Config, AllCRDs...)
	return err
}

func (c *Cluster) createNodes(ctx context.Context, client kubernetes.Interface) error {
	for _, name := range c.Nodes {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{
			Name: name,
			Labels: map[string]string{
				corev1.LabelHostname:   name,
				corev1.LabelOSStable:   "linux",
				corev1.LabelArchStable: "amd64",
				"type":                 "kwok",
			},
			Annotations: map[string]string{NodeManagedAnnotation: nodeManagedValue},
		}}
		if _, err := client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating node %s: %w", name, err)
		}
	}
	return nil
}

// waitUsable waits for what the first pod of a test needs: Ready, untainted
// nodes to schedule it to, and the default ServiceAccount without which
// admission rejects it.
func (c *Cluster) waitUsable(ctx context.Context, client kubernetes.Interface) error {
	var missing string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, startTimeout, true, func(ctx context.Context) (bool, error) {
		missing = c.missingForPods(ctx, client)
		return missing == "", nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the cluster to be usable (%s): %w", missing, err)
	}
	return nil
}

// missingForPods describes what the cluster still lacks to run pods, or
// returns "" when it lacks nothing. Errors are part of the description: the
// caller retries until a deadline either way.
func (c *Cluster) missingForPods(ctx context.Context, client kubernetes.Interface) string {
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err.Error()
	}
	ready := 0
	for _, n := range nodes.Items {
		if nodeSchedulable(&n) {
			ready++
		}
	}
	if ready < len(c.Nodes) {
		return fmt.Sprintf("%d of %d nodes Ready and untainted", ready, len(c.Nodes))
	}
	_, err = client.CoreV1().ServiceAccounts(metav1.NamespaceDefault).Get(ctx, "default", metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return "no default ServiceAccount yet"
	case err != nil:
		return err.Error()
	}
	return ""
}

// nodeSchedulable reports whether n is Ready and rid of the taints a new
// node starts with, so that pods can go there.
func nodeSchedulable(n *corev1.Node) bool {
	for _, taint := range n.Spec.Taints {
		if taint.Effect == corev1.TaintEffectNoSchedule || taint.Effect == corev1.TaintEffectNoExecute {
			return false
		}
	}
	for _, cond := range n.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}

// KeepLogs makes Stop leave Dir in place and print where the logs are, for a
// run whose failure someone will want to read about.
func (c *Cluster) KeepLogs() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.keepLogs = true
}

// Stop stops all components, last started first, and removes Dir unless
// KeepLogs was called or a component would not stop. It is safe to call more
// than once and from a signal handler's goroutine.
func (c *Cluster) Stop() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return nil
	}
	c.stopped = true
	var errs []error
	procs := c.Processes()
	for i := len(procs) - 1; i >= 0; i-- {
		if procs[i] == nil {
			continue
		}
		if err := procs[i].Stop(); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		c.keepLogs = true
	}
	if c.keepLogs {
		fmt.Fprintf(os.Stderr, "cluster logs kept in %s\n", c.LogDir)
	} else if err := os.RemoveAll(c.Dir); err != nil {
		errs = append(errs, fmt.Errorf("removing the cluster dir: %w", err))
	}
	return errors.Join(errs...)
}

func hostPort(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }

// freePorts reserves n distinct loopback ports by listening on all of them
// at once, then releases them for the components to bind.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			_ = l.Close() // only a reservation; nothing was served
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("finding a free port: %w", err)
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// httpProbe reports whether url answers 200 OK.
func httpProbe(client *http.Client, url string) func(context.Context) error {
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return fmt.Errorf("probing %s: %w", url, err)
		}
		resp, err := client.Do(req)
		if err != nil {
			return fmt.Errorf("probing %s: %w", url, err)
		}
		defer func() { _ = resp.Body.Close() }()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("probing %s: %s: %s", url, resp.Status, body)
		}
		return nil
	}
}

// apiServerProbe reports whether the API server is ready, as an
// authenticated client sees it.
func apiServerProbe(client kubernetes.Interface) func(context.Context) error {
	return func(ctx context.Context) error {
		if _, err := client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx); err != nil {
			return fmt.Errorf("probing kube-apiserver /readyz: %w", err)
		}
		return nil
	}
}

// WriteKubeconfig writes a kubeconfig file for cfg, whose context's
// namespace is namespace, as a user's would be.
func WriteKubeconfig(path string, cfg *rest.Config, namespace string) error {
	const name = "ripple-local"
	kc := clientcmdapi.NewConfig()
	kc.Clusters[name] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos[name] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData}
	kc.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name, Namespace: namespace}
	kc.CurrentContext = name
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		return fmt.Errorf("writing the kubeconfig: %w", err)
	}
	return nil
}
