package chart

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// helmEnv names the helm binary to use instead of the repository's bin/helm.
const helmEnv = "HELM"

// helmCLI runs the helm binary with its state (config, cache, data) in a
// temporary directory, so that the tests neither read nor write the user's.
type helmCLI struct {
	path string
	env  []string
	dir  string
}

func newHelm(root, dir string) (*helmCLI, error) {
	path := os.Getenv(helmEnv)
	if path == "" {
		path = filepath.Join(root, "bin", "helm")
	}
	if info, err := os.Stat(path); err != nil || info.IsDir() || info.Mode().Perm()&0o111 == 0 {
		return nil, fmt.Errorf("no helm binary at %s: run `make helm`, or set %s", path, helmEnv)
	}
	env := os.Environ()
	for _, v := range []string{"HELM_CONFIG_HOME", "HELM_CACHE_HOME", "HELM_DATA_HOME"} {
		env = append(env, v+"="+filepath.Join(dir, strings.ToLower(v)))
	}
	// No kubeconfig until useCluster writes one: `helm template` and
	// `helm lint` must not depend on whatever cluster the user has.
	env = append(env, "KUBECONFIG="+filepath.Join(dir, "no-kubeconfig"))
	return &helmCLI{path: path, env: env, dir: dir}, nil
}

// useCluster writes a kubeconfig for cfg, an administrator of the test
// control plane, and points helm at it.
func (h *helmCLI) useCluster(cfg *rest.Config) error {
	const name = "ripple-chart-test"
	kc := clientcmdapi.NewConfig()
	kc.Clusters[name] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos[name] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken}
	kc.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	kc.CurrentContext = name
	path := filepath.Join(h.dir, "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		return fmt.Errorf("writing helm's kubeconfig: %w", err)
	}
	h.env = append(h.env, "KUBECONFIG="+path)
	return nil
}

// run runs helm and returns its standard output; the error carries its
// standard error.
func (h *helmCLI) run(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, h.path, args...)
	cmd.Env = h.env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("helm %s: %w\n%s%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String(), nil
}
