package cluster

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// The third-party CRDs hack/build-crds.sh copies from their projects' Go
// modules into bin/crds/, by name.
const (
	RolloutCRD                      = "rollouts.argoproj.io"
	SecretProviderClassCRD          = "secretproviderclasses.secrets-store.csi.x-k8s.io"
	SecretProviderClassPodStatusCRD = "secretproviderclasspodstatuses.secrets-store.csi.x-k8s.io"
)

// AllCRDs lists every CRD of bin/crds.
var AllCRDs = []string{RolloutCRD, SecretProviderClassCRD, SecretProviderClassPodStatusCRD}

// CRDFile returns the path of the named CRD in bin/crds.
func CRDFile(name string) (string, error) {
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	path := filepath.Join(root, "bin", "crds", name+".yaml")
	if _, err := os.Stat(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("CRD %s missing in %s: run `make tools`: %w", name, filepath.Dir(path), err)
		}
		return "", fmt.Errorf("finding CRD %s: %w", name, err)
	}
	return path, nil
}

// InstallCRDs makes the API server serve the named CRDs of bin/crds, and
// waits until it does.
func InstallCRDs(cfg *rest.Config, names ...string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	paths := make([]string, 0, len(names))
	for _, n := range names {
		p, err := CRDFile(n)
		if err != nil {
			return nil, err
		}
		paths = append(paths, p)
	}
	crds, err := envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{Paths: paths, ErrorIfPathMissing: true, MaxTime: startTimeout, PollInterval: 100 * time.Millisecond})
	if err != nil {
		return nil, fmt.Errorf("installing CRDs %v: %w", names, err)
	}
	return crds, nil
}

// UninstallCRDs deletes the named CRDs among those InstallCRDs returned, and
// waits until discovery, which a controller reads at start, no longer lists
// their resources.
func UninstallCRDs(cfg *rest.Config, installed []*apiextensionsv1.CustomResourceDefinition, names ...string) error {
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, c := range installed {
		if slices.Contains(names, c.Name) {
			crds = append(crds, c)
		}
	}
	if err := envtest.UninstallCRDs(cfg, envtest.CRDInstallOptions{CRDs: crds, MaxTime: startTimeout, PollInterval: 100 * time.Millisecond}); err != nil {
		return fmt.Errorf("uninstalling CRDs: %w", err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return fmt.Errorf("uninstalling CRDs: %w", err)
	}
	return wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, startTimeout, true, func(context.Context) (bool, error) {
		for _, c := range crds {
			for _, v := range c.Spec.Versions {
				list, err := disc.ServerResourcesForGroupVersion(c.Spec.Group + "/" + v.Name)
				if err == nil && slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == c.Spec.Names.Plural }) {
					return false, nil
				}
			}
		}
		return true, nil
	})
}
