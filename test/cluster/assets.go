// Package cluster starts throwaway Kubernetes clusters on loopback ports for
// ripple's integration and end-to-end tests, and for people who want one on
// their machine (see cmd/local-cluster).
//
// StartControlPlane runs etcd and kube-apiserver through controller-runtime's
// envtest, which is enough to test a controller against a real API server.
// StartFull adds kube-controller-manager, kube-scheduler and kwok with fake
// Ready nodes, so Deployments, StatefulSets and DaemonSets really roll out.
//
// The binaries come from KUBEBUILDER_ASSETS if set, else from the directories
// that `make tools` builds under the repository's bin/. A missing binary or a
// component that does not come up is an error, never a reason to skip.
package cluster

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"golang.org/x/mod/modfile"
)

// assetsEnv names the directory holding etcd and the Kubernetes binaries, as
// envtest and setup-envtest understand it.
const assetsEnv = "KUBEBUILDER_ASSETS"

// repoRoot finds the repository by walking up from the working directory to
// the nearest go.mod, which is where `go test` and `make` run from.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("finding the repository root: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("finding the repository root: no go.mod above the working directory")
		}
		dir = parent
	}
}

// pinnedVersion reads the version of module that the wrapper module in
// hack/tools/<tool> pins, so that the directory names agree with what the
// hack/ build scripts produce without a second copy of the version.
func pinnedVersion(root, tool, module string) (string, error) {
	path := filepath.Join(root, "hack", "tools", tool, "go.mod")
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("reading the pinned %s version: %w", tool, err)
	}
	f, err := modfile.ParseLax(path, data, nil)
	if err != nil {
		return "", fmt.Errorf("reading the pinned %s version: %w", tool, err)
	}
	for _, r := range f.Require {
		if r.Mod.Path == module {
			return strings.TrimPrefix(r.Mod.Version, "v"), nil
		}
	}
	return "", fmt.Errorf("reading the pinned %s version: %s does not require %s", tool, path, module)
}

// ControlPlaneAssetsDir returns the directory holding etcd, kube-apiserver,
// kube-controller-manager and kube-scheduler: $KUBEBUILDER_ASSETS when set,
// else bin/k8s/<version>-<os>-<arch> in the repository.
func ControlPlaneAssetsDir() (string, error) {
	if dir := os.Getenv(assetsEnv); dir != "" {
		return dir, nil
	}
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	version, err := pinnedVersion(root, "kube", "k8s.io/kubernetes")
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "bin", "k8s", platformDir(version)), nil
}

// KwokAssetsDir returns the directory holding the kwok binary and, under
// stages/, the Stage definitions it runs: bin/kwok/<version>-<os>-<arch> in
// the repository.
func KwokAssetsDir() (string, error) {
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	version, err := pinnedVersion(root, "kwok", "sigs.k8s.io/kwok")
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "bin", "kwok", platformDir(version)), nil
}

func platformDir(version string) string {
	return version + "-" + runtime.GOOS + "-" + runtime.GOARCH
}

// findBinaries returns the paths of the named executables in dir, or an error
// naming every one that is missing and how to get it.
func findBinaries(dir string, names ...string) (map[string]string, error) {
	paths := make(map[string]string, len(names))
	var missing []string
	for _, name := range names {
		path := filepath.Join(dir, name)
		info, err := os.Stat(path)
		if err != nil || !info.Mode().IsRegular() || info.Mode().Perm()&0o111 == 0 {
			missing = append(missing, name)
			continue
		}
		paths[name] = path
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%s missing in %s (%s=%q): run `make tools` or point %s at a directory that has them",
			strings.Join(missing, ", "), dir, assetsEnv, os.Getenv(assetsEnv), assetsEnv)
	}
	return paths, nil
}

// findStages returns the kwok Stage files in dir/stages.
func findStages(dir string) ([]string, error) {
	stages, err := filepath.Glob(filepath.Join(dir, "stages", "*.yaml"))
	if err != nil {
		return nil, fmt.Errorf("finding kwok stages: %w", err)
	}
	if len(stages) == 0 {
		return nil, fmt.Errorf("finding kwok stages: none in %s: run `make tools`: %w", filepath.Join(dir, "stages"), fs.ErrNotExist)
	}
	return stages, nil
}
