package chart

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ripple-controller/ripple/internal/annotations"
	"github.com/ripple-controller/ripple/internal/cli"
)

// Polling of the specs that wait for ripple or the API server.
const (
	waitFor = 30 * time.Second
	pollAt  = 100 * time.Millisecond
)

// fastArgs turn off ripple's listeners, which an in-process instance does
// not need and whose ports would clash, and its debounce window, to keep the
// specs quick. They follow the Deployment's arguments, so they win.
var fastArgs = []string{"--metrics-bind-address=0", "--health-probe-bind-address=0", "--debounce=0"}

// identity is a ServiceAccount as ripple runs under it: clients that
// authenticate with a token the TokenRequest API issued for it.
type identity struct {
	name      string
	config    *rest.Config
	client    client.Client
	clientset kubernetes.Interface
}

// serviceAccount gets a token for namespace/name and builds clients that use
// only it: nothing of the administrator's credentials is carried over.
func serviceAccount(ctx context.Context, namespace, name string) *identity {
	tr, err := clientset.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)},
	}, metav1.CreateOptions{})
	ExpectWithOffset(1, err).NotTo(HaveOccurred(), "requesting a token for ServiceAccount %s/%s", namespace, name)
	cfg := &rest.Config{
		Host:            admin.Host,
		TLSClientConfig: rest.TLSClientConfig{CAData: admin.CAData},
		BearerToken:     tr.Status.Token,
	}
	c, err := client.New(cfg, client.Options{Scheme: k8s.Scheme()})
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	cs, err := kubernetes.NewForConfig(cfg)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return &identity{name: "system:serviceaccount:" + namespace + ":" + name, config: cfg, client: c, clientset: cs}
}

// instance is ripple running in this process.
type instance struct {
	mgr    ctrl.Manager
	cancel context.CancelFunc
	done   chan error
}

// startRipple parses args and starts ripple through internal/cli, as
// cmd/ripple does, with cfg's identity and its logs in GinkgoWriter. The
// returned instance is stopped at the end of the calling node. Flags in
// extra come last and win.
func startRipple(cfg *rest.Config, args []string, extra ...string) *instance {
	opts, err := cli.Parse(append(append(slices.Clone(args), fastArgs...), extra...))
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	ctx, cancel := context.WithCancel(context.Background())
	mgr, err := cli.NewManager(ctx, cfg, &opts, GinkgoWriter)
	if err != nil {
		cancel()
	}
	ExpectWithOffset(1, err).NotTo(HaveOccurred(), "ripple must start with the chart's rights")
	in := &instance{mgr: mgr, cancel: cancel, done: make(chan error, 1)}
	go func() {
		defer GinkgoRecover()
		in.done <- mgr.Start(ctx)
	}()
	DeferCleanup(in.stop)
	return in
}

// stop stops ripple and waits for it to return; it is safe to call twice.
func (in *instance) stop() {
	in.cancel()
	select {
	case err, ok := <-in.done:
		if ok {
			close(in.done)
			Expect(err).NotTo(HaveOccurred())
		}
	case <-time.After(waitFor):
		Fail("ripple did not stop")
	}
}

// elected tells whether this instance leads.
func (in *instance) elected() bool {
	select {
	case <-in.mgr.Elected():
		return true
	default:
		return false
	}
}

// installed is a release of the chart in the test control plane.
type installed struct {
	release, namespace string
	manifest           objects
	// args are the arguments of ripple's container, $(VAR)s expanded.
	args []string
	sa   string
}

// installChart runs `helm install` of the chart with the values of case c
// and uninstalls it at the end of the calling node.
func installChart(ctx context.Context, release, namespace, c string, flags ...string) *installed {
	args := append([]string{"install", release, chartDir, "--namespace", namespace, "--create-namespace", "-f", valuesFile(c)}, flags...)
	notes, err := helm.run(ctx, args...)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	ExpectWithOffset(1, notes).To(ContainSubstring("ripple.dev/recorded"), "helm prints the chart's NOTES")
	GinkgoWriter.Println(notes)
	DeferCleanup(func(ctx SpecContext) {
		_, err := helm.run(ctx, "uninstall", release, "--namespace", namespace, "--wait")
		Expect(err).NotTo(HaveOccurred())
	})
	out, err := helm.run(ctx, "get", "manifest", release, "--namespace", namespace)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	objs, err := parseManifest(out)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())

	// The Deployment as the API server holds it, which is what a pod runs.
	d := &appsv1.Deployment{}
	ExpectWithOffset(1, k8s.Get(ctx, client.ObjectKey{Namespace: namespace, Name: release}, d)).To(Succeed())
	pod := d.Spec.Template.Spec
	return &installed{
		release: release, namespace: namespace, manifest: objs,
		args: expandArgs(pod.Containers[0], namespace),
		sa:   pod.ServiceAccountName,
	}
}

func createNamespaces(ctx context.Context, names ...string) {
	createLabelledNamespaces(ctx, nil, names...)
}

func createLabelledNamespaces(ctx context.Context, labels map[string]string, names ...string) {
	for _, n := range names {
		err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n, Labels: labels}})
		if !apierrors.IsAlreadyExists(err) {
			ExpectWithOffset(1, err).NotTo(HaveOccurred())
		}
	}
}

// app is an annotated Deployment and the ConfigMap it uses, created by the
// administrator and deleted at the end of the calling node.
type app struct {
	namespace, name string
}

func newApp(ctx context.Context, namespace, name string) app {
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Data:       map[string]string{"greeting": "hello"},
	}
	labels := map[string]string{"app": name}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Annotations: map[string]string{annotations.Auto: "true"}},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "app", Image: "app:1",
					EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: name}}}},
				}}},
			},
		},
	}
	ExpectWithOffset(1, k8s.Create(ctx, cm)).To(Succeed())
	ExpectWithOffset(1, k8s.Create(ctx, d)).To(Succeed())
	DeferCleanup(func(ctx SpecContext) {
		Expect(client.IgnoreNotFound(k8s.Delete(ctx, d))).To(Succeed())
		Expect(client.IgnoreNotFound(k8s.Delete(ctx, cm))).To(Succeed())
	})
	return app{namespace: namespace, name: name}
}

func (a app) deployment(ctx context.Context) *appsv1.Deployment {
	d := &appsv1.Deployment{}
	ExpectWithOffset(2, k8s.Get(ctx, client.ObjectKey{Namespace: a.namespace, Name: a.name}, d)).To(Succeed())
	return d
}

// waitRecorded waits until ripple recorded the Deployment, which it does on
// first sight without rolling it, and returns the Deployment then.
func (a app) waitRecorded(ctx context.Context) *appsv1.Deployment {
	var d *appsv1.Deployment
	EventuallyWithOffset(1, func(g Gomega) {
		d = a.deployment(ctx)
		g.Expect(d.Annotations).To(HaveKey(annotations.Recorded))
	}).WithTimeout(waitFor).WithPolling(pollAt).Should(Succeed(), "ripple records %s/%s", a.namespace, a.name)
	return d
}

// expectRolls proves ripple's whole job on the app: it records it without
// rolling, then an edit of its ConfigMap rolls it (a new pod template
// digest, so a new generation) and ripple reports it with an Event.
func (a app) expectRolls(ctx context.Context) {
	before := a.waitRecorded(ctx)
	ExpectWithOffset(1, before.Spec.Template.Annotations).NotTo(HaveKey(annotations.ConfigDigest), "first sight must not roll")

	cm := &corev1.ConfigMap{}
	ExpectWithOffset(1, k8s.Get(ctx, client.ObjectKey{Namespace: a.namespace, Name: a.name}, cm)).To(Succeed())
	cm.Data["greeting"] = fmt.Sprintf("hello at %d", time.Now().UnixNano())
	ExpectWithOffset(1, k8s.Update(ctx, cm)).To(Succeed())

	EventuallyWithOffset(1, func(g Gomega) {
		d := a.deployment(ctx)
		g.Expect(d.Spec.Template.Annotations[annotations.ConfigDigest]).NotTo(BeEmpty())
		g.Expect(d.Spec.Template.Annotations[annotations.ConfigDigest]).NotTo(Equal(before.Spec.Template.Annotations[annotations.ConfigDigest]))
		g.Expect(d.Generation).To(BeNumerically(">", before.Generation))
	}).WithTimeout(waitFor).WithPolling(pollAt).Should(Succeed(), "a ConfigMap edit rolls %s/%s", a.namespace, a.name)

	EventuallyWithOffset(1, func(g Gomega) {
		evs, err := clientset.EventsV1().Events(a.namespace).List(ctx, metav1.ListOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		var reasons []string
		for _, e := range evs.Items {
			if e.Regarding.Kind == "Deployment" && e.Regarding.Name == a.name {
				reasons = append(reasons, e.Reason)
			}
		}
		g.Expect(reasons).To(ContainElement("Reloaded"))
	}).WithTimeout(waitFor).WithPolling(pollAt).Should(Succeed(), "ripple reports the rollout of %s/%s with an Event", a.namespace, a.name)
}

// may asks the API server, through a SubjectAccessReview as `kubectl auth
// can-i --as` does, whether a ServiceAccount may do verb.
func may(ctx context.Context, sa, verb, group, resource, namespace, name string) bool {
	ns, _, _ := strings.Cut(strings.TrimPrefix(sa, "system:serviceaccount:"), ":")
	review, err := clientset.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
		Spec: authorizationv1.SubjectAccessReviewSpec{
			User:   sa,
			Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: namespace, Verb: verb, Group: group, Resource: resource, Name: name,
			},
		},
	}, metav1.CreateOptions{})
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return review.Status.Allowed
}

// maySecrets asks the API server, through a SubjectAccessReview, whether the
// identity may do verb on Secrets in namespace (on the one named, if name is
// not empty).
func maySecrets(ctx context.Context, who *identity, verb, namespace, name string) bool {
	return may(ctx, who.name, verb, "", "secrets", namespace, name)
}

// forbidden expects err to be the API server's refusal.
func forbidden(err error, what string) {
	ExpectWithOffset(1, apierrors.IsForbidden(err)).To(BeTrue(), "%s must be forbidden, got %v", what, err)
}

var _ = Describe("The chart installed cluster-wide", Label("install"), Ordered, func() {
	var (
		inst *installed
		sa   *identity
	)
	BeforeAll(func(ctx SpecContext) {
		createNamespaces(ctx, "apps-all")
		inst = installChart(ctx, "ripple-all", "ripple-all", "default")
		sa = serviceAccount(ctx, inst.namespace, inst.sa)
		startRipple(sa.config, inst.args)
	})

	It("lets ripple roll a Deployment when its ConfigMap changes", func(ctx SpecContext) {
		newApp(ctx, "apps-all", "web").expectRolls(ctx)
	})

	It("lets ripple create its digest key and read it, and touch no other Secret in its namespace", func(ctx SpecContext) {
		const key = "ripple-all-digest-key"
		Expect(maySecrets(ctx, sa, "get", inst.namespace, key)).To(BeTrue())
		Expect(maySecrets(ctx, sa, "create", inst.namespace, "")).To(BeTrue())
		for _, verb := range []string{"update", "patch", "delete"} {
			Expect(maySecrets(ctx, sa, verb, inst.namespace, key)).To(BeFalse(), "%s the digest key", verb)
		}
		Expect(maySecrets(ctx, sa, "create", "apps-all", "")).To(BeFalse(), "creating Secrets outside its namespace")
		Expect(maySecrets(ctx, sa, "deletecollection", inst.namespace, "")).To(BeFalse())
	})

	It("keeps the digest key across upgrades", func(ctx SpecContext) {
		key := func() []byte {
			s := &corev1.Secret{}
			Expect(k8s.Get(ctx, client.ObjectKey{Namespace: inst.namespace, Name: "ripple-all-digest-key"}, s)).To(Succeed())
			Expect(s.Data["key"]).To(HaveLen(32))
			return s.Data["key"]
		}
		before := key()
		_, err := helm.run(ctx, "upgrade", inst.release, chartDir, "--namespace", inst.namespace, "--reuse-values", "--set", "logLevel=debug")
		Expect(err).NotTo(HaveOccurred())
		Expect(key()).To(Equal(before))
	})

	It("refuses ripple what it must not do", func(ctx SpecContext) {
		a := newApp(ctx, "apps-all", "victim")
		d := a.deployment(ctx)
		forbidden(sa.client.Delete(ctx, d), "deleting a Deployment")
		forbidden(sa.client.Update(ctx, d), "updating a Deployment")
		forbidden(sa.client.Create(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "apps-all", Name: "new"}, Spec: d.Spec}), "creating a Deployment")
		cm := &corev1.ConfigMap{}
		Expect(sa.client.Get(ctx, client.ObjectKey{Namespace: "apps-all", Name: "victim"}, cm)).To(Succeed(), "reading ConfigMaps is its job")
		forbidden(sa.client.Update(ctx, cm), "updating a ConfigMap")
		_, err := sa.clientset.CoreV1().Pods("apps-all").List(ctx, metav1.ListOptions{})
		forbidden(err, "listing Pods")
		_, err = sa.clientset.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
		forbidden(err, "listing Namespaces without a namespace selector")
		_, err = sa.clientset.CoordinationV1().Leases(inst.namespace).List(ctx, metav1.ListOptions{})
		forbidden(err, "reading Leases without HA")
		Expect(may(ctx, sa.name, "patch", "events.k8s.io", "events", "apps-all", "")).To(BeFalse(), "patching Events: ripple only creates them")
	})
})

var _ = Describe("The chart installed for listed namespaces", Label("install"), Ordered, func() {
	var (
		inst *installed
		sa   *identity
	)
	BeforeAll(func(ctx SpecContext) {
		// The values list team-a and team-b; team-c is outside.
		createNamespaces(ctx, "team-a", "team-b", "team-c")
		inst = installChart(ctx, "ripple-teams", "ripple-teams", "namespaced")
		sa = serviceAccount(ctx, inst.namespace, inst.sa)
		startRipple(sa.config, inst.args)
	})

	It("creates nothing cluster-scoped", func(ctx SpecContext) {
		for _, u := range inst.manifest {
			Expect(u.GetNamespace()).NotTo(BeEmpty(), "%s %s is cluster-scoped", u.GetKind(), u.GetName())
		}
		sel := client.MatchingLabels{"app.kubernetes.io/instance": inst.release}
		var crs metav1.PartialObjectMetadataList
		crs.SetGroupVersionKind(rbacv1.SchemeGroupVersion.WithKind("ClusterRoleList"))
		Expect(k8s.List(ctx, &crs, sel)).To(Succeed())
		Expect(crs.Items).To(BeEmpty())
		crs.SetGroupVersionKind(rbacv1.SchemeGroupVersion.WithKind("ClusterRoleBindingList"))
		Expect(k8s.List(ctx, &crs, sel)).To(Succeed())
		Expect(crs.Items).To(BeEmpty())
	})

	It("lets ripple roll Deployments in every listed namespace", func(ctx SpecContext) {
		newApp(ctx, "team-a", "web").expectRolls(ctx)
		newApp(ctx, "team-b", "web").expectRolls(ctx)
	})

	It("leaves other namespaces alone, and is refused them", func(ctx SpecContext) {
		outside := newApp(ctx, "team-c", "web")
		// A Deployment in a listed namespace created after it is recorded
		// first: by then ripple would have seen the one outside too.
		newApp(ctx, "team-a", "later").waitRecorded(ctx)
		Consistently(func(g Gomega) {
			g.Expect(outside.deployment(ctx).Annotations).NotTo(HaveKey(annotations.Recorded))
		}).WithTimeout(time.Second).WithPolling(pollAt).Should(Succeed())

		_, err := sa.clientset.AppsV1().Deployments("team-c").List(ctx, metav1.ListOptions{})
		forbidden(err, "listing Deployments outside the listed namespaces")
		_, err = sa.clientset.AppsV1().Deployments("").List(ctx, metav1.ListOptions{})
		forbidden(err, "listing Deployments cluster-wide")
		_, err = sa.clientset.CoreV1().ConfigMaps("team-c").Get(ctx, "web", metav1.GetOptions{})
		forbidden(err, "reading a ConfigMap outside the listed namespaces")
		_, err = sa.clientset.CoreV1().Secrets("team-c").List(ctx, metav1.ListOptions{})
		forbidden(err, "listing Secrets outside the listed namespaces")
		forbidden(sa.client.Patch(ctx, outside.deployment(ctx), client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"annotations":{"x":"y"}}}`))), "patching a Deployment outside the listed namespaces")
		_, err = sa.clientset.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
		forbidden(err, "listing Namespaces")
		forbidden(sa.client.Delete(ctx, newApp(ctx, "team-a", "victim").deployment(ctx)), "deleting a Deployment in a listed namespace")
	})
})

var _ = Describe("The chart installed with two replicas", Label("install"), Ordered, func() {
	var (
		inst *installed
		sa   *identity
		a, b *instance
	)
	BeforeAll(func(ctx SpecContext) {
		createNamespaces(ctx, "apps-ha")
		inst = installChart(ctx, "ripple-ha", "ripple-ha", "ha")
		sa = serviceAccount(ctx, inst.namespace, inst.sa)
		a = startRipple(sa.config, inst.args)
		b = startRipple(sa.config, inst.args)
	})

	leader := func() (*instance, *instance) {
		var lead, standby *instance
		EventuallyWithOffset(1, func() bool {
			switch {
			case a.elected() && !b.elected():
				lead, standby = a, b
			case b.elected() && !a.elected():
				lead, standby = b, a
			}
			return lead != nil
		}).WithTimeout(waitFor).WithPolling(pollAt).Should(BeTrue(), "exactly one replica leads")
		return lead, standby
	}

	It("elects one leader on the chart's Lease and reports it with an Event", func(ctx SpecContext) {
		leader()
		lease, err := clientset.CoordinationV1().Leases(inst.namespace).Get(ctx, "ripple-ha-leader", metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(ptr.Deref(lease.Spec.HolderIdentity, "")).NotTo(BeEmpty())
		Eventually(func(g Gomega) {
			evs, err := clientset.CoreV1().Events(inst.namespace).List(ctx, metav1.ListOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			var reasons []string
			for _, e := range evs.Items {
				if e.InvolvedObject.Kind == "Lease" && e.InvolvedObject.Name == "ripple-ha-leader" {
					reasons = append(reasons, e.Reason)
				}
			}
			g.Expect(reasons).To(ContainElement("LeaderElection"))
		}).WithTimeout(waitFor).WithPolling(pollAt).Should(Succeed())
	})

	It("lets the leader roll a Deployment", func(ctx SpecContext) {
		newApp(ctx, "apps-ha", "web").expectRolls(ctx)
	})

	It("hands over to the standby when the leader stops", func(ctx SpecContext) {
		lead, standby := leader()
		before, err := clientset.CoordinationV1().Leases(inst.namespace).Get(ctx, "ripple-ha-leader", metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		lead.stop()
		Eventually(standby.elected).WithTimeout(waitFor).WithPolling(pollAt).Should(BeTrue())
		after, err := clientset.CoordinationV1().Leases(inst.namespace).Get(ctx, "ripple-ha-leader", metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(after.Spec.HolderIdentity).NotTo(Equal(before.Spec.HolderIdentity))
		newApp(ctx, "apps-ha", "after-handover").expectRolls(ctx)
	})
})

var _ = Describe("The chart installed with Secrets ignored", Label("install"), Ordered, func() {
	var (
		inst *installed
		sa   *identity
	)
	BeforeAll(func(ctx SpecContext) {
		createNamespaces(ctx, "apps-cm")
		inst = installChart(ctx, "ripple-cm", "ripple-cm", "secrets-ignored")
		sa = serviceAccount(ctx, inst.namespace, inst.sa)
		startRipple(sa.config, inst.args)
	})

	It("lets ripple roll a Deployment when its ConfigMap changes", func(ctx SpecContext) {
		newApp(ctx, "apps-cm", "web").expectRolls(ctx)
	})

	It("refuses ripple every Secret but its digest key", func(ctx SpecContext) {
		for _, s := range []*corev1.Secret{
			{ObjectMeta: metav1.ObjectMeta{Namespace: "apps-cm", Name: "db"}},
			{ObjectMeta: metav1.ObjectMeta{Namespace: inst.namespace, Name: "other"}},
		} {
			s.StringData = map[string]string{"password": "hunter2"}
			Expect(k8s.Create(ctx, s)).To(Succeed())
			DeferCleanup(func(ctx SpecContext) { Expect(k8s.Delete(ctx, s)).To(Succeed()) })
			_, err := sa.clientset.CoreV1().Secrets(s.Namespace).Get(ctx, s.Name, metav1.GetOptions{})
			forbidden(err, "reading Secret "+s.Namespace+"/"+s.Name)
			_, err = sa.clientset.CoreV1().Secrets(s.Namespace).List(ctx, metav1.ListOptions{})
			forbidden(err, "listing Secrets in "+s.Namespace)
		}
		_, err := sa.clientset.CoreV1().Secrets("").Watch(ctx, metav1.ListOptions{})
		forbidden(err, "watching Secrets")
		key, err := sa.clientset.CoreV1().Secrets(inst.namespace).Get(ctx, "ripple-cm-digest-key", metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred(), "the digest key stays readable")
		Expect(key.Data["key"]).To(HaveLen(32), "ripple created it")
		_, err = sa.clientset.CoreV1().Secrets(inst.namespace).List(ctx, metav1.ListOptions{})
		forbidden(err, "listing Secrets next to the digest key")
		Expect(maySecrets(ctx, sa, "create", inst.namespace, "")).To(BeTrue(), "creating its key Secret")
		for _, verb := range []string{"get", "update", "patch", "delete"} {
			Expect(maySecrets(ctx, sa, verb, inst.namespace, "other")).To(BeFalse(), "%s another Secret in its namespace", verb)
		}
		Expect(maySecrets(ctx, sa, "create", "apps-cm", "")).To(BeFalse(), "creating Secrets outside its namespace")
	})
})

var _ = Describe("The chart installed with Jobs ignored", Label("install"), Ordered, func() {
	var (
		inst *installed
		sa   *identity
	)
	BeforeAll(func(ctx SpecContext) {
		createNamespaces(ctx, "apps-cron")
		inst = installChart(ctx, "ripple-cron", "ripple-cron", "default", "--set", "ignoredWorkloadTypes={jobs}")
		sa = serviceAccount(ctx, inst.namespace, inst.sa)
		startRipple(sa.config, inst.args)
	})

	It("lets ripple run a Forbid CronJob's Job with list and create on Jobs alone", func(ctx SpecContext) {
		for _, verb := range []string{"get", "watch", "patch", "update", "delete"} {
			Expect(may(ctx, sa.name, verb, "batch", "jobs", "apps-cron", "")).To(BeFalse(), "%s Jobs", verb)
		}
		for _, verb := range []string{"list", "create"} {
			Expect(may(ctx, sa.name, verb, "batch", "jobs", "apps-cron", "")).To(BeTrue(), "%s Jobs", verb)
		}

		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "apps-cron", Name: "nightly"}, Data: map[string]string{"greeting": "hello"}}
		cj := &batchv1.CronJob{
			ObjectMeta: metav1.ObjectMeta{Namespace: "apps-cron", Name: "nightly", Annotations: map[string]string{annotations.Auto: "true"}},
			Spec: batchv1.CronJobSpec{
				Schedule:          "0 0 1 1 *",
				ConcurrencyPolicy: batchv1.ForbidConcurrent,
				JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers: []corev1.Container{{
						Name: "app", Image: "app:1",
						EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: cm.Name}}}},
					}},
				}}}},
			},
		}
		Expect(k8s.Create(ctx, cm)).To(Succeed())
		Expect(k8s.Create(ctx, cj)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) {
			Expect(client.IgnoreNotFound(k8s.Delete(ctx, cj, client.PropagationPolicy(metav1.DeletePropagationBackground)))).To(Succeed())
			Expect(client.IgnoreNotFound(k8s.Delete(ctx, cm))).To(Succeed())
		})
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(cj), cj)).To(Succeed())
			g.Expect(cj.Annotations).To(HaveKey(annotations.Recorded))
		}).WithTimeout(waitFor).WithPolling(pollAt).Should(Succeed(), "ripple records the CronJob")

		cm.Data["greeting"] = "hello again"
		Expect(k8s.Update(ctx, cm)).To(Succeed())
		Eventually(func(g Gomega) {
			jobs := &batchv1.JobList{}
			g.Expect(k8s.List(ctx, jobs, client.InNamespace("apps-cron"))).To(Succeed())
			var ran []string
			for _, j := range jobs.Items {
				if owner := metav1.GetControllerOf(&j); owner != nil && owner.UID == cj.UID {
					ran = append(ran, j.Name)
				}
			}
			g.Expect(ran).To(HaveLen(1))
		}).WithTimeout(waitFor).WithPolling(pollAt).Should(Succeed(), "a ConfigMap edit runs the CronJob, once ripple listed its Jobs")
	})
})

var _ = Describe("The chart installed with a namespace selector", Label("install"), Ordered, func() {
	var sa *identity
	BeforeAll(func(ctx SpecContext) {
		createLabelledNamespaces(ctx, map[string]string{"ripple-test": "selected"}, "apps-selected")
		createNamespaces(ctx, "apps-unselected")
		inst := installChart(ctx, "ripple-sel", "ripple-sel", "default", "--set", "namespaceSelector=ripple-test=selected")
		sa = serviceAccount(ctx, inst.namespace, inst.sa)
		startRipple(sa.config, inst.args)
	})

	It("lets ripple read Namespaces and roll Deployments in the selected ones only", func(ctx SpecContext) {
		outside := newApp(ctx, "apps-unselected", "web")
		newApp(ctx, "apps-selected", "web").expectRolls(ctx)
		Expect(outside.deployment(ctx).Annotations).NotTo(HaveKey(annotations.Recorded))
		_, err := sa.clientset.CoreV1().Namespaces().Get(ctx, "apps-selected", metav1.GetOptions{})
		forbidden(err, "getting a Namespace (list and watch are enough)")
		forbidden(sa.client.Update(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "apps-unselected", Labels: map[string]string{"ripple-test": "selected"}}}), "labelling a Namespace")
	})
})

var _ = Describe("The chart installed with an existing key Secret", Label("install"), Ordered, func() {
	var (
		inst *installed
		sa   *identity
	)
	BeforeAll(func(ctx SpecContext) {
		createNamespaces(ctx, "apps-byo")
		inst = installChart(ctx, "ripple-byo", "ripple-byo", "default", "--set", "digestKey.create=false", "--set", "digestKey.existingSecret=byo-key")
		sa = serviceAccount(ctx, inst.namespace, inst.sa)
	})

	It("keeps ripple from starting until the Secret exists, and never creates it", func(ctx SpecContext) {
		opts, err := cli.Parse(append(slices.Clone(inst.args), fastArgs...))
		Expect(err).NotTo(HaveOccurred())
		Expect(opts.HMACKeySecret).To(Equal(inst.namespace + "/byo-key"))
		_, err = cli.NewManager(ctx, sa.config, &opts, GinkgoWriter)
		Expect(err).To(MatchError(SatisfyAll(ContainSubstring("--hmac-key-secret"), ContainSubstring("may not create"))))
		Expect(maySecrets(ctx, sa, "create", inst.namespace, "")).To(BeFalse())

		key := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: inst.namespace, Name: "byo-key"},
			Data:       map[string][]byte{"key": []byte("an external secrets tool made me")},
		}
		Expect(k8s.Create(ctx, key)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) { Expect(k8s.Delete(ctx, key)).To(Succeed()) })
		startRipple(sa.config, inst.args)
		newApp(ctx, "apps-byo", "web").expectRolls(ctx)
	})
})

var _ = Describe("Upgrading from a chart that rendered the digest key", Label("install"), func() {
	It("keeps the key when the Secret is annotated to be kept, as the README says", func(ctx SpecContext) {
		const release = "ripple-up"
		_, err := helm.run(ctx, "install", release, filepath.Join("testdata", "rendered-key-chart"), "--namespace", release, "--create-namespace")
		Expect(err).NotTo(HaveOccurred())
		key := &corev1.Secret{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: release, Name: release + "-digest-key"}, key)).To(Succeed())
		before := key.Data["key"]
		DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(k8s.Delete(ctx, key))).To(Succeed()) })
		Expect(k8s.Patch(ctx, key, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"helm.sh/resource-policy":"keep"}}}`)))).To(Succeed())

		_, err = helm.run(ctx, "upgrade", release, chartDir, "--namespace", release, "-f", valuesFile("default"))
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func(ctx SpecContext) {
			_, err := helm.run(ctx, "uninstall", release, "--namespace", release, "--wait")
			Expect(err).NotTo(HaveOccurred())
		})
		d := &appsv1.Deployment{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: release, Name: release}, d)).To(Succeed())
		startRipple(serviceAccount(ctx, release, d.Spec.Template.Spec.ServiceAccountName).config, expandArgs(d.Spec.Template.Spec.Containers[0], release))
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(key), key)).To(Succeed())
		Expect(key.Data["key"]).To(Equal(before), "ripple uses the key the old chart rendered")
	})
})
