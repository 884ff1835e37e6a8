// Command image builds ripple's container image without Docker, as an OCI
// image layout: a static ripple binary on an empty base, run as the
// nonroot user 65532, one image per platform under one index. The build is
// reproducible: the binary is built with -trimpath and no build ID, and
// every timestamp is -epoch (the commit's time in `make image`), so the
// same source gives the same digest.
package main

import (
	"archive/tar"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

const (
	module = "github.com/ripple-controller/ripple"
	user   = "65532:65532"
	entry  = "/ripple"
)

// config is what one build is made of.
type config struct {
	src, out, version, revision string
	platforms                   []string
	epoch                       time.Time
}

func main() {
	var c config
	var platforms string
	var epoch int64
	flag.StringVar(&c.src, "src", ".", "ripple's source tree")
	flag.StringVar(&c.out, "o", "dist/image", "the OCI image layout directory to write (replaced)")
	flag.StringVar(&c.version, "version", "dev", "the version stamped into the binary and the image")
	flag.StringVar(&c.revision, "revision", "", "the source revision, for the image's label")
	flag.StringVar(&platforms, "platforms", "linux/amd64,linux/arm64", "comma-separated os/arch pairs")
	flag.Int64Var(&epoch, "epoch", 0, "the time, in Unix seconds, of every timestamp in the image")
	flag.Parse()
	c.platforms = strings.Split(platforms, ",")
	c.epoch = time.Unix(epoch, 0).UTC()
	digest, err := build(c)
	if err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
	fmt.Println(digest)
}

// build writes the image index of every platform to c.out and returns its
// digest.
func build(c config) (v1.Hash, error) {
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, p := range c.platforms {
		osName, arch, ok := strings.Cut(p, "/")
		if !ok {
			return v1.Hash{}, fmt.Errorf("platform %q is not os/arch", p)
		}
		img, err := image(c, osName, arch)
		if err != nil {
			return v1.Hash{}, err
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img,
			Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: osName, Architecture: arch}}})
	}
	if err := os.RemoveAll(c.out); err != nil {
		return v1.Hash{}, fmt.Errorf("clearing %s: %w", c.out, err)
	}
	p, err := layout.Write(c.out, empty.Index)
	if err != nil {
		return v1.Hash{}, fmt.Errorf("writing %s: %w", c.out, err)
	}
	if err := p.AppendIndex(idx, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": c.version})); err != nil {
		return v1.Hash{}, fmt.Errorf("writing the index to %s: %w", c.out, err)
	}
	return idx.Digest()
}

// image is one platform's image: the binary in one layer, and a config
// that runs it as the nonroot user.
func image(c config, osName, arch string) (v1.Image, error) {
	bin, err := binary(c, osName, arch)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar(bin, c.epoch))), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, fmt.Errorf("making the layer: %w", err)
	}
	img, err := mutate.AppendLayers(mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON), layer)
	if err != nil {
		return nil, fmt.Errorf("adding the layer: %w", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = osName, arch
	cf.Created = v1.Time{Time: c.epoch}
	cf.Config = v1.Config{
		Entrypoint: []string{entry},
		User:       user,
		Env:        []string{"PATH=/"},
		Labels: map[string]string{
			"org.opencontainers.image.source":   "https://" + module,
			"org.opencontainers.image.version":  c.version,
			"org.opencontainers.image.revision": c.revision,
			"org.opencontainers.image.title":    "ripple",
		},
	}
	for i := range cf.History {
		cf.History[i].Created = v1.Time{Time: c.epoch}
	}
	return mutate.ConfigFile(img, cf)
}

// binary builds ripple for one platform, as `make build` does but with no
// build ID or VCS stamp, which would differ between identical builds.
func binary(c config, osName, arch string) ([]byte, error) {
	dir, err := os.MkdirTemp("", "ripple-image-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	out := filepath.Join(dir, "ripple")
	cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false",
		"-ldflags", "-s -w -buildid= -X "+module+"/internal/version.Version="+c.version, "-o", out, "./cmd/ripple")
	cmd.Dir = c.src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+osName, "GOARCH="+arch)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("building ripple for %s/%s: %w", osName, arch, err)
	}
	return os.ReadFile(out)
}

// layerTar is the layer's content: the nonroot user's passwd and group
// entries, and the binary, in a fixed order with fixed times.
func layerTar(bin []byte, epoch time.Time) []byte {
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	dir := func(name string) {
		_ = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name, Mode: 0o755, ModTime: epoch, Format: tar.FormatPAX})
	}
	file := func(name string, mode int64, data []byte) {
		_ = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(data)), ModTime: epoch, Format: tar.FormatPAX})
		_, _ = tw.Write(data)
	}
	dir("etc/")
	file("etc/group", 0o644, []byte("root:x:0:\nnonroot:x:65532:\n"))
	file("etc/passwd", 0o644, []byte("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"))
	file("ripple", 0o755, bin)
	_ = tw.Close()
	return b.Bytes()
}
