package chart

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// promQL's words that are not metric names.
var promKeywords = []string{"and", "or", "unless", "bool", "offset", "by", "without", "on", "ignoring", "group_left", "group_right", "inf", "nan"}

var (
	promStrings  = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	promMatchers = regexp.MustCompile(`\{[^}]*\}`)
	promRanges   = regexp.MustCompile(`\[[^\]]*\]`)
	promGrouping = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	promIdent    = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*`)
	promNumber   = regexp.MustCompile(`\b\d+(?:\.\d+)?(?:e[+-]?\d+)?\b`)
)

// metricNames returns the metric names a PromQL expression reads: its
// identifiers once strings, label matchers, ranges and grouping clauses
// are gone, but for functions (followed by a parenthesis) and keywords.
func metricNames(expr string) []string {
	s := promStrings.ReplaceAllString(expr, `""`)
	s = promMatchers.ReplaceAllString(s, " ")
	s = promRanges.ReplaceAllString(s, " ")
	s = promGrouping.ReplaceAllString(s, " ")
	s = promNumber.ReplaceAllString(s, " ")
	var out []string
	for _, loc := range promIdent.FindAllStringIndex(s, -1) {
		name := s[loc[0]:loc[1]]
		if strings.HasPrefix(strings.TrimSpace(s[loc[1]:]), "(") || slices.Contains(promKeywords, strings.ToLower(name)) {
			continue
		}
		out = append(out, name)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// exported lists the metric names a /metrics page declares, with the
// series names of its histograms and summaries.
func exported(page string) map[string]bool {
	out := map[string]bool{}
	for _, line := range strings.Split(page, "\n") {
		f := strings.Fields(line)
		if len(f) != 4 || f[0] != "#" || f[1] != "TYPE" {
			continue
		}
		out[f[2]] = true
		if f[3] == "histogram" || f[3] == "summary" {
			for _, s := range []string{"_bucket", "_sum", "_count"} {
				out[f[2]+s] = true
			}
		}
	}
	return out
}

// alertNames lists the alerts of the chart's PrometheusRule.
func alertNames(objs objects) []string {
	GinkgoHelper()
	rules := objs.ofKind("PrometheusRule")
	Expect(rules).To(HaveLen(1))
	var out []string
	groups, _, _ := unstructured.NestedSlice(rules[0].Object, "spec", "groups")
	for _, g := range groups {
		rs, _, _ := unstructured.NestedSlice(g.(map[string]any), "rules")
		for _, r := range rs {
			out = append(out, r.(map[string]any)["alert"].(string))
		}
	}
	return out
}

// dashboardOf finds the dashboard's ConfigMap, or nil.
func dashboardOf(objs objects) *unstructured.Unstructured {
	for _, cm := range objs.ofKind("ConfigMap") {
		if strings.HasSuffix(cm.GetName(), "-dashboard") {
			return cm
		}
	}
	return nil
}

// queries are the PromQL expressions of the dashboard's panels and the
// rules' alerts, and the metric its job variable is read from.
func queries(objs objects) (exprs []string, variableMetric string) {
	GinkgoHelper()
	cm := dashboardOf(objs)
	Expect(cm).NotTo(BeNil(), "the dashboard's ConfigMap")
	raw, _, _ := unstructured.NestedString(cm.Object, "data", "ripple.json")
	var dash struct {
		Panels []struct {
			Targets []struct{ Expr string }
		}
		Templating struct {
			List []struct{ Name, Query string }
		}
	}
	Expect(json.Unmarshal([]byte(raw), &dash)).To(Succeed())
	for _, p := range dash.Panels {
		for _, t := range p.Targets {
			exprs = append(exprs, t.Expr)
		}
	}
	for _, v := range dash.Templating.List {
		if m := regexp.MustCompile(`^label_values\((\w+),`).FindStringSubmatch(v.Query); m != nil {
			variableMetric = m[1]
		}
	}
	rules := objs.ofKind("PrometheusRule")
	Expect(rules).To(HaveLen(1))
	groups, _, _ := unstructured.NestedSlice(rules[0].Object, "spec", "groups")
	for _, g := range groups {
		rs, _, _ := unstructured.NestedSlice(g.(map[string]any), "rules")
		for _, r := range rs {
			exprs = append(exprs, r.(map[string]any)["expr"].(string))
		}
	}
	return exprs, variableMetric
}

var _ = DescribeTable("metricNames reads the metrics of a PromQL expression",
	func(expr string, want []string) { Expect(metricNames(expr)).To(Equal(want)) },
	Entry("a rate by label", `sum by (kind, result) (rate(ripple_reloads_total{job=~"$job"}[5m]))`, []string{"ripple_reloads_total"}),
	Entry("a quantile", `histogram_quantile(0.99, sum by (le) (rate(x_bucket{a="b"}[5m])))`, []string{"x_bucket"}),
	Entry("a comparison and absent", `absent(up{job="j", namespace="n"} == 1) or a > 0.5e3`, []string{"a", "up"}),
	Entry("no metric", `vector(1)`, []string(nil)),
)

var _ = Describe("The chart's dashboard and alert rules", Label("install"), Ordered, func() {
	It("are off by default", func() {
		_, objs := render("default")
		Expect(objs.ofKind("PrometheusRule")).To(BeEmpty())
		Expect(dashboardOf(objs)).To(BeNil())
	})

	It("render for Grafana's sidecar and the Prometheus Operator, with a leader alert only with highAvailability", func() {
		_, objs := render("default", "--set", "dashboard.enabled=true", "--set", "prometheusRule.enabled=true")
		Expect(dashboardOf(objs).GetLabels()).To(HaveKeyWithValue("grafana_dashboard", "1"))
		Expect(alertNames(objs)).To(ConsistOf("RippleReloadFailures", "RippleWorkloadNotRolling", "RippleReconcileErrors", "RippleDown"),
			"no leader alert for one replica without leader election")
		_, objs = render("ha", "--set", "dashboard.enabled=true", "--set", "prometheusRule.enabled=true")
		Expect(alertNames(objs)).To(ContainElement("RippleLeaderMissing"))
	})

	It("query only metrics ripple exports", func(ctx SpecContext) {
		_, objs := render("ha", "--set", "dashboard.enabled=true", "--set", "prometheusRule.enabled=true")
		exprs, variableMetric := queries(objs)
		var names []string
		for _, e := range exprs {
			names = append(names, metricNames(e)...)
		}
		names = append(names, variableMetric)
		Expect(names).To(ContainElements("ripple_reloads_total", "ripple_reload_latency_seconds_bucket", "leader_election_master_status"))

		createNamespaces(ctx, "apps-monitoring")
		inst := installChart(ctx, "ripple-mon", "ripple-mon", "ha")
		sa := serviceAccount(ctx, inst.namespace, inst.sa)
		l, err := net.Listen("tcp", "127.0.0.1:0")
		Expect(err).NotTo(HaveOccurred())
		addr := l.Addr().String()
		Expect(l.Close()).To(Succeed())
		startRipple(sa.config, inst.args, "--metrics-bind-address="+addr)
		// One rollout, so that every counter of a rollout has a series.
		newApp(ctx, "apps-monitoring", "web").expectRolls(ctx)

		resp, err := http.Get("http://" + addr + "/metrics")
		Expect(err).NotTo(HaveOccurred())
		defer func() { _ = resp.Body.Close() }()
		page, err := io.ReadAll(resp.Body)
		Expect(err).NotTo(HaveOccurred())
		have := exported(string(page))
		for _, n := range names {
			// up is Prometheus's own, of every scrape target.
			if n != "up" {
				Expect(have).To(HaveKey(n), "%s is queried but ripple does not export it", n)
			}
		}
	})
})
