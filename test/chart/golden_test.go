package chart

import (
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/ripple-controller/ripple/internal/options"
)

// The release name and namespace of every offline render.
const (
	goldenRelease   = "ripple"
	goldenNamespace = "ripple-system"
)

// chartCases name the values files testdata/<case>.values.yaml, each
// rendered into testdata/<case>.golden.yaml.
var chartCases = []string{"default", "namespaced", "ha", "secrets-ignored", "monitoring"}

func valuesFile(c string) string { return filepath.Join("testdata", c+".values.yaml") }

// render runs `helm template` for the golden release with the values of
// case c and any further helm flags, and parses the result.
func render(c string, flags ...string) (string, objects) {
	GinkgoHelper()
	return renderAs(goldenRelease, goldenNamespace, c, flags...)
}

// renderAs is render for another release name and namespace.
func renderAs(release, namespace, c string, flags ...string) (string, objects) {
	GinkgoHelper()
	ctx, cancel := testCtx()
	defer cancel()
	args := append([]string{"template", release, chartDir, "--namespace", namespace, "-f", valuesFile(c)}, flags...)
	out, err := helm.run(ctx, args...)
	Expect(err).NotTo(HaveOccurred())
	objs, err := parseManifest(out)
	Expect(err).NotTo(HaveOccurred())
	return out, objs
}

// parseArgs runs the rendered ripple arguments through ripple's own parser.
func parseArgs(args []string) (options.Options, *pflag.FlagSet) {
	fs := pflag.NewFlagSet("ripple", pflag.ContinueOnError)
	p := options.NewParser(fs)
	ExpectWithOffset(1, fs.Parse(args)).To(Succeed())
	opts, err := p.Options()
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return opts, fs
}

var _ = Describe("The chart, rendered offline", Label("chart"), func() {
	It("passes helm lint --strict with the values of every case", func(ctx SpecContext) {
		for _, c := range chartCases {
			_, err := helm.run(ctx, "lint", "--strict", chartDir, "--namespace", goldenNamespace, "-f", valuesFile(c))
			Expect(err).NotTo(HaveOccurred(), "case %s", c)
		}
	})

	DescribeTable("renders as its golden file", func(c string) {
		out, _ := render(c)
		golden := filepath.Join("testdata", c+".golden.yaml")
		if *update {
			Expect(os.WriteFile(golden, []byte(out), 0o644)).To(Succeed())
			return
		}
		want, err := os.ReadFile(golden)
		Expect(err).NotTo(HaveOccurred(), "run `go test ./test/chart -update` to create it")
		Expect(out).To(Equal(string(want)), "the render differs from %s (regenerate with `go test ./test/chart -update` if intended):\n%s", golden, diffLines(string(want), out))
	},
		Entry("default", "default"),
		Entry("namespaced", "namespaced"),
		Entry("HA", "ha"),
		Entry("secrets ignored", "secrets-ignored"),
		Entry("dashboard and alert rules", "monitoring"),
	)

	It("renders the same manifest every time, so GitOps tools see no drift", func() {
		for _, c := range chartCases {
			first, _ := render(c)
			second, _ := render(c)
			Expect(second).To(Equal(first), "case %s renders differently twice:\n%s", c, diffLines(first, second))
		}
	})

	It("runs ripple locked down, probed on its health port, with a per-installation key", func() {
		_, objs := render("default")
		d := deploymentOf(objs)
		pod := d.Spec.Template.Spec
		Expect(pod.Containers).To(HaveLen(1))
		c := pod.Containers[0]
		sc := c.SecurityContext
		Expect(*sc.RunAsNonRoot).To(BeTrue())
		Expect(*sc.ReadOnlyRootFilesystem).To(BeTrue())
		Expect(*sc.AllowPrivilegeEscalation).To(BeFalse())
		Expect(sc.Capabilities.Drop).To(Equal([]corev1.Capability{"ALL"}))
		Expect(sc.SeccompProfile.Type).To(Equal(corev1.SeccompProfileTypeRuntimeDefault))
		Expect(*pod.SecurityContext.RunAsNonRoot).To(BeTrue())
		Expect(pod.SecurityContext.SeccompProfile.Type).To(Equal(corev1.SeccompProfileTypeRuntimeDefault))

		opts, _ := parseArgs(c.Args)
		Expect(c.LivenessProbe.HTTPGet.Path).To(Equal("/healthz"))
		Expect(c.ReadinessProbe.HTTPGet.Path).To(Equal("/readyz"))
		for _, p := range []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe} {
			Expect(p.HTTPGet.Port).To(Equal(intstr.FromString("health")))
		}
		ports := map[string]int32{}
		for _, p := range c.Ports {
			ports[p.Name] = p.ContainerPort
		}
		Expect(opts.ProbeAddr).To(Equal(":8081"))
		Expect(opts.MetricsAddr).To(Equal(":9090"))
		Expect(ports).To(Equal(map[string]int32{"health": 8081, "metrics": 9090}))
		svc := into[corev1.Service](objs.find("Service", goldenNamespace, "ripple-metrics"))
		Expect(svc.Spec.Ports[0].TargetPort).To(Equal(intstr.FromString("metrics")))
		Expect(svc.Spec.Selector).To(Equal(d.Spec.Selector.MatchLabels))
		Expect(objs.ofKind("ServiceMonitor")).To(BeEmpty())

		Expect(opts.HMACKeySecret).To(Equal(goldenNamespace + "/ripple-digest-key"))
		Expect(objs.ofKind("Secret")).To(BeEmpty(), "ripple creates its key; the chart renders none")
		Expect(objs.rules()["Role "+goldenNamespace+"/ripple-digest-key"]).To(Equal([]rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{"ripple-digest-key"}, Verbs: []string{"get"}},
			{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"create"}},
		}))

		Expect(opts.EnableHA).To(BeFalse())
		Expect(objs.ofKind("PodDisruptionBudget")).To(BeEmpty())
		Expect(objs.ofKind("Lease")).To(BeEmpty())
	})

	It("grants workloads get/list/watch/patch, Jobs create and delete, config read, Events, cluster-wide", func() {
		_, objs := render("default")
		Expect(objs.ofKind("Role")).To(HaveLen(1), "only the digest key Role")
		Expect(objs.rules()["ClusterRole ripple"]).To(Equal([]rbacv1.PolicyRule{
			{APIGroups: []string{"apps"}, Resources: []string{"deployments", "statefulsets", "daemonsets"}, Verbs: []string{"get", "list", "watch", "patch"}},
			{APIGroups: []string{"batch"}, Resources: []string{"cronjobs"}, Verbs: []string{"get", "list", "watch", "patch"}},
			{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: []string{"get", "list", "watch", "patch", "delete", "create"}},
			{APIGroups: []string{""}, Resources: []string{"configmaps", "secrets"}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{"events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create"}},
		}))
		crb := into[rbacv1.ClusterRoleBinding](objs.find("ClusterRoleBinding", "", "ripple"))
		Expect(crb.Subjects).To(Equal([]rbacv1.Subject{{Kind: "ServiceAccount", Name: "ripple", Namespace: goldenNamespace}}))
	})

	It("adds a ServiceMonitor on request, and drops metrics entirely when disabled", func() {
		_, objs := render("default", "--set", "serviceMonitor.enabled=true", "--set", "serviceMonitor.labels.release=prom")
		sm := objs.find("ServiceMonitor", goldenNamespace, "ripple")
		Expect(sm).NotTo(BeNil())
		Expect(sm.GetLabels()).To(HaveKeyWithValue("release", "prom"))
		svc := into[corev1.Service](objs.find("Service", goldenNamespace, "ripple-metrics"))
		matchLabels, _, err := unstructured.NestedStringMap(sm.Object, "spec", "selector", "matchLabels")
		Expect(err).NotTo(HaveOccurred())
		Expect(matchLabels).NotTo(BeEmpty())
		for k, v := range matchLabels {
			Expect(svc.Labels).To(HaveKeyWithValue(k, v), "the ServiceMonitor selects the metrics Service")
		}
		Expect(sm.Object["spec"]).To(HaveKeyWithValue("endpoints", ContainElement(HaveKeyWithValue("port", "metrics"))))

		_, objs = render("default", "--set", "metrics.enabled=false", "--set", "serviceMonitor.enabled=true")
		Expect(objs.ofKind("Service")).To(BeEmpty())
		Expect(objs.ofKind("ServiceMonitor")).To(BeEmpty())
		c := deploymentOf(objs).Spec.Template.Spec.Containers[0]
		opts, _ := parseArgs(c.Args)
		Expect(opts.MetricsAddr).To(Equal("0"))
		Expect(c.Ports).To(ConsistOf(HaveField("Name", "health")))
	})

	It("lists and watches Namespaces only with a namespace selector", func() {
		_, objs := render("default", "--set", "namespaceSelector=team=payments")
		ok, names := grants(objs.rules()["ClusterRole ripple"], "", "namespaces", "watch")
		Expect(ok).To(BeTrue())
		Expect(names).To(BeNil())
		_, objs = render("default")
		for who, rules := range objs.rules() {
			ok, _ := grants(rules, "", "namespaces", "list")
			Expect(ok).To(BeFalse(), who)
		}
	})

	It("reads SecretProviderClassPodStatuses only with csiIntegration, which enables the flag", func() {
		_, objs := render("default", "--set", "csiIntegration=true")
		for _, verb := range []string{"get", "list", "watch"} {
			ok, names := grants(objs.rules()["ClusterRole ripple"], "secrets-store.csi.x-k8s.io", "secretproviderclasspodstatuses", verb)
			Expect(ok).To(BeTrue(), verb)
			Expect(names).To(BeNil())
		}
		opts, _ := parseArgs(deploymentOf(objs).Spec.Template.Spec.Containers[0].Args)
		Expect(opts.EnableCSIIntegration).To(BeTrue())
		_, objs = render("default")
		for who, rules := range objs.rules() {
			ok, _ := grants(rules, "secrets-store.csi.x-k8s.io", "secretproviderclasspodstatuses", "list")
			Expect(ok).To(BeFalse(), who)
		}
	})

	It("lets ripple list and patch pods only with podRefresh, which enables the flag", func() {
		_, objs := render("default", "--set", "podRefresh=true")
		for _, verb := range []string{"list", "patch"} {
			ok, names := grants(objs.rules()["ClusterRole ripple"], "", "pods", verb)
			Expect(ok).To(BeTrue(), verb)
			Expect(names).To(BeNil())
		}
		opts, _ := parseArgs(deploymentOf(objs).Spec.Template.Spec.Containers[0].Args)
		Expect(opts.EnablePodRefresh).To(BeTrue())
		_, objs = render("default")
		for who, rules := range objs.rules() {
			for _, verb := range []string{"get", "list", "patch"} {
				ok, _ := grants(rules, "", "pods", verb)
				Expect(ok).To(BeFalse(), "%s may %s pods", who, verb)
			}
		}
	})

	It("drops the rights of ignored workload kinds and ConfigMaps", func() {
		_, objs := render("default", "--set", "ignoredWorkloadTypes={daemonsets,jobs}", "--set", "resourcesToIgnore=configMaps")
		rules := objs.rules()["ClusterRole ripple"]
		Expect(rules[0].Resources).To(Equal([]string{"deployments", "statefulsets"}))
		Expect(rules[1]).To(Equal(rbacv1.PolicyRule{APIGroups: []string{"batch"}, Resources: []string{"cronjobs"}, Verbs: []string{"get", "list", "watch", "patch"}}))
		Expect(rules[2]).To(Equal(rbacv1.PolicyRule{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: []string{"list", "create"}}),
			"CronJobs create Jobs and, under Forbid, list them from the API server (no Job is cached, got or watched); only handled Jobs are deleted")
		Expect(rules[3].Resources).To(Equal([]string{"secrets"}))

		_, objs = render("default", "--set", "ignoredWorkloadTypes={cronjobs,jobs}")
		ok, _ := grants(objs.rules()["ClusterRole ripple"], "batch", "jobs", "create")
		Expect(ok).To(BeFalse(), "no right on Jobs when neither Jobs nor CronJobs are handled")
	})

	It("grants Rollouts get/list/watch/patch only with isArgoRollouts, and Deployments read for their workloadRef", func() {
		_, objs := render("default")
		ok, _ := grants(objs.rules()["ClusterRole ripple"], "argoproj.io", "rollouts", "watch")
		Expect(ok).To(BeFalse(), "no right on Rollouts without isArgoRollouts")

		_, objs = render("default", "--set", "isArgoRollouts=true")
		rules := objs.rules()["ClusterRole ripple"]
		Expect(rules).To(ContainElement(rbacv1.PolicyRule{APIGroups: []string{"argoproj.io"}, Resources: []string{"rollouts"}, Verbs: []string{"get", "list", "watch", "patch"}}))
		opts, _ := parseArgs(deploymentOf(objs).Spec.Template.Spec.Containers[0].Args)
		Expect(opts.Enabled["is-Argo-Rollouts"]).To(BeTrue())

		_, objs = render("default", "--set", "isArgoRollouts=true", "--set", "ignoredWorkloadTypes={deployments}")
		rules = objs.rules()["ClusterRole ripple"]
		Expect(rules).To(ContainElement(rbacv1.PolicyRule{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"get", "list", "watch"}}),
			"a Rollout's workloadRef is read, never written")
		ok, _ = grants(rules, "apps", "deployments", "patch")
		Expect(ok).To(BeFalse())

		_, objs = render("default", "--set", "isArgoRollouts=true", "--set", "ignoredWorkloadTypes={rollouts}")
		ok, _ = grants(objs.rules()["ClusterRole ripple"], "argoproj.io", "rollouts", "watch")
		Expect(ok).To(BeFalse(), "no right on ignored Rollouts")
	})

	It("in the namespaced scope, grants a Role in each listed namespace and nothing cluster-scoped", func() {
		_, objs := render("namespaced")
		Expect(objs.ofKind("ClusterRole")).To(BeEmpty())
		Expect(objs.ofKind("ClusterRoleBinding")).To(BeEmpty())
		for _, u := range objs {
			Expect(u.GetNamespace()).NotTo(BeEmpty(), "%s %s is cluster-scoped", u.GetKind(), u.GetName())
		}
		rules := objs.rules()
		for _, ns := range []string{"team-a", "team-b"} {
			Expect(rules).To(HaveKey("Role " + ns + "/ripple"))
			rb := into[rbacv1.RoleBinding](objs.find("RoleBinding", ns, "ripple"))
			Expect(rb.RoleRef.Name).To(Equal("ripple"))
			Expect(rb.Subjects).To(Equal([]rbacv1.Subject{{Kind: "ServiceAccount", Name: "ripple", Namespace: goldenNamespace}}))
		}
		opts, _ := parseArgs(deploymentOf(objs).Spec.Template.Spec.Containers[0].Args)
		Expect(opts.Namespaces).To(Equal([]string{"team-a", "team-b"}))
	})

	It("with two replicas, elects a leader in the pod's namespace and keeps one pod up", func() {
		_, objs := render("ha")
		d := deploymentOf(objs)
		Expect(*d.Spec.Replicas).To(BeEquivalentTo(2))
		c := d.Spec.Template.Spec.Containers[0]
		Expect(c.Env).To(ContainElement(corev1.EnvVar{Name: "POD_NAMESPACE", ValueFrom: &corev1.EnvVarSource{
			FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"},
		}}))
		opts, _ := parseArgs(expandArgs(c, goldenNamespace))
		Expect(opts.EnableHA).To(BeTrue())
		Expect(opts.LeaderElectionNamespace).To(Equal(goldenNamespace))
		Expect(opts.LeaderElectionID).To(Equal("ripple-leader"))
		rules := objs.rules()["Role "+goldenNamespace+"/ripple-leader-election"]
		ok, names := grants(rules, "coordination.k8s.io", "leases", "update")
		Expect(ok).To(BeTrue())
		Expect(names).To(Equal([]string{"ripple-leader"}))
		pdb := into[policyv1.PodDisruptionBudget](objs.find("PodDisruptionBudget", goldenNamespace, "ripple"))
		Expect(pdb.Spec.MinAvailable.IntValue()).To(Equal(1))
		Expect(pdb.Spec.Selector.MatchLabels).To(Equal(d.Spec.Selector.MatchLabels))
	})

	It("with an existing key Secret, grants get on it and no create", func() {
		for existing, want := range map[string]string{"my-key": goldenNamespace + "/my-key", "keys/my-key": "keys/my-key"} {
			_, objs := render("default", "--set", "digestKey.create=false", "--set", "digestKey.existingSecret="+existing)
			opts, _ := parseArgs(deploymentOf(objs).Spec.Template.Spec.Containers[0].Args)
			Expect(opts.HMACKeySecret).To(Equal(want))
			ns, name, _ := strings.Cut(want, "/")
			Expect(objs.rules()["Role "+ns+"/ripple-digest-key"]).To(Equal([]rbacv1.PolicyRule{
				{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{name}, Verbs: []string{"get"}},
			}))
			for who, rules := range objs.rules() {
				ok, _ := grants(rules, "", "secrets", "create")
				Expect(ok).To(BeFalse(), "%s may create Secrets", who)
			}
		}
	})

	It("with Secrets ignored, grants no read of Secrets but get on the digest key", func() {
		_, objs := render("secrets-ignored")
		for who, rules := range objs.rules() {
			for _, verb := range []string{"get", "list", "watch"} {
				ok, names := grants(rules, "", "secrets", verb)
				if ok {
					Expect(names).To(Equal([]string{"ripple-digest-key"}), "%s may %s Secrets", who, verb)
				}
			}
		}
		opts, _ := parseArgs(deploymentOf(objs).Spec.Template.Spec.Containers[0].Args)
		Expect(opts.IgnoreSecrets).To(BeTrue())
	})

	It("has a value for every flag of ripple", func() {
		seen := map[string]bool{}
		collect := func(flags ...string) options.Options {
			_, objs := render("default", append([]string{"-f", filepath.Join("testdata", "all-flags.values.yaml")}, flags...)...)
			opts, fs := parseArgs(expandArgs(deploymentOf(objs).Spec.Template.Spec.Containers[0], goldenNamespace))
			fs.Visit(func(f *pflag.Flag) { seen[f.Name] = true })
			return opts
		}
		opts := collect()
		Expect(opts.NamespaceSelector.String()).To(Equal("team=payments"))
		Expect(opts.ResourceSelector.String()).To(Equal("reload=true"))
		Expect(opts.Keys.Auto).To(Equal("example.com/auto"))
		Expect(opts.Keys.Ignore).To(Equal("example.com/ignore"))
		Expect(opts.HMACKeySecret).To(Equal("keys/ripple-key"))
		Expect(opts.LeaderElectionNamespace).To(Equal("leases"))
		Expect(opts.Debounce.String()).To(Equal("3s"))
		Expect(opts.QPS).To(BeEquivalentTo(25.5))
		Expect(opts.Keys.SecretExclude).To(Equal("example.com/secret-exclude"))
		Expect(opts.ReloadStrategy).To(Equal("env-vars"))
		Expect(opts.PausePeriod.String()).To(Equal("2m0s"))
		Expect(opts.Keys.PausedAt).To(Equal("example.com/paused-at"))
		Expect(opts.DryRun).To(BeTrue())
		Expect(opts.KeyPrecision).To(BeTrue())
		Expect(opts.EnablePodRefresh).To(BeTrue())
		Expect(opts.MaxRolloutsInProgress).To(Equal(10))
		Expect(opts.RolloutTimeout.String()).To(Equal("1m30s"))
		Expect(opts.MinRolloutInterval.String()).To(Equal("30s"))
		collect("--set", "namespaceSelector=", "--set-json", "namespacesToIgnore=[]", "--set", "watchNamespaces={a,b}")

		var missing []string
		fs := pflag.NewFlagSet("ripple", pflag.ContinueOnError)
		options.NewParser(fs)
		fs.VisitAll(func(f *pflag.Flag) {
			// Deprecated flags are Reloader's, accepted and ignored.
			if !seen[f.Name] && f.Deprecated == "" {
				missing = append(missing, f.Name)
			}
		})
		Expect(missing).To(BeEmpty(), "flags no value of the chart sets")
	})

	It("passes alerts and the per-namespace count as Reloader's environment variables, the alert URL from a Secret", func() {
		_, objs := render("default", "--set", "alerts.enabled=true", "--set", "alerts.sink=slack", "--set", "alerts.webhookUrlSecret.name=hooks",
			"--set", "alerts.additionalInfo=prod", "--set", "metrics.countByNamespace=true")
		env := deploymentOf(objs).Spec.Template.Spec.Containers[0].Env
		Expect(env).To(ContainElements(
			corev1.EnvVar{Name: options.EnvMetricsCountByNamespace, Value: "enabled"},
			corev1.EnvVar{Name: options.EnvAlertOnReload, Value: "true"},
			corev1.EnvVar{Name: options.EnvAlertSink, Value: "slack"},
			corev1.EnvVar{Name: options.EnvAlertWebhookURL, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: "hooks"}, Key: "url"}}},
			corev1.EnvVar{Name: options.EnvAlertAdditionalInfo, Value: "prod"},
		))
		_, objs = render("default")
		for _, e := range deploymentOf(objs).Spec.Template.Spec.Containers[0].Env {
			Expect(e.Name).NotTo(Or(HavePrefix("ALERT_"), Equal(options.EnvMetricsCountByNamespace)), "nothing by default")
		}
	})

	It("refuses values that cannot work", func(ctx SpecContext) {
		for _, bad := range [][]string{
			{"--set", "watchNamespaces={a}", "--set", "namespaceSelector=x=y"},
			{"--set", "watchNamespaces={a}", "--set", "namespacesToIgnore={a}"},
			{"--set", "replicas=2", "--set", "highAvailability.enabled=false"},
			{"--set", "resourcesToIgnore=pods"},
			{"--set", "ignoredWorkloadTypes={pods}"},
			{"--set", "debounce=soon"},
			{"--set", "reloadStrategy=envvars"},
			{"--set", "pausePeriod=soon"},
			{"--set", "webhookUrl=ftp://receiver/hook"},
			{"--set", "alerts.enabled=true"},
			{"--set", "alerts.sink=discord"},
			{"--set", "logFormat=xml"},
			{"--set", "noSuchValue=1"},
			{"--set", "digestKey.create=false"},
			{"--set", "prometheusRule.enabled=true"},
			{"--set", "prometheusRule.enabled=true", "--set", "serviceMonitor.enabled=true", "--set", "metrics.enabled=false"},
			// The Lease name, which the API server refuses unless it is a DNS
			// subdomain: no replica would ever lead, and nothing would roll.
			{"--set", "highAvailability.enabled=true", "--set", "highAvailability.leaderElection.id=Ripple_Leader"},
			{"--set", "highAvailability.enabled=true", "--set", "highAvailability.leaderElection.id=ripple-leader-"},
			{"--set", "highAvailability.enabled=true", "--set", "highAvailability.leaderElection.id=" + strings.Repeat("a", 254)},
		} {
			_, err := helm.run(ctx, append([]string{"template", goldenRelease, chartDir, "--namespace", goldenNamespace}, bad...)...)
			Expect(err).To(HaveOccurred(), strings.Join(bad, " "))
		}
	})

	// Each of these rendered, and the pod crash-looped: ripple refuses the
	// flags the chart passed. The chart must refuse them first, and say why.
	It("refuses, with the reason, values ripple would refuse at start", func(ctx SpecContext) {
		for _, bad := range []struct {
			values []string
			// flags are what the chart would pass, which ripple refuses.
			flags []string
			want  string
		}{
			{[]string{"--set", "pacing.rolloutTimeout=0s"}, []string{"--rollout-timeout=0s"}, "'/pacing/rolloutTimeout': '0s' does not match"},
			{[]string{"--set", "pacing.rolloutTimeout=0h0.000s"}, []string{"--rollout-timeout=0h0.000s"}, "'/pacing/rolloutTimeout': '0h0.000s' does not match"},
			{[]string{"--set", "pacing.rolloutTimeout=0.1ns"}, []string{"--rollout-timeout=0.1ns"}, "pacing.rolloutTimeout 0.1ns is 0"},
			{[]string{"--set", "pacing.rolloutTimeout=2562048h"}, []string{"--rollout-timeout=2562048h"}, "pacing.rolloutTimeout 2562048h is longer than a Go duration holds"},
			{[]string{"--set", "pausePeriod=25h"}, []string{"--pause-period=25h"}, "pausePeriod 25h is over 24h"},
			{[]string{"--set", "pausePeriod=24h0m0.000000001s"}, []string{"--pause-period=24h0m0.000000001s"}, "pausePeriod 24h0m0.000000001s is over 24h"},
			{[]string{"--set", "pausePeriod=23h60m1s"}, []string{"--pause-period=23h60m1s"}, "pausePeriod 23h60m1s is over 24h"},
			{[]string{"--set", "pacing.minRolloutInterval=1441m"}, []string{"--min-rollout-interval=1441m"}, "pacing.minRolloutInterval 1441m is over 24h"},
			{[]string{"--set", "debounce=2000000h"}, []string{"--debounce=2000000h"}, "debounce 2000000h is over 24h"},
			{[]string{"--set", "workers=1000000000"}, []string{"--workers=1000000000"}, "'/workers': maximum"},
			{[]string{"--set-json", "kubeAPI.qps=1e-30"}, []string{"--kube-api-qps=1e-30"}, "minimum: got 1×10⁻³⁰, want 0.1"},
			{[]string{"--set", "ignoredWorkloadTypes={deployments,statefulsets,daemonsets,cronjobs,jobs}"},
				[]string{"--ignored-workload-types=deployments,statefulsets,daemonsets,cronjobs,jobs"}, "ignoredWorkloadTypes ignores every workload kind"},
			{[]string{"--set", "highAvailability.enabled=true", "--set", "highAvailability.leaderElection.namespace=Kube_System"},
				[]string{"--enable-ha", "--leader-election-namespace=Kube_System"}, "/highAvailability/leaderElection/namespace"},
			{[]string{"--set", "pacing.minRolloutInterval=99999999999999999999h"}, []string{"--min-rollout-interval=99999999999999999999h"}, "pacing.minRolloutInterval 99999999999999999999h is over 24h"},
			{[]string{"--set", "reloadStrategy=refresh"}, []string{"--reload-strategy=refresh"}, "reloadStrategy: refresh needs podRefresh: true"},
			{[]string{"--set", "replicas=2", "--set", "highAvailability.leaderElection.renewDeadline=15s"},
				[]string{"--enable-ha", "--leader-election-renew-deadline=15s"}, "leaseDuration (15s) must exceed renewDeadline (15s)"},
			{[]string{"--set", "highAvailability.enabled=true", "--set", "highAvailability.leaderElection.retryPeriod=0ms"},
				[]string{"--enable-ha", "--leader-election-retry-period=0ms"}, "which must exceed retryPeriod (0ms), above 0"},
		} {
			what := strings.Join(bad.values, " ")
			fs := pflag.NewFlagSet("ripple", pflag.ContinueOnError)
			p := options.NewParser(fs)
			err := fs.Parse(bad.flags)
			if err == nil {
				_, err = p.Options()
			}
			Expect(err).To(HaveOccurred(), "ripple refuses %v", bad.flags)
			_, err = helm.run(ctx, append([]string{"template", goldenRelease, chartDir, "--namespace", goldenNamespace}, bad.values...)...)
			Expect(err).To(MatchError(ContainSubstring(bad.want)), what)
		}
	})

	It("renders the limits of those values, which ripple takes", func() {
		for _, good := range [][]string{
			{"--set", "pacing.rolloutTimeout=1ns", "--set", "pausePeriod=24h", "--set", "pacing.minRolloutInterval=1440m"},
			{"--set", "pacing.rolloutTimeout=0h0.5s", "--set", "pausePeriod=23h59m60s", "--set", "pacing.minRolloutInterval=86400000000000ns"},
			{"--set", "pacing.rolloutTimeout=2562047h", "--set", "pausePeriod=0s", "--set", "pacing.minRolloutInterval=0.5h"},
			{"--set", "debounce=24h", "--set", "workers=1000", "--set-json", "kubeAPI.qps=0.1", "--set", "ignoredWorkloadTypes={deployments,statefulsets,daemonsets,cronjobs}"},
			{"--set", "kubeAPI.qps=-1", "--set", "highAvailability.enabled=true", "--set", "highAvailability.leaderElection.namespace=ripple-system"},
			{"--set", "reloadStrategy=refresh", "--set", "podRefresh=true"},
			{"--set", "replicas=2", "--set", "highAvailability.leaderElection.leaseDuration=3s", "--set", "highAvailability.leaderElection.renewDeadline=2s", "--set", "highAvailability.leaderElection.retryPeriod=1s"},
		} {
			_, objs := render("default", good...)
			parseArgs(expandArgs(deploymentOf(objs).Spec.Template.Spec.Containers[0], goldenNamespace))
		}
	})
})
