package integration

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ripple-controller/ripple/internal/annotations"
)

var _ = Describe("Reloader's flags", func() {
	It("rolls only in the namespaces given by --namespaces", func() {
		watched, other := newNamespace(nil), newNamespace(nil)
		cmIn := createConfigMap(watched, "cfg", map[string]string{"k": "1"})
		cmOut := createConfigMap(other, "cfg", map[string]string{"k": "1"})
		in := createDeployment(watched, "dep", auto, volumeConfigMap("cfg"))
		out := createDeployment(other, "dep", auto, volumeConfigMap("cfg"))
		startRipple("--namespaces=" + watched)
		before := recorded(in)
		outside := withRollouts(out, stateOf(out))

		setData(cmIn, "k", "2")
		setData(cmOut, "k", "2")

		expectRolledOnce(in, before)
		expectNoWrite(out, outside)
	})

	It("never writes to workloads in --namespaces-to-ignore", func() {
		ignored, kept := newNamespace(nil), newNamespace(nil)
		cmIgnored := createConfigMap(ignored, "cfg", map[string]string{"k": "1"})
		cmKept := createConfigMap(kept, "cfg", map[string]string{"k": "1"})
		inIgnored := createDeployment(ignored, "dep", auto, volumeConfigMap("cfg"))
		inKept := createDeployment(kept, "dep", auto, volumeConfigMap("cfg"))
		startRipple("--namespaces-to-ignore=kube-system, " + ignored)
		before := recorded(inKept)
		untouched := withRollouts(inIgnored, stateOf(inIgnored))

		setData(cmIgnored, "k", "2")
		setData(cmKept, "k", "2")

		expectRolledOnce(inKept, before)
		expectNoWrite(inIgnored, untouched)
	})

	DescribeTable("rolls only in namespaces that match --namespace-selector",
		func(selector string, matching, notMatching map[string]string) {
			yes, no := newNamespace(matching), newNamespace(notMatching)
			cmYes := createConfigMap(yes, "cfg", map[string]string{"k": "1"})
			cmNo := createConfigMap(no, "cfg", map[string]string{"k": "1"})
			inYes := createDeployment(yes, "dep", auto, volumeConfigMap("cfg"))
			inNo := createDeployment(no, "dep", auto, volumeConfigMap("cfg"))
			startRipple("--namespace-selector=" + selector)
			before := recorded(inYes)
			untouched := withRollouts(inNo, stateOf(inNo))

			setData(cmYes, "k", "2")
			setData(cmNo, "k", "2")

			expectRolledOnce(inYes, before)
			expectNoWrite(inNo, untouched)
		},
		Entry("k=v", "ripple-team=a", map[string]string{"ripple-team": "a"}, map[string]string{"ripple-team": "b"}),
		Entry("legacy k:v", "ripple-team:a", map[string]string{"ripple-team": "a"}, map[string]string{"ripple-team": "b"}),
		Entry("k=* for exists", "ripple-reload=*", map[string]string{"ripple-reload": "whatever"}, nil),
	)

	It("watches only ConfigMaps and Secrets matching --resource-label-selector", func() {
		ns := newNamespace(nil)
		labelled := createConfigMap(ns, "labelled", map[string]string{"k": "1"})
		update(labelled, func(c *corev1.ConfigMap) { c.Labels = map[string]string{"reload": "yes"} })
		plain := createConfigMap(ns, "plain", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("labelled"), volumeConfigMap("plain"))
		startRipple("--resource-label-selector=reload=yes")
		before := recorded(dep)

		setData(plain, "k", "2")
		expectNoRollout(dep, before)

		setData(labelled, "k", "2")
		expectRolledOnce(dep, before)
	})

	DescribeTable("ignores one kind of config object with --resources-to-ignore",
		func(value string, secretRolls, configMapRolls bool) {
			ns := newNamespace(nil)
			cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
			sec := createSecret(ns, "creds", map[string]string{"k": "1"})
			dep := createDeployment(ns, "dep", auto, volumeConfigMap("cfg"), envFromSecret("creds"))
			startRipple("--resources-to-ignore=" + value)
			before := recorded(dep)

			setSecretData(sec, "k", "2")
			if secretRolls {
				before = expectRolledOnce(dep, before)
			} else {
				expectNoRollout(dep, before)
			}
			setData(cm, "k", "2")
			if configMapRolls {
				expectRolledOnce(dep, before)
			} else {
				expectNoRollout(dep, before)
			}
		},
		Entry("secrets", "secrets", false, true),
		Entry("configMaps", "configMaps", true, false),
	)

	It("rolls a workload for its ConfigMap when its Secret reload pattern names the kind --resources-to-ignore ignores", func() {
		ns := newNamespace(nil)
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		createSecret(ns, "creds-a", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", map[string]string{annotations.ConfigMapReload: "cfg", annotations.SecretReload: "creds-.*"}, volumeConfigMap("cfg"))
		startRipple("--resources-to-ignore=secrets")
		before := recorded(dep)

		setData(cm, "k", "2")
		expectRolledOnce(dep, before)
	})

	It("never touches the workload kinds in --ignored-workload-types", func() {
		ns := newNamespace(nil)
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("cfg"))
		sts := createStatefulSet(ns, "sts", auto, volumeConfigMap("cfg"))
		startRipple("--ignored-workload-types=statefulsets,jobs")
		before := recorded(dep)
		stsBefore := withRollouts(sts, stateOf(sts))

		setData(cm, "k", "2")

		expectRolledOnce(dep, before)
		expectNoWrite(sts, stsBefore)
	})

	It("treats every workload as auto with --auto-reload-all, except those saying \"false\"", func() {
		ns := newNamespace(nil)
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		plain := createDeployment(ns, "plain", nil, volumeConfigMap("cfg"))
		optedOut := createDeployment(ns, "opted-out", map[string]string{annotations.Auto: "false"}, volumeConfigMap("cfg"))
		startRipple("--auto-reload-all")
		before := recorded(plain)
		optedOutBefore := withRollouts(optedOut, stateOf(optedOut))

		setData(cm, "k", "2")

		expectRolledOnce(plain, before)
		expectNoWrite(optedOut, optedOutBefore)
	})

	DescribeTable("honours renamed annotations and ignores Reloader's names then",
		func(flag string, workloadAnn, cmAnn map[string]string, reference, replacesAuto bool) {
			ns := newNamespace(nil)
			cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"}, cmAnn)
			var mods []podMod
			if reference {
				mods = append(mods, volumeConfigMap("cfg"))
			}
			renamed := createDeployment(ns, "renamed", workloadAnn, mods...)
			reloaders := createDeployment(ns, "reloaders", auto, volumeConfigMap("cfg"))
			startRipple(strings.Fields(flag)...)
			before := recorded(renamed)

			setData(cm, "k", "2")

			expectRolledOnce(renamed, before)
			if replacesAuto {
				Expect(stateOf(reloaders).Recorded).To(BeEmpty(), "Reloader's auto annotation no longer opts in")
			}
		},
		Entry("--auto-annotation", "--auto-annotation=example.com/auto", map[string]string{"example.com/auto": "true"}, nil, true, true),
		Entry("--configmap-auto-annotation", "--configmap-auto-annotation=example.com/cm-auto", map[string]string{"example.com/cm-auto": "true"}, nil, true, false),
		Entry("--auto-search-annotation and --search-match-annotation", "--auto-search-annotation=example.com/search --search-match-annotation=example.com/match",
			map[string]string{"example.com/search": "true"}, map[string]string{"example.com/match": "true"}, true, false),
		Entry("--configmap-annotation", "--configmap-annotation=example.com/reload", map[string]string{"example.com/reload": "cfg"}, nil, false, false),
	)

	It("honours a renamed --secret-auto-annotation and --secret-annotation", func() {
		ns := newNamespace(nil)
		sec := createSecret(ns, "creds", map[string]string{"k": "1"})
		byAuto := createDeployment(ns, "by-auto", map[string]string{"example.com/secret-auto": "true"}, envFromSecret("creds"))
		byList := createDeployment(ns, "by-list", map[string]string{"example.com/secret-reload": "creds"})
		startRipple("--secret-auto-annotation=example.com/secret-auto", "--secret-annotation=example.com/secret-reload")
		autoBefore, listBefore := recorded(byAuto), recorded(byList)

		setSecretData(sec, "k", "2")

		expectRolledOnce(byAuto, autoBefore)
		expectRolledOnce(byList, listBefore)
	})

	It("honours a renamed --ignore-annotation", func() {
		ns := newNamespace(nil)
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"}, map[string]string{"example.com/ignore": "true"})
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("cfg"))
		startRipple("--ignore-annotation=example.com/ignore")
		before := recorded(dep)

		setData(cm, "k", "2")

		expectNoRollout(dep, before)
	})

	It("reconciles each kind on as many workers as --workers gives, as its metrics show", func() {
		ns := newNamespace(nil)
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("cfg"))
		metricsAddr := freeAddress()
		startRipple("--workers=1", "--metrics-bind-address="+metricsAddr)
		before := recorded(dep)

		setData(cm, "k", "2")

		expectRolledOnce(dep, before)
		Eventually(httpGet("http://"+metricsAddr+"/metrics"), "10s").Should(SatisfyAll(
			MatchRegexp(`controller_runtime_max_concurrent_reconciles\{controller="deployments"\} 1\n`),
			MatchRegexp(`controller_runtime_max_concurrent_reconciles\{controller="statefulsets"\} 1\n`),
		))
	})

	It("writes debug lines as text under --log-format=text --log-level=debug", func() {
		ns := newNamespace(nil)
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("cfg"))
		ripple := startRipple("--log-format=text", "--log-level=debug")
		recorded(dep)
		Eventually(ripple.logs).Should(gbytes.Say(`(?m)^\S+\tDEBUG\t.*Recording the config of a workload seen for the first time`),
			"a debug line, as text: time, level and message separated by tabs")
	})

	It("takes a Lease and rolls as leader with --enable-ha", func() {
		ns := newNamespace(nil)
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("cfg"))
		startRipple("--enable-ha", "--leader-election-namespace="+ns, "--leader-election-id=ripple-it",
			"--leader-election-lease-duration=4s", "--leader-election-renew-deadline=3s", "--leader-election-retry-period=500ms")
		before := recorded(dep)
		lease := &coordinationv1.Lease{}
		Expect(k8s.Get(suiteCtx, client.ObjectKey{Namespace: ns, Name: "ripple-it"}, lease)).To(Succeed())
		Expect(lease.Spec.HolderIdentity).NotTo(BeNil())

		setData(cm, "k", "2")

		expectRolledOnce(dep, before)
	})

	It("serves metrics, /healthz and /readyz on the addresses given", func() {
		ns := newNamespace(nil)
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("cfg"))
		metricsAddr, probeAddr := freeAddress(), freeAddress()
		startRipple("--metrics-bind-address="+metricsAddr, "--health-probe-bind-address="+probeAddr)
		Eventually(httpGet("http://"+probeAddr+"/healthz"), "20s").Should(HavePrefix("200"))
		Eventually(httpGet("http://"+probeAddr+"/readyz"), "20s").Should(HavePrefix("200"))
		before := recorded(dep)

		setData(cm, "k", "2")
		expectRolledOnce(dep, before)

		Eventually(httpGet("http://"+metricsAddr+"/metrics"), "10s").Should(SatisfyAll(
			MatchRegexp(`ripple_reloads_total\{kind="Deployment",result="success"\} [1-9]`),
			MatchRegexp(`ripple_reload_latency_seconds_count\{kind="Deployment"\} [1-9]`),
			MatchRegexp(`ripple_skips_total\{reason="first-sight"\} [1-9]`),
		))
	})
})

func freeAddress() string {
	GinkgoHelper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	defer func() { _ = l.Close() }()
	return l.Addr().String()
}

// httpGet returns "<status code> <body>" of a GET, or the error.
func httpGet(url string) func() string {
	return func() string {
		c := http.Client{Timeout: 2 * time.Second}
		resp, err := c.Get(url)
		if err != nil {
			return err.Error()
		}
		defer func() { _ = resp.Body.Close() }()
		body, _ := io.ReadAll(resp.Body)
		return fmt.Sprintf("%d %s", resp.StatusCode, body)
	}
}

var _ = Describe("A namespace relabelled to match --namespace-selector", func() {
	It("converges its workloads at once: a change made while it did not match rolls them", func() {
		ns := newNamespace(map[string]string{"ripple-team": "b"})
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("cfg"))
		first := startRipple()
		before := recorded(dep)
		first.stop()
		startRipple("--namespace-selector=ripple-team=a")
		setData(cm, "k", "2")
		expectNoRollout(dep, before)

		update(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, func(n *corev1.Namespace) {
			n.Labels["ripple-team"] = "a"
		})

		expectRolledOnce(dep, before)
	})
})
