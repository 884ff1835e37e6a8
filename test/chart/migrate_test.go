package chart

import (
	"bytes"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/ripple-controller/ripple/internal/cli"
)

var _ = Describe("ripple migrate-values", Label("chart"), func() {
	It("prints values the chart renders and ripple parses, from Reloader's defaults and from realistic values", func(ctx SpecContext) {
		inputs, err := filepath.Glob(filepath.Join(root, "internal", "migrate", "testdata", "*.yaml"))
		Expect(err).NotTo(HaveOccurred())
		Expect(inputs).To(HaveLen(4))
		for _, in := range inputs {
			var out bytes.Buffer
			Expect(cli.MigrateValues([]string{in}, nil, &out)).To(Succeed(), in)
			values := filepath.Join(GinkgoT().TempDir(), "values.yaml")
			Expect(os.WriteFile(values, out.Bytes(), 0o600)).To(Succeed())
			rendered, err := helm.run(ctx, "template", goldenRelease, chartDir, "--namespace", goldenNamespace, "-f", values)
			Expect(err).NotTo(HaveOccurred(), "the chart renders the values migrated from %s:\n%s", in, out.String())
			objs, err := parseManifest(rendered)
			Expect(err).NotTo(HaveOccurred())
			parseArgs(expandArgs(deploymentOf(objs).Spec.Template.Spec.Containers[0], goldenNamespace))
		}
	})
})
