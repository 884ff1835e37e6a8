package chart

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// apply creates objs, as `kubectl apply -k` would, and deletes them, but
// the Namespace, which another spec may have created, when the spec ends.
func apply(ctx SpecContext, objs objects) {
	GinkgoHelper()
	for _, u := range objs {
		err := k8s.Create(ctx, u.DeepCopy())
		if u.GetKind() == "Namespace" {
			err = client.IgnoreAlreadyExists(err)
		}
		Expect(err).To(Succeed(), "creating %s %s", u.GetKind(), u.GetName())
	}
	DeferCleanup(func(ctx SpecContext) {
		for _, u := range objs {
			if u.GetKind() != "Namespace" {
				Expect(client.IgnoreNotFound(k8s.Delete(ctx, u.DeepCopy()))).To(Succeed())
			}
		}
	})
}

// renderObjects is the chart rendered with testdata/<values>.values.yaml.
func renderObjects(values string) objects {
	GinkgoHelper()
	_, objs := render(values)
	return objs
}

// kustomize builds a kustomization under config/ as `kubectl kustomize` does.
func kustomize(dir string) objects {
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	res, err := k.Run(filesys.MakeFsOnDisk(), filepath.Join(root, "config", dir))
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	out, err := res.AsYaml()
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	objs, err := parseManifest(string(out))
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return objs
}

// Each kustomization under config/ matches the chart rendered with one of
// its values files: config/default the chart's defaults, config/ha its two
// replicas with leader election.
var _ = Describe("The kustomize bases", Label("kustomize"), Ordered, func() {
	var base, chart objects
	BeforeAll(func() {
		base = kustomize("default")
		_, chart = render("default")
	})

	for _, c := range []struct{ dir, values string }{{"default", "default"}, {"ha", "ha"}} {
		It("hold the chart's objects plus the Namespace, in config/"+c.dir, func() {
			base, chart := kustomize(c.dir), renderObjects(c.values)
			Expect(base.ids()).To(ConsistOf(append(chart.ids(), "Namespace//"+goldenNamespace)))
		})

		It("grant exactly the chart's rights, in config/"+c.dir, func() {
			base, chart := kustomize(c.dir), renderObjects(c.values)
			Expect(base.rules()).To(Equal(chart.rules()))
			for _, kind := range []string{"ClusterRoleBinding", "RoleBinding"} {
				for _, u := range chart.ofKind(kind) {
					b := base.find(kind, u.GetNamespace(), u.GetName())
					Expect(b).NotTo(BeNil())
					Expect(b.Object["roleRef"]).To(Equal(u.Object["roleRef"]))
					Expect(b.Object["subjects"]).To(Equal(u.Object["subjects"]))
				}
			}
		})

		It("run ripple as the chart does, in config/"+c.dir, func() {
			base, chart := kustomize(c.dir), renderObjects(c.values)
			k, r := deploymentOf(base), deploymentOf(chart)
			Expect(k.Spec.Replicas).To(Equal(r.Spec.Replicas))
			Expect(k.Spec.Strategy).To(Equal(r.Spec.Strategy))
			Expect(k.Spec.Selector).To(Equal(r.Spec.Selector))
			// Only the chart's own labels differ; the pod spec is the same, with
			// the arguments as the container sees them.
			kp, cp := k.Spec.Template.Spec.DeepCopy(), r.Spec.Template.Spec.DeepCopy()
			kp.Containers[0].Args = expandArgs(kp.Containers[0], k.Namespace)
			cp.Containers[0].Args = expandArgs(cp.Containers[0], r.Namespace)
			Expect(apiequality.Semantic.DeepEqual(kp, cp)).To(BeTrue(), "pod specs differ:\nkustomize: %+v\nchart:     %+v", kp, cp)
			Expect(k.Spec.Template.Labels).To(HaveKeyWithValue("app.kubernetes.io/name", "ripple"))
		})
	}

	It("name the image of the chart's release", func() {
		// A release tag, v<chart version>, names the image it publishes.
		meta, err := os.ReadFile(filepath.Join(chartDir, "Chart.yaml"))
		Expect(err).NotTo(HaveOccurred())
		version := regexp.MustCompile(`(?m)^version: (\S+)$`).FindSubmatch(meta)
		Expect(version).NotTo(BeNil())
		Expect(deploymentOf(chart).Spec.Template.Spec.Containers[0].Image).To(HaveSuffix(":v" + string(version[1])))

		ks := into[corev1.Service](base.find("Service", goldenNamespace, "ripple-metrics"))
		cs := into[corev1.Service](chart.find("Service", goldenNamespace, "ripple-metrics"))
		Expect(ks.Spec).To(Equal(cs.Spec))
	})

	It("apply to an API server, and ripple does its job with their rights", func(ctx SpecContext) {
		apply(ctx, base)
		// No key Secret made by hand: ripple creates it.
		key := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: goldenNamespace, Name: "ripple-digest-key"}}
		DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(k8s.Delete(ctx, key))).To(Succeed()) })

		d := deploymentOf(base)
		sa := serviceAccount(ctx, goldenNamespace, d.Spec.Template.Spec.ServiceAccountName)
		startRipple(sa.config, expandArgs(d.Spec.Template.Spec.Containers[0], goldenNamespace))
		createNamespaces(ctx, "apps-kustomize")
		newApp(ctx, "apps-kustomize", "web").expectRolls(ctx)
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(key), key)).To(Succeed())
		Expect(key.Data["key"]).To(HaveLen(32), "ripple created its key Secret")
	})

	It("apply with config/ha, and the elected replica does ripple's job with their rights", func(ctx SpecContext) {
		ha := kustomize("ha")
		apply(ctx, ha)
		key := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: goldenNamespace, Name: "ripple-digest-key"}}
		DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(k8s.Delete(ctx, key))).To(Succeed()) })

		d := deploymentOf(ha)
		sa := serviceAccount(ctx, goldenNamespace, d.Spec.Template.Spec.ServiceAccountName)
		in := startRipple(sa.config, expandArgs(d.Spec.Template.Spec.Containers[0], goldenNamespace))
		Eventually(in.elected).WithTimeout(waitFor).WithPolling(pollAt).Should(BeTrue(), "elected on the Lease config/ha grants")
		lease, err := clientset.CoordinationV1().Leases(goldenNamespace).Get(ctx, "ripple-leader", metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(ptr.Deref(lease.Spec.HolderIdentity, "")).NotTo(BeEmpty())
		createNamespaces(ctx, "apps-kustomize-ha")
		newApp(ctx, "apps-kustomize-ha", "web").expectRolls(ctx)
	})

	It("render, through `make manifests`, into one install file the API server accepts, with the image asked for", func(ctx SpecContext) {
		out := filepath.Join(GinkgoT().TempDir(), "install.yaml")
		cmd := exec.CommandContext(ctx, "go", "run", "./hack/manifests", "-image", "example.invalid/ripple:v9", "-o", out)
		cmd.Dir = root
		cmd.Stdout, cmd.Stderr = GinkgoWriter, GinkgoWriter
		Expect(cmd.Run()).To(Succeed())
		raw, err := os.ReadFile(out)
		Expect(err).NotTo(HaveOccurred())
		install, err := parseManifest(string(raw))
		Expect(err).NotTo(HaveOccurred())

		Expect(install.ids()).To(ConsistOf(base.ids()))
		Expect(install.rules()).To(Equal(base.rules()))
		Expect(deploymentOf(install).Spec.Template.Spec.Containers[0].Image).To(Equal("example.invalid/ripple:v9"))
		for _, u := range install {
			Expect(k8s.Apply(ctx, client.ApplyConfigurationFromUnstructured(u.DeepCopy()), client.FieldOwner("install-test"),
				client.ForceOwnership, client.DryRunAll)).To(Succeed(), "a server-side dry run of %s %s", u.GetKind(), u.GetName())
		}

		// Its rights, asked as `kubectl auth can-i --as` asks: a
		// SubjectAccessReview for ripple's ServiceAccount.
		for _, u := range install {
			switch u.GetKind() {
			case "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding":
				Expect(k8s.Create(ctx, u.DeepCopy())).To(Succeed())
				DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(k8s.Delete(ctx, u.DeepCopy()))).To(Succeed()) })
			}
		}
		sa := "system:serviceaccount:" + goldenNamespace + ":" + deploymentOf(install).Spec.Template.Spec.ServiceAccountName
		for _, c := range []struct {
			verb, group, resource, namespace, name string
			allowed                                bool
		}{
			{"watch", "", "configmaps", "", "", true},
			{"list", "", "secrets", "", "", true},
			{"patch", "apps", "deployments", "apps", "", true},
			{"patch", "apps", "statefulsets", "apps", "", true},
			{"patch", "apps", "daemonsets", "apps", "", true},
			{"get", "", "secrets", goldenNamespace, "ripple-digest-key", true},
			{"update", "", "configmaps", "apps", "", false},
			{"delete", "", "secrets", "apps", "", false},
			{"patch", "", "pods", "apps", "", false},
			{"delete", "apps", "deployments", "apps", "", false},
		} {
			Expect(may(ctx, sa, c.verb, c.group, c.resource, c.namespace, c.name)).To(Equal(c.allowed),
				"can-i %s %s.%s in %q as %s", c.verb, c.resource, c.group, c.namespace, sa)
		}
	})
})
