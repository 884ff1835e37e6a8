package integration

import (
	"fmt"
	"os"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ripple-controller/ripple/internal/annotations"
	"github.com/ripple-controller/ripple/internal/options"
)

// setEnv sets an environment variable ripple reads, for the rest of the spec.
func setEnv(key, value string) {
	GinkgoHelper()
	old, had := os.LookupEnv(key)
	Expect(os.Setenv(key, value)).To(Succeed())
	DeferCleanup(func() {
		if had {
			Expect(os.Setenv(key, old)).To(Succeed())
		} else {
			Expect(os.Unsetenv(key)).To(Succeed())
		}
	})
}

// scopeCase is a namespace with a ConfigMap and an auto Deployment that uses it.
type scopeCase struct {
	ns  string
	cm  *corev1.ConfigMap
	dep *appsv1.Deployment
}

func newScopeCase(labels map[string]string) scopeCase {
	GinkgoHelper()
	ns := newNamespace(labels)
	return scopeCase{
		ns:  ns,
		cm:  createConfigMap(ns, "cfg", map[string]string{"k": "1"}),
		dep: createDeployment(ns, "dep", auto, volumeConfigMap("cfg")),
	}
}

// expectInScope proves ripple rolls the case's workload once on a change.
func (c scopeCase) expectInScope() {
	GinkgoHelper()
	before := recorded(c.dep)
	setData(c.cm, "k", "in scope")
	expectRolledOnce(c.dep, before)
}

// expectOutOfScope proves ripple writes nothing to the case's workload, even
// on a change. Call it after expectInScope of a case in scope, so that
// ripple has had its chance.
func (c scopeCase) expectOutOfScope() {
	GinkgoHelper()
	before := withRollouts(c.dep, stateOf(c.dep))
	setData(c.cm, "k", "out of scope")
	expectNoWrite(c.dep, before)
}

func leaseIn(ns, name string) func() error {
	return func() error {
		return k8s.Get(suiteCtx, client.ObjectKey{Namespace: ns, Name: name}, &coordinationv1.Lease{})
	}
}

var _ = Describe("Namespace scope, as in Reloader", func() {
	DescribeTable("--namespace-selector accepts Reloader's forms and rolls only in namespaces that match",
		func(args []string, matching, notMatching map[string]string) {
			yes, no := newScopeCase(matching), newScopeCase(notMatching)
			startRipple(args...)
			yes.expectInScope()
			no.expectOutOfScope()
		},
		Entry("key:* selects namespaces that have the label, whatever its value",
			[]string{"--namespace-selector=ripple-sel-a:*"}, map[string]string{"ripple-sel-a": ""}, map[string]string{"ripple-sel-b": "x"}),
		Entry("key:value", []string{"--namespace-selector=ripple-sel-a:x"},
			map[string]string{"ripple-sel-a": "x"}, map[string]string{"ripple-sel-a": "y"}),
		Entry("a mixed list: every term must match",
			[]string{"--namespace-selector=ripple-sel-a:x, ripple-sel-b:*, ripple-sel-c=*, ripple-sel-d=y"},
			map[string]string{"ripple-sel-a": "x", "ripple-sel-b": "1", "ripple-sel-c": "2", "ripple-sel-d": "y"},
			map[string]string{"ripple-sel-a": "x", "ripple-sel-b": "1", "ripple-sel-d": "y"}),
		Entry("a repeated flag: every term must match",
			[]string{"--namespace-selector=ripple-sel-a:x", "--namespace-selector=ripple-sel-b:*"},
			map[string]string{"ripple-sel-a": "x", "ripple-sel-b": "1"}, map[string]string{"ripple-sel-a": "x"}),
	)

	It("records each workload created together with its labelled namespace, and rolls it exactly once on the next change", func() {
		startRipple("--namespace-selector=ripple-born:*")
		// A burst, so that some workloads reach ripple before their namespace does.
		cases := make([]scopeCase, 8)
		for i := range cases {
			cases[i] = newScopeCase(map[string]string{"ripple-born": fmt.Sprint(i)})
		}
		befores := make([]state, len(cases))
		for i, c := range cases {
			befores[i] = recorded(c.dep)
		}

		for _, c := range cases {
			setData(c.cm, "k", "2")
		}

		for i, c := range cases {
			Eventually(befores[i].Rollouts, "20s").Should(Equal(1), "%s/%s rolls", c.ns, c.dep.Name)
		}
		Consistently(func() int {
			n := 0
			for _, b := range befores {
				n += b.Rollouts()
			}
			return n
		}, quiet).Should(Equal(len(cases)), "each workload rolls exactly once")
	})

	DescribeTable("acts on no recreate or run mark written by hand on a Job or CronJob out of scope",
		func(flag func(in, out string) string) {
			in := newNamespace(map[string]string{"ripple-marks": "in"})
			out := newNamespace(map[string]string{"ripple-marks": "out"})
			run := map[string]string{annotations.Auto: "true", annotations.Run: `{"job":"nightly-by-hand","stamp":"s","cause":"ConfigMap/cfg"}`}
			for _, ns := range []string{in, out} {
				DeferCleanup(removeBatchLeftovers, ns)
				createConfigMap(ns, "cfg", map[string]string{"k": "1"})
				createCronJob(ns, "nightly", run, envFromConfigMap("cfg"))
			}
			job := createJob(out, "migrate", map[string]string{annotations.Auto: "true", annotations.Recreate: `{"stamp":"s","cause":"ConfigMap/cfg"}`},
				envFromConfigMap("cfg"))
			startRipple(flag(in, out))
			waitFor(jobsIn(in)).Should(ConsistOf("nightly-by-hand"), "in scope, the mark is carried on")

			Consistently(jobsIn(out), quiet).Should(ConsistOf("migrate"), "out of scope, no Job is created")
			Expect(jobNow(out, "migrate")()).To(HaveField("UID", job.UID), "nor deleted")
			Expect(jobNow(out, "migrate")().DeletionTimestamp).To(BeNil())
		},
		Entry("--namespace-selector", func(_, _ string) string { return "--namespace-selector=ripple-marks=in" }),
		Entry("--namespaces-to-ignore", func(_, out string) string { return "--namespaces-to-ignore=" + out }),
	)

	It("writes InvalidAnnotation Events only for workloads in scope, not in an ignored namespace nor one the selector excludes", func() {
		invalid := map[string]string{annotations.Auto: "yes"}
		inScope := newNamespace(map[string]string{"ripple-events": "in"})
		ignored := newNamespace(map[string]string{"ripple-events": "in"})
		excluded := newNamespace(map[string]string{"ripple-events": "out"})
		reported := createDeployment(inScope, "dep", invalid)
		inIgnored := createDeployment(ignored, "dep", invalid)
		inExcluded := createDeployment(excluded, "dep", invalid)
		startRipple("--namespace-selector=ripple-events=in", "--namespaces-to-ignore="+ignored)
		Eventually(eventsFor(reported), "10s").Should(ContainElement(HavePrefix("InvalidAnnotation")))

		// A relabelled namespace queues all its workloads again.
		for _, ns := range []string{ignored, excluded} {
			update(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, func(n *corev1.Namespace) {
				n.Labels["ripple-events-touched"] = "true"
			})
		}

		for _, dep := range []*appsv1.Deployment{inIgnored, inExcluded} {
			Consistently(eventsFor(dep), quiet).ShouldNot(ContainElement(HavePrefix("InvalidAnnotation")),
				"no Event for %s/%s, out of scope", dep.Namespace, dep.Name)
		}
	})

	It("watches only the namespace in KUBERNETES_NAMESPACE", func() {
		watched, other := newScopeCase(nil), newScopeCase(nil)
		setEnv(options.EnvWatchNamespace, watched.ns)
		startRipple()
		watched.expectInScope()
		other.expectOutOfScope()
	})

	It("prefers --namespaces to KUBERNETES_NAMESPACE", func() {
		listed, fromEnv := newScopeCase(nil), newScopeCase(nil)
		setEnv(options.EnvWatchNamespace, fromEnv.ns)
		startRipple("--namespaces=" + listed.ns)
		listed.expectInScope()
		fromEnv.expectOutOfScope()
	})

	DescribeTable("ignores --namespace-selector and --namespaces-to-ignore when it watches a list of namespaces, as Reloader's scoped mode",
		func(useEnv bool) {
			listed := newScopeCase(map[string]string{"ripple-scoped": "no"})
			other := newScopeCase(map[string]string{"ripple-scoped": "yes"})
			args := []string{"--namespace-selector=ripple-scoped=yes", "--namespaces-to-ignore=" + listed.ns}
			if useEnv {
				setEnv(options.EnvWatchNamespace, listed.ns)
			} else {
				args = append(args, "--namespaces="+listed.ns)
			}
			startRipple(args...)
			listed.expectInScope()
			other.expectOutOfScope()
		},
		Entry("--namespaces", false),
		Entry("KUBERNETES_NAMESPACE", true),
	)

	It("puts the leader election Lease in POD_NAMESPACE outside a cluster", func() {
		c := newScopeCase(nil)
		setEnv(options.EnvPodNamespace, c.ns)
		startRipple("--enable-ha", "--leader-election-id=ripple-pod-ns",
			"--leader-election-lease-duration=4s", "--leader-election-renew-deadline=3s", "--leader-election-retry-period=500ms")
		Eventually(leaseIn(c.ns, "ripple-pod-ns"), "20s").Should(Succeed())
		c.expectInScope()
	})

	It("puts the Lease in --leader-election-namespace, not in POD_NAMESPACE", func() {
		c, podNs := newScopeCase(nil), newNamespace(nil)
		setEnv(options.EnvPodNamespace, podNs)
		startRipple("--enable-ha", "--leader-election-namespace="+c.ns, "--leader-election-id=ripple-flag-ns",
			"--leader-election-lease-duration=4s", "--leader-election-renew-deadline=3s", "--leader-election-retry-period=500ms")
		Eventually(leaseIn(c.ns, "ripple-flag-ns"), "20s").Should(Succeed())
		c.expectInScope()
		Expect(leaseIn(podNs, "ripple-flag-ns")()).NotTo(Succeed(), "no Lease in POD_NAMESPACE")
	})
})

var _ = Describe("Renamed exclude annotations", func() {
	DescribeTable("exclude the objects they list, and Reloader's names no longer do",
		func(flag, renamed, reloaders string, create func(ns, name string) client.Object, change func(client.Object), use func(string) podMod) {
			ns := newNamespace(nil)
			excluded, kept := create(ns, "excluded"), create(ns, "kept")
			dep := createDeployment(ns, "dep", map[string]string{annotations.Auto: "true", renamed: "excluded", reloaders: "kept"},
				use("excluded"), use("kept"))
			startRipple(flag + "=" + renamed)
			before := recorded(dep)

			change(excluded)
			expectNoRollout(dep, before)

			change(kept)
			expectRolledOnce(dep, before)
		},
		Entry("--configmap-exclude-annotation", "--configmap-exclude-annotation", "example.com/cm-exclude", annotations.ConfigMapExclude,
			func(ns, name string) client.Object { return createConfigMap(ns, name, map[string]string{"k": "1"}) },
			func(o client.Object) { setData(o.(*corev1.ConfigMap), "k", "2") }, volumeConfigMap),
		Entry("--secret-exclude-annotation", "--secret-exclude-annotation", "example.com/secret-exclude", annotations.SecretExclude,
			func(ns, name string) client.Object { return createSecret(ns, name, map[string]string{"k": "1"}) },
			func(o client.Object) { setSecretData(o.(*corev1.Secret), "k", "2") }, envFromSecret),
	)
})
