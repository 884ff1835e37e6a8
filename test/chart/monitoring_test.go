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
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
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
	// A number or a duration: 0.5e3, 5m, 1h30m.
	promNumber = regexp.MustCompile(`\b\d[0-9a-zA-Z_.]*(?:[eE][+-]\d+)?`)
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

// promSelector is a metric name with its label matchers, once strings
// are emptied; promMatcherLabel a label name in them.
var (
	promSelector     = regexp.MustCompile(`([a-zA-Z_:][a-zA-Z0-9_:]*)\s*\{([^}]*)\}`)
	promMatcherLabel = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)`)
	promGroupLabels  = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)`)
	// A label a legend ({{kind}}) or an alert's text ({{ $labels.kind }}) shows.
	templateLabel = regexp.MustCompile(`\{\{\s*(?:\$labels\.)?([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}`)
)

// labelsOf returns the labels a PromQL expression's selectors match, by
// metric, and those its grouping clauses name.
func labelsOf(expr string) (matched map[string][]string, grouped []string) {
	s := promStrings.ReplaceAllString(expr, `""`)
	matched = map[string][]string{}
	for _, m := range promSelector.FindAllStringSubmatch(s, -1) {
		for _, l := range promMatcherLabel.FindAllStringSubmatch(m[2], -1) {
			matched[m[1]] = append(matched[m[1]], l[1])
		}
	}
	for _, m := range promGroupLabels.FindAllStringSubmatch(s, -1) {
		for _, l := range strings.Split(m[1], ",") {
			if l = strings.TrimSpace(l); l != "" {
				grouped = append(grouped, l)
			}
		}
	}
	return matched, grouped
}

// shownLabels are the labels a legend or an alert's text shows.
func shownLabels(text string) []string {
	var out []string
	for _, m := range templateLabel.FindAllStringSubmatch(text, -1) {
		out = append(out, m[1])
	}
	return out
}

// exported parses a /metrics page into the label names of each series
// name, with those of histograms' and summaries' own series.
func exported(page string) map[string][]string {
	GinkgoHelper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(strings.NewReader(page))
	Expect(err).NotTo(HaveOccurred())
	out := map[string][]string{}
	add := func(name string, labels []string) {
		for _, l := range labels {
			if !slices.Contains(out[name], l) {
				out[name] = append(out[name], l)
			}
		}
		if out[name] == nil {
			out[name] = []string{}
		}
	}
	for name, f := range families {
		for _, m := range f.GetMetric() {
			var labels []string
			for _, lp := range m.GetLabel() {
				labels = append(labels, lp.GetName())
			}
			switch f.GetType() {
			case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
				add(name+"_bucket", append(slices.Clone(labels), "le"))
				add(name+"_sum", labels)
				add(name+"_count", labels)
			case dto.MetricType_SUMMARY:
				add(name, append(slices.Clone(labels), "quantile"))
				add(name+"_sum", labels)
				add(name+"_count", labels)
			default:
				add(name, labels)
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

// query is a PromQL expression of the dashboard or the rules, with the
// text that shows its labels: a panel's legend, an alert's annotations.
type query struct{ expr, shows string }

// queries are the dashboard's panels' and the rules' alerts' queries, and
// the metric the dashboard's job variable is read from.
func queries(objs objects) (qs []query, variableMetric string) {
	GinkgoHelper()
	cm := dashboardOf(objs)
	Expect(cm).NotTo(BeNil(), "the dashboard's ConfigMap")
	raw, _, _ := unstructured.NestedString(cm.Object, "data", "ripple.json")
	var dash struct {
		Panels []struct {
			Targets []struct{ Expr, LegendFormat string }
		}
		Templating struct {
			List []struct{ Name, Query string }
		}
	}
	Expect(json.Unmarshal([]byte(raw), &dash)).To(Succeed())
	for _, p := range dash.Panels {
		for _, t := range p.Targets {
			qs = append(qs, query{t.Expr, t.LegendFormat})
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
			rule := r.(map[string]any)
			text, _ := json.Marshal(rule["annotations"])
			qs = append(qs, query{rule["expr"].(string), string(text)})
		}
	}
	return qs, variableMetric
}

// up is Prometheus's own series of every scrape target, and these are the
// labels Prometheus gives every series it scrapes through the chart's
// ServiceMonitor: none of them is ripple's to export.
var (
	prometheusMetrics = []string{"up"}
	targetLabels      = []string{"job", "namespace", "service", "pod", "container", "endpoint", "instance"}
)

// unexported lists what a query reads that the page does not export: a
// metric, or a label of one.
func unexported(q query, have map[string][]string) []string {
	var missing []string
	metrics := slices.DeleteFunc(metricNames(q.expr), func(n string) bool { return slices.Contains(prometheusMetrics, n) })
	hasLabel := func(metric, label string) bool {
		return slices.Contains(targetLabels, label) || slices.Contains(have[metric], label)
	}
	matched, grouped := labelsOf(q.expr)
	for _, n := range metrics {
		if _, ok := have[n]; !ok {
			missing = append(missing, "metric "+n)
			continue
		}
		for _, l := range matched[n] {
			if !hasLabel(n, l) {
				missing = append(missing, "label "+l+" of "+n)
			}
		}
		// Grouping and shown labels come from every metric read here: the
		// queries read one each.
		for _, l := range append(grouped, shownLabels(q.shows)...) {
			if !hasLabel(n, l) {
				missing = append(missing, "label "+l+" of "+n)
			}
		}
	}
	return missing
}

var _ = DescribeTable("metricNames reads the metrics of a PromQL expression",
	func(expr string, want []string) { Expect(metricNames(expr)).To(Equal(want)) },
	Entry("a rate by label", `sum by (kind, result) (rate(ripple_reloads_total{job=~"$job"}[5m]))`, []string{"ripple_reloads_total"}),
	Entry("a quantile", `histogram_quantile(0.99, sum by (le) (rate(x_bucket{a="b"}[5m])))`, []string{"x_bucket"}),
	Entry("a comparison and absent", `absent(up{job="j", namespace="n"} == 1) or a > 0.5e3`, []string{"a", "up"}),
	Entry("a label value like a metric", `sum without (pod) (m{name="rate(x)", a!~"b"}) unless on (a) n offset 1h30m > 1e-3`, []string{"m", "n"}),
	Entry("no metric", `vector(1)`, []string(nil)),
)

var _ = DescribeTable("labelsOf reads the labels a PromQL expression matches and groups by",
	func(expr string, matched map[string][]string, grouped []string) {
		m, g := labelsOf(expr)
		Expect(m).To(Equal(matched))
		Expect(g).To(Equal(grouped))
	},
	Entry("matchers and by", `sum by (kind, result) (rate(ripple_reloads_total{job=~"$job", result="error"}[5m]))`,
		map[string][]string{"ripple_reloads_total": {"job", "result"}}, []string{"kind", "result"}),
	Entry("a matcher value with braces and operators", `m{a="x{b=c}", d!="e"}`, map[string][]string{"m": {"a", "d"}}, []string(nil)),
	Entry("without, on and group_left", `a without (x) * on (y) group_left (z) b`, map[string][]string{}, []string{"x", "y", "z"}),
)

var _ = DescribeTable("shownLabels reads the labels a legend or an alert's text shows",
	func(text string, want []string) { Expect(shownLabels(text)).To(Equal(want)) },
	Entry("a legend", "{{kind}} {{ result }}", []string{"kind", "result"}),
	Entry("an alert's summary", "ripple failed to roll {{ $labels.kind }} workloads", []string{"kind"}),
	Entry("none", "p99", []string(nil)),
)

var _ = Describe("The chart's dashboard and alert rules", Label("install"), Ordered, func() {
	It("are off by default", func() {
		_, objs := render("default")
		Expect(objs.ofKind("PrometheusRule")).To(BeEmpty())
		Expect(dashboardOf(objs)).To(BeNil())
	})

	It("render for Grafana's sidecar and the Prometheus Operator, with a leader alert only with highAvailability", func() {
		_, objs := render("default", "--set", "dashboard.enabled=true", "--set", "prometheusRule.enabled=true", "--set", "serviceMonitor.enabled=true")
		Expect(dashboardOf(objs).GetLabels()).To(HaveKeyWithValue("grafana_dashboard", "1"))
		Expect(alertNames(objs)).To(ConsistOf("RippleReloadFailures", "RippleWorkloadNotRolling", "RippleReconcileErrors", "RippleDown"),
			"no leader alert for one replica without leader election")
		// Scraped another way, under the job the user names.
		out, _ := render("default", "--set", "prometheusRule.enabled=true", "--set", "prometheusRule.job=kubernetes-pods")
		Expect(out).To(ContainSubstring(`up{job="kubernetes-pods"`))
		_, objs = render("monitoring", "--set", "dashboard.label=dashboards", "--set", "dashboard.labelValue=ripple")
		Expect(dashboardOf(objs).GetLabels()).To(HaveKeyWithValue("dashboards", "ripple"))
		Expect(alertNames(objs)).To(ContainElement("RippleLeaderMissing"))
	})

	It("query only metrics, and labels of them, that ripple exports", func(ctx SpecContext) {
		_, objs := render("monitoring")
		qs, variableMetric := queries(objs)
		qs = append(qs, query{expr: variableMetric})
		var names []string
		for _, q := range qs {
			names = append(names, metricNames(q.expr)...)
		}
		Expect(names).To(ContainElements("ripple_reloads_total", "ripple_reload_latency_seconds_bucket", "leader_election_master_status",
			"controller_runtime_reconcile_errors_total", "workqueue_depth", "ripple_alerts_failed_total", "process_resident_memory_bytes",
			"ripple_workloads_tracked"))

		createNamespaces(ctx, "apps-monitoring")
		// The monitoring case's ripple, without the Prometheus Operator's
		// objects, whose CRDs the control plane does not serve.
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
		for _, q := range qs {
			Expect(unexported(q, have)).To(BeEmpty(), "ripple does not export what %q reads", q.expr)
		}
	})
})
