// Command manifests renders config/default, ripple's default kustomize
// install, into one file with the ripple container's image set: `make
// manifests` writes dist/install.yaml with it, and the release attaches
// that file, so `kubectl apply -f` of one URL installs ripple.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

const header = "# ripple's default install, rendered by `make manifests` from config/default.\n"

func main() {
	dir := flag.String("config", "config/default", "the kustomization to render")
	image := flag.String("image", "ripple", "the image of the ripple container")
	out := flag.String("o", "dist/install.yaml", "the file to write")
	flag.Parse()
	if err := run(*dir, *image, *out); err != nil {
		fmt.Fprintln(os.Stderr, "manifests:", err)
		os.Exit(1)
	}
}

func run(dir, image, out string) error {
	rendered, err := render(dir, image)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return fmt.Errorf("creating the output directory: %w", err)
	}
	return os.WriteFile(out, rendered, 0o644)
}

// render builds the kustomization as `kubectl kustomize` does and sets the
// image of every container named ripple.
func render(dir, image string) ([]byte, error) {
	res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, fmt.Errorf("building %s: %w", dir, err)
	}
	var b bytes.Buffer
	b.WriteString(header)
	for _, r := range res.Resources() {
		obj, err := r.Map()
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", r.CurId(), err)
		}
		setImage(obj, image)
		doc, err := yaml.Marshal(obj)
		if err != nil {
			return nil, fmt.Errorf("encoding %s: %w", r.CurId(), err)
		}
		b.WriteString("---\n")
		b.Write(doc)
	}
	return b.Bytes(), nil
}

func setImage(obj map[string]any, image string) {
	if obj["kind"] != "Deployment" {
		return
	}
	spec, _ := obj["spec"].(map[string]any)
	tmpl, _ := spec["template"].(map[string]any)
	pod, _ := tmpl["spec"].(map[string]any)
	containers, _ := pod["containers"].([]any)
	for _, c := range containers {
		if c, ok := c.(map[string]any); ok && c["name"] == "ripple" {
			c["image"] = image
		}
	}
}
