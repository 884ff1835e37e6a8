package bench

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// Row is one line of the results table.
type Row struct {
	Scenario, Measure   string
	Ripple, Floor, Rate string
	Target              string
	// Pass is nil for a row that only informs.
	Pass *bool
}

// Report is the outcome of one bench run.
type Report struct {
	Command  string
	Machine  string
	Started  time.Time
	Duration time.Duration
	Rows     []Row
	Notes    []string
}

func (r *Report) add(row Row) { r.Rows = append(r.Rows, row) }

func (r *Report) note(format string, args ...any) {
	r.Notes = append(r.Notes, fmt.Sprintf(format, args...))
}

// Failed lists the rows that failed.
func (r *Report) Failed() []Row {
	var out []Row
	for _, row := range r.Rows {
		if row.Pass != nil && !*row.Pass {
			out = append(out, row)
		}
	}
	return out
}

func verdict(p *bool) string {
	switch {
	case p == nil:
		return "info"
	case *p:
		return "PASS"
	default:
		return "FAIL"
	}
}

// Text renders the table for a terminal.
func (r *Report) Text() string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "scenario\tmeasure\tripple\tfloor\tratio\ttarget\tresult")
	for _, row := range r.Rows {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", row.Scenario, row.Measure, dash(row.Ripple), dash(row.Floor), dash(row.Rate), dash(row.Target), verdict(row.Pass))
	}
	_ = w.Flush()
	return b.String()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Markdown renders the report as a Markdown document.
func (r *Report) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# ripple performance\n\n")
	fmt.Fprintf(&b, "Command: `%s`.\n\nMachine: %s. Started %s, took %s.\n\n", r.Command, r.Machine, r.Started.UTC().Format(time.RFC3339), r.Duration.Round(time.Second))
	b.WriteString(method)
	fmt.Fprintln(&b, "| scenario | measure | ripple | floor | ratio | target | result |")
	fmt.Fprintln(&b, "|---|---|---|---|---|---|---|")
	for _, row := range r.Rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", row.Scenario, row.Measure, dash(row.Ripple), dash(row.Floor), dash(row.Rate), dash(row.Target), verdict(row.Pass))
	}
	if len(r.Notes) > 0 {
		fmt.Fprintln(&b, "\nNotes:")
		for _, n := range r.Notes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
	}
	return b.String()
}

// Machine describes the machine the bench runs on.
func Machine() string {
	model := "unknown CPU"
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	mem := ""
	if data, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && k == "MemTotal" {
				kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
				mem = fmt.Sprintf(", %.0f GiB RAM", float64(kb)/(1<<20))
			}
		}
	}
	return fmt.Sprintf("%s/%s, %d CPUs (%s)%s, %s, load average %s", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), model, mem, runtime.Version(), LoadAverage())
}

// LoadAverage is the 1, 5 and 15 minute load average.
func LoadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func ms(d time.Duration) string {
	return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
}

func mib(b int64) string { return fmt.Sprintf("%.1fMiB", float64(b)/(1<<20)) }

func ratio(a, b time.Duration) float64 {
	if b <= 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// rate writes a ratio checked against limit to two decimals, or to as many
// more as it takes for the figure to fall on the same side of limit as the
// ratio: 1.2012 against 1.2 is "1.201x", where "1.20x" would read as a pass.
func rate(rt, limit float64) string {
	for prec := 2; prec < 6; prec++ {
		s := strconv.FormatFloat(rt, 'f', prec, 64)
		if shown, err := strconv.ParseFloat(s, 64); err == nil && (shown <= limit) == (rt <= limit) {
			return s + "x"
		}
	}
	return strconv.FormatFloat(rt, 'f', 6, 64) + "x"
}

func pass(b bool) *bool { return &b }

const method = `How: test/bench starts etcd and kube-apiserver (envtest, the binaries of ` + "`make tools`" + `;
priority and fairness off, no in-flight limits, etcd without fsync, an audit log of ripple's user only, which the floor
authenticates as too), creates
W Deployments (replicas 0, ` + "`reloader.stakater.com/auto: \"true\"`" + `, Deployment i mounting ConfigMap i mod C) and C
ConfigMaps in a fresh namespace, and starts the built bin/ripple as its own process with default flags (plus
--kubeconfig, metrics and probe addresses; --debounce=0 where the row says so). Once /readyz answers, every
Deployment carries ripple's record and ripple is idle, it edits one ConfigMap at a time and times, through a watch
of the Deployments, the edit until the first and the last Deployment using it is rolled (its pod template's digest
annotation changed). The floor, measured in the same run on the same objects with ripple stopped, is a minimal
in-process watcher that patches the Deployments known to use the edited ConfigMap from a precomputed map, with one
merge patch of the same shape, no client-side rate limit and 16 parallel patches (ripple's default --workers), as ripple's user, whose every
request costs the API server the same audit write as ripple's: the API server's own limit, which ripple, also without a client-side limit by default (--kube-api-qps=-1), can approach but not beat.
The floor makes the same edits twice, before ripple's phase and after it, and the rows pool the two, so that a
drift of the API server over the run (ripple's phase follows its start, a write to every workload) counts on both sides.
Timing targets are ratios to the floor, so a busy machine slows both alike.
API load is counted by kube-apiserver's audit log (ripple's user only), by apiserver_request_total and by
ripple's rest_client_requests_total; CPU and memory come from /proc/<pid>/stat and /proc/<pid>/status.
For (e), the floor runs the edits of (b) once more, writing after each patch an Event like ripple's
` + "`Reloaded`" + ` one, as Reloader writes: the two requests per rollout a drop-in replacement makes.

`
