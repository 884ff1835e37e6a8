package main

import (
	"archive/tar"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
)

// The test builds the image of this machine's platform only: a second
// architecture would compile every dependency again, which the cold
// budget of `make test` cannot take; `make image` builds both.
func TestImageRunsRippleAsNonrootAndIsReproducible(t *testing.T) {
	platform := "linux/" + runtime.GOARCH
	c := config{src: "../..", out: filepath.Join(t.TempDir(), "a"), version: "v0.0.0-test", revision: "abc",
		platforms: []string{platform}, epoch: time.Unix(1700000000, 0).UTC()}
	first, err := build(c)
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	c.out = filepath.Join(t.TempDir(), "b")
	second, err := build(c)
	if err != nil {
		t.Fatalf("second build: %v", err)
	}
	if first != second {
		t.Errorf("two builds of the same source: %s and %s, want one digest", first, second)
	}

	img := onlyImage(t, c.out, first)
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.OS != "linux" || cf.Architecture != runtime.GOARCH {
		t.Errorf("platform %s/%s, want %s", cf.OS, cf.Architecture, platform)
	}
	if cf.Config.User != "65532:65532" || len(cf.Config.Entrypoint) != 1 || cf.Config.Entrypoint[0] != "/ripple" {
		t.Errorf("user %q entrypoint %q, want 65532:65532 and /ripple", cf.Config.User, cf.Config.Entrypoint)
	}
	if !cf.Created.Time.Equal(c.epoch) {
		t.Errorf("created %s, want the epoch %s", cf.Created.Time, c.epoch)
	}

	bin := filepath.Join(t.TempDir(), "ripple")
	files := unpack(t, img, bin)
	if strings.Join(files, " ") != "etc/ etc/group etc/passwd ripple" {
		t.Errorf("layer files %q, want only etc/group, etc/passwd and ripple", files)
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil || strings.TrimSpace(string(out)) != c.version {
		t.Errorf("ripple --version from the image = %q, %v; want %s", out, err, c.version)
	}
}

func onlyImage(t *testing.T, dir string, digest v1.Hash) v1.Image {
	t.Helper()
	p, err := layout.FromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := p.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	inner, err := idx.ImageIndex(digest)
	if err != nil {
		t.Fatalf("the layout's index does not hold %s: %v", digest, err)
	}
	m, err := inner.IndexManifest()
	if err != nil || len(m.Manifests) != 1 || m.Manifests[0].Platform == nil {
		t.Fatalf("the image index = %+v, %v; want one image with its platform", m, err)
	}
	img, err := inner.Image(m.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// unpack lists the layer's files and writes its ripple binary to bin.
func unpack(t *testing.T, img v1.Image, bin string) []string {
	t.Helper()
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers = %d, %v; want one", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rc.Close() }()
	var names []string
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return names
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		if h.Name == "ripple" {
			f, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.Copy(f, tr); err != nil {
				t.Fatal(err)
			}
			_ = f.Close()
		}
	}
}
