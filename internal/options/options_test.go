package options

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/ripple-controller/ripple/internal/annotations"
	"github.com/ripple-controller/ripple/internal/workload"
)

// parse binds ripple's flags to a fresh flag set, parses args and validates,
// in an empty environment.
func parse(t *testing.T, args ...string) (Options, error) {
	t.Helper()
	return parseEnv(t, nil, args...)
}

// parseEnv is parse with env as ripple's environment.
func parseEnv(t *testing.T, env map[string]string, args ...string) (Options, error) {
	t.Helper()
	fs := pflag.NewFlagSet("ripple", pflag.ContinueOnError)
	p := NewParser(fs)
	p.getenv = func(k string) string { return env[k] }
	if err := fs.Parse(args); err != nil {
		t.Fatalf("flag parsing of %v failed: %v", args, err)
	}
	return p.Options()
}

func mustParse(t *testing.T, args ...string) Options {
	t.Helper()
	o, err := parse(t, args...)
	if err != nil {
		t.Fatalf("Options(%v) = %v", args, err)
	}
	return o
}

func TestDefaults(t *testing.T) {
	o := mustParse(t)
	checks := []struct {
		what      string
		got, want any
	}{
		{"kubeconfig", o.Kubeconfig, ""},
		{"namespaces", o.Namespaces, []string(nil)},
		{"flags dropped", o.Dropped, []string(nil)},
		{"namespaces-to-ignore", o.NamespacesToIgnore, []string(nil)},
		{"namespace-selector", o.NamespaceSelector, labels.Selector(nil)},
		{"resource-label-selector", o.ResourceSelector, labels.Selector(nil)},
		{"resources-to-ignore configmaps", o.IgnoreConfigMaps, false},
		{"resources-to-ignore secrets", o.IgnoreSecrets, false},
		{"ignored-workload-types", len(o.IgnoredWorkloads), 0},
		{"auto-reload-all", o.AutoReloadAll, false},
		{"key-precision", o.KeyPrecision, false},
		{"max-rollouts-in-progress", o.MaxRolloutsInProgress, 0},
		{"rollout-timeout", o.RolloutTimeout, 5 * time.Minute},
		{"min-rollout-interval", o.MinRolloutInterval, time.Duration(0)},
		{"reload-on-create", o.ReloadOnCreate, false},
		{"reload-on-delete", o.ReloadOnDelete, false},
		{"enable-csi-integration", o.EnableCSIIntegration, false},
		{"annotation names", o.Keys, annotations.DefaultKeys()},
		{"log-format", o.LogFormat, "json"},
		{"log-level", o.LogLevel, "info"},
		{"enable-ha", o.EnableHA, false},
		{"leader-election-id", o.LeaderElectionID, "ripple-leader"},
		{"leader-election-namespace", o.LeaderElectionNamespace, ""},
		{"leader-election-lease-duration", o.LeaseDuration, 15 * time.Second},
		{"leader-election-renew-deadline", o.RenewDeadline, 10 * time.Second},
		{"leader-election-retry-period", o.RetryPeriod, 2 * time.Second},
		{"metrics-bind-address", o.MetricsAddr, ":9090"},
		{"health-probe-bind-address", o.ProbeAddr, ":8081"},
		{"kube-api-qps", o.QPS, float32(-1)},
		{"kube-api-burst", o.Burst, 200},
		{"debounce", o.Debounce, time.Second},
		{"workers", o.Workers, 16},
		{"hmac-key-secret", o.HMACKeySecret, "ripple-digest-key"},
		{"verbosity", o.Verbosity(), 0},
	}
	for _, c := range checks {
		switch want := c.want.(type) {
		case []string:
			if !slices.Equal(c.got.([]string), want) {
				t.Errorf("%s = %v, want %v", c.what, c.got, want)
			}
		default:
			if c.got != c.want {
				t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
			}
		}
	}
	if got := len(o.Workloads()); got != 5 {
		t.Errorf("Workloads() has %d kinds by default, want 5: Rollouts only with --is-Argo-Rollouts", got)
	}
	if got := o.StrategyOf(cronJobs(t)); got != "job" {
		t.Errorf("CronJob strategy = %q by default, want job", got)
	}
}

func TestEveryFlagIsBound(t *testing.T) {
	fs := pflag.NewFlagSet("ripple", pflag.ContinueOnError)
	NewParser(fs)
	for _, name := range []string{
		"kubeconfig", "namespaces", "namespaces-to-ignore", "namespace-selector", "resource-label-selector",
		"resources-to-ignore", "ignored-workload-types", "cronjob-strategy", "auto-reload-all", "reload-on-create", "reload-on-delete",
		"enable-csi-integration", "auto-annotation", "configmap-auto-annotation", "secret-auto-annotation", "auto-search-annotation",
		"search-match-annotation", "configmap-annotation", "secret-annotation", "ignore-annotation",
		"configmap-exclude-annotation", "secret-exclude-annotation", "log-format", "log-level", "enable-ha", "leader-election-id", "leader-election-namespace",
		"leader-election-lease-duration", "leader-election-renew-deadline", "leader-election-retry-period",
		"metrics-bind-address", "health-probe-bind-address", "kube-api-qps", "kube-api-burst", "debounce",
		"workers", "hmac-key-secret", "is-Argo-Rollouts",
	} {
		f := fs.Lookup(name)
		if f == nil {
			t.Errorf("--%s is not bound", name)
			continue
		}
		if strings.TrimSpace(f.Usage) == "" {
			t.Errorf("--%s has no help text", name)
		}
	}
}

func TestValidValues(t *testing.T) {
	o := mustParse(t,
		"--namespaces-to-ignore", " kube-system, ,other ",
		"--namespace-selector", "team=x",
		"--resource-label-selector", "reload:yes",
		"--resources-to-ignore", "configMaps",
		"--ignored-workload-types", "Jobs, daemonsets,CronJobs",
		"--auto-reload-all", "--reload-on-create", "--reload-on-delete",
		"--auto-annotation", "example.com/auto",
		"--log-format", "text", "--log-level", "DEBUG",
		"--enable-ha", "--leader-election-lease-duration", "30s", "--leader-election-renew-deadline", "20s", "--leader-election-retry-period", "5s",
		"--kube-api-qps", "0.5", "--kube-api-burst", "1", "--debounce", "0", "--workers", "1",
		"--hmac-key-secret", "ripple/digest-key",
	)
	if !slices.Equal(o.NamespacesToIgnore, []string{"kube-system", "other"}) {
		t.Errorf("namespaces to ignore = %q", o.NamespacesToIgnore)
	}
	if !o.NamespaceSelector.Matches(labels.Set{"team": "x"}) || !o.ResourceSelector.Matches(labels.Set{"reload": "yes"}) {
		t.Errorf("selectors = %v, %v", o.NamespaceSelector, o.ResourceSelector)
	}
	if !o.IgnoreConfigMaps || o.IgnoreSecrets {
		t.Errorf("IgnoreConfigMaps=%v IgnoreSecrets=%v", o.IgnoreConfigMaps, o.IgnoreSecrets)
	}
	if len(o.IgnoredWorkloads) != 3 || !o.IgnoredWorkloads["daemonsets"] || !o.IgnoredWorkloads["jobs"] || !o.IgnoredWorkloads["cronjobs"] {
		t.Errorf("IgnoredWorkloads = %v, want daemonsets, jobs and cronjobs", o.IgnoredWorkloads)
	}
	if !o.AutoReloadAll || !o.ReloadOnCreate || !o.ReloadOnDelete || !o.EnableHA {
		t.Errorf("boolean flags not set: %+v", o)
	}
	if o.Keys.Auto != "example.com/auto" || o.Keys.Search != annotations.Search {
		t.Errorf("Keys = %+v", o.Keys)
	}
	if o.Verbosity() != 1 || o.Debounce != 0 || o.QPS != 0.5 || o.HMACKeySecret != "ripple/digest-key" {
		t.Errorf("Verbosity=%d Debounce=%s QPS=%v HMACKeySecret=%q", o.Verbosity(), o.Debounce, o.QPS, o.HMACKeySecret)
	}
	if o = mustParse(t, "--log-format="); o.LogFormat != "text" {
		t.Errorf("--log-format= (Reloader's default) gave %q, want text", o.LogFormat)
	}
	o = mustParse(t, "--resources-to-ignore", " Secrets ")
	if o.IgnoreConfigMaps || !o.IgnoreSecrets {
		t.Errorf("--resources-to-ignore=secrets: IgnoreConfigMaps=%v IgnoreSecrets=%v", o.IgnoreConfigMaps, o.IgnoreSecrets)
	}
}

// TestRepeatedListFlagsAddUp: Reloader's list flags are string slices, so
// a command line or a kustomize patch that repeats one means every value.
func TestRepeatedListFlagsAddUp(t *testing.T) {
	o := mustParse(t, "--ignored-workload-types=jobs", "--ignored-workload-types=cronjobs")
	if !o.IgnoredWorkloads["jobs"] || !o.IgnoredWorkloads["cronjobs"] {
		t.Errorf("IgnoredWorkloads = %v, want jobs and cronjobs", o.IgnoredWorkloads)
	}
	o = mustParse(t, "--resources-to-ignore=secrets", "--resources-to-ignore=Secrets")
	if o.IgnoreConfigMaps || !o.IgnoreSecrets {
		t.Errorf("secrets twice: IgnoreConfigMaps=%v IgnoreSecrets=%v", o.IgnoreConfigMaps, o.IgnoreSecrets)
	}
}

func TestBadValueErrorNamesTheFlag(t *testing.T) {
	cases := []struct {
		name string
		args []string
		flag string
	}{
		{"unknown log format", []string{"--log-format", "xml"}, "--log-format"},
		{"log format is case-sensitive", []string{"--log-format", "JSON"}, "--log-format"},
		{"unknown log level", []string{"--log-level", "verbose"}, "--log-level"},
		{"negative debounce", []string{"--debounce", "-1s"}, "--debounce"},
		{"debounce over a day", []string{"--debounce", "2000000h"}, "--debounce"},
		{"qps too low to get anywhere", []string{"--kube-api-qps", "1e-30"}, "--kube-api-qps"},
		{"more workers than goroutines are worth", []string{"--workers", "1000000000"}, "--workers"},
		{"every workload kind ignored", []string{"--ignored-workload-types", "deployments,statefulsets,daemonsets,cronjobs,jobs"}, "--ignored-workload-types"},
		{"every workload kind ignored, Rollouts too", []string{"--is-Argo-Rollouts=true", "--ignored-workload-types", "deployments,statefulsets,daemonsets,cronjobs,jobs,rollouts"}, "--ignored-workload-types"},
		{"lease name with capitals", []string{"--enable-ha", "--leader-election-id", "Ripple_Leader"}, "--leader-election-id"},
		{"lease namespace not a namespace name", []string{"--enable-ha", "--leader-election-namespace", "Kube_System"}, "--leader-election-namespace"},
		{"resources-to-ignore typo", []string{"--resources-to-ignore", "configmap"}, "--resources-to-ignore"},
		{"resources-to-ignore both", []string{"--resources-to-ignore", "configMaps,secrets"}, "--resources-to-ignore"},
		{"resources-to-ignore both, repeated", []string{"--resources-to-ignore", "configMaps", "--resources-to-ignore", "secrets"}, "--resources-to-ignore"},
		{"unknown workload type", []string{"--ignored-workload-types", "deployments,pods"}, "--ignored-workload-types"},
		{"singular workload type", []string{"--ignored-workload-types", "deployment"}, "--ignored-workload-types"},
		{"invalid namespace selector", []string{"--namespace-selector", "a=b=c"}, "--namespace-selector"},
		{"invalid namespace selector characters", []string{"--namespace-selector", "!!"}, "--namespace-selector"},
		{"invalid resource selector", []string{"--resource-label-selector", "k in (a"}, "--resource-label-selector"},
		{"zero qps", []string{"--kube-api-qps", "0"}, "--kube-api-qps"},
		{"zero burst under a rate", []string{"--kube-api-qps", "50", "--kube-api-burst", "0"}, "--kube-api-burst"},
		{"zero workers", []string{"--workers", "0"}, "--workers"},
		{"empty hmac secret", []string{"--hmac-key-secret", ""}, "--hmac-key-secret"},
		{"hmac secret name with capitals", []string{"--hmac-key-secret", "Digest-Key"}, "--hmac-key-secret"},
		{"hmac secret with two slashes", []string{"--hmac-key-secret", "a/b/c"}, "--hmac-key-secret"},
		{"lease not above renew deadline", []string{"--enable-ha", "--leader-election-lease-duration", "10s"}, "--leader-election-lease-duration"},
		{"renew deadline not above retry", []string{"--enable-ha", "--leader-election-renew-deadline", "2s"}, "--leader-election-lease-duration"},
		{"zero retry period", []string{"--enable-ha", "--leader-election-retry-period", "0s"}, "--leader-election-lease-duration"},
		{"empty auto annotation", []string{"--auto-annotation", ""}, "--auto-annotation"},
		{"empty configmap auto annotation", []string{"--configmap-auto-annotation", ""}, "--configmap-auto-annotation"},
		{"empty secret auto annotation", []string{"--secret-auto-annotation", ""}, "--secret-auto-annotation"},
		{"empty search annotation", []string{"--auto-search-annotation", ""}, "--auto-search-annotation"},
		{"empty match annotation", []string{"--search-match-annotation", ""}, "--search-match-annotation"},
		{"empty configmap annotation", []string{"--configmap-annotation", ""}, "--configmap-annotation"},
		{"empty secret annotation", []string{"--secret-annotation", ""}, "--secret-annotation"},
		{"empty ignore annotation", []string{"--ignore-annotation", ""}, "--ignore-annotation"},
		{"empty configmap exclude annotation", []string{"--configmap-exclude-annotation", ""}, "--configmap-exclude-annotation"},
		{"empty secret exclude annotation", []string{"--secret-exclude-annotation", ""}, "--secret-exclude-annotation"},
		{"annotation flag not an annotation name", []string{"--auto-annotation", "not a valid key!"}, "--auto-annotation"},
		{"annotation flag naming ripple's record", []string{"--pause-deployment-time-annotation", annotations.Recorded}, "--pause-deployment-time-annotation"},
		{"annotation flag naming a fixed Reloader annotation", []string{"--ignore-annotation", annotations.RolloutStrategy}, "--ignore-annotation"},
		{"two annotation flags giving one name", []string{"--pause-deployment-time-annotation", annotations.PausePeriod}, "--pause-deployment-time-annotation"},
		{"an annotation flag taking another's default", []string{"--secret-annotation", annotations.ConfigMapReload}, "--secret-annotation"},
		{"namespace selector term without key", []string{"--namespace-selector", ":*"}, "--namespace-selector"},
		{"namespace selector term with two colons", []string{"--namespace-selector", "team:a:b"}, "--namespace-selector"},
		{"invalid repeated namespace selector", []string{"--namespace-selector", "team:a", "--namespace-selector", "a=b=c"}, "--namespace-selector"},
		{"argo flag not a boolean", []string{"--is-Argo-Rollouts", "yes"}, "--is-Argo-Rollouts"},
		{"argo flag empty", []string{"--is-Argo-Rollouts="}, "--is-Argo-Rollouts"},
		{"zero rollout timeout: every paced rollout would time out at once", []string{"--rollout-timeout", "0s"}, "--rollout-timeout"},
		{"negative rollouts in progress", []string{"--max-rollouts-in-progress", "-1"}, "--max-rollouts-in-progress"},
		{"minimum interval over a day", []string{"--min-rollout-interval", "25h"}, "--min-rollout-interval"},
		{"negative minimum interval", []string{"--min-rollout-interval", "-1s"}, "--min-rollout-interval"},
		{"negative pause period", []string{"--pause-period", "-5m"}, "--pause-period"},
		{"pause period over a day", []string{"--pause-period", "25h"}, "--pause-period"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := parse(t, c.args...)
			if err == nil {
				t.Fatalf("Options(%v) succeeded, want an error naming %s", c.args, c.flag)
			}
			if !strings.Contains(err.Error(), c.flag+":") {
				t.Errorf("error %q does not name %s", err, c.flag)
			}
		})
	}
}

func TestLeaseFlagsAreOnlyCheckedWithHA(t *testing.T) {
	if _, err := parse(t, "--leader-election-lease-duration", "1s", "--leader-election-retry-period", "0s", "--leader-election-id", "Ripple_Leader"); err != nil {
		t.Errorf("inconsistent lease flags without --enable-ha: %v", err)
	}
}

func TestLimitsAreTaken(t *testing.T) {
	for _, args := range [][]string{
		{"--debounce", "24h"}, {"--workers", "1000"}, {"--kube-api-qps", "0.1"}, {"--kube-api-qps", "-1"},
		{"--ignored-workload-types", "deployments,statefulsets,daemonsets,cronjobs"},
		{"--enable-ha", "--leader-election-id", "ripple.leader-1", "--leader-election-namespace", "ripple-system"},
	} {
		if _, err := parse(t, args...); err != nil {
			t.Errorf("Options(%v): %v", args, err)
		}
	}
}

func TestEveryBadValueIsReportedAtOnce(t *testing.T) {
	_, err := parse(t, "--log-format", "xml", "--workers", "0", "--namespace-selector", "a=b=c", "--ignore-annotation", "")
	if err == nil {
		t.Fatal("Options succeeded")
	}
	for _, flag := range []string{"--log-format:", "--workers:", "--namespace-selector:", "--ignore-annotation:"} {
		if !strings.Contains(err.Error(), flag) {
			t.Errorf("error %q does not mention %s", err, flag)
		}
	}
}

func TestParseSelector(t *testing.T) {
	cases := []struct {
		in       string
		match    []labels.Set
		noMatch  []labels.Set
		wantNil  bool
		wantFail bool
	}{
		{in: "", wantNil: true},
		{in: " , ", wantNil: true},
		{in: "team=x", match: []labels.Set{{"team": "x"}, {"team": "x", "o": "1"}}, noMatch: []labels.Set{{"team": "y"}, {}}},
		{in: "team:x", match: []labels.Set{{"team": "x"}}, noMatch: []labels.Set{{"team": "y"}, {}}},
		{in: "app.kubernetes.io/name:web", match: []labels.Set{{"app.kubernetes.io/name": "web"}}, noMatch: []labels.Set{{}}},
		{in: "team=*", match: []labels.Set{{"team": "x"}, {"team": ""}}, noMatch: []labels.Set{{"other": "x"}}},
		{in: "team=x, env:prod, reload=*", match: []labels.Set{{"team": "x", "env": "prod", "reload": "1"}},
			noMatch: []labels.Set{{"team": "x", "env": "prod"}, {"team": "x", "reload": "1"}, {"env": "prod", "reload": "1"}}},
		{in: "team!=x", match: []labels.Set{{"team": "y"}, {}}, noMatch: []labels.Set{{"team": "x"}}},
		{in: "env in (prod, staging)", match: []labels.Set{{"env": "staging"}}, noMatch: []labels.Set{{"env": "dev"}}},
		{in: "app in (web,api,db),tier in (front,api,back)", match: []labels.Set{{"app": "db", "tier": "api"}},
			noMatch: []labels.Set{{"app": "db", "tier": "mid"}}},
		{in: "!team", match: []labels.Set{{}}, noMatch: []labels.Set{{"team": "x"}}},
		{in: "team:*", match: []labels.Set{{"team": "x"}, {"team": ""}}, noMatch: []labels.Set{{"other": "x"}, {}}},
		{in: "example.com/team:*", match: []labels.Set{{"example.com/team": "x"}}, noMatch: []labels.Set{{"team": "x"}}},
		{in: "team : x", match: []labels.Set{{"team": "x"}}, noMatch: []labels.Set{{"team": "y"}}},
		{in: "team = *", match: []labels.Set{{"team": "x"}}, noMatch: []labels.Set{{}}},
		{in: "team:", match: []labels.Set{{"team": ""}}, noMatch: []labels.Set{{"team": "x"}}},
		{in: "team:x,env=prod,reload:*,owner=*,!legacy,tier in (a, b)",
			match: []labels.Set{{"team": "x", "env": "prod", "reload": "", "owner": "o", "tier": "b"}},
			noMatch: []labels.Set{
				{"team": "y", "env": "prod", "reload": "", "owner": "o", "tier": "b"},
				{"team": "x", "env": "prod", "owner": "o", "tier": "b"},
				{"team": "x", "env": "prod", "reload": "", "tier": "b"},
				{"team": "x", "env": "prod", "reload": "", "owner": "o", "tier": "b", "legacy": "1"},
				{"team": "x", "env": "prod", "reload": "", "owner": "o", "tier": "c"},
			}},
		{in: "a=b=c", wantFail: true},
		{in: ":*", wantFail: true},
		{in: ":x", wantFail: true},
		{in: "=*", wantFail: true},
		{in: "team:x:y", wantFail: true},
		{in: "team==*", wantFail: true},
		{in: "team!=*", wantFail: true},
		{in: "team:x y", wantFail: true},
		{in: "team=x y", wantFail: true},
		{in: "=x", wantFail: true},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			sel, err := ParseSelector(c.in)
			if c.wantFail {
				if err == nil {
					t.Fatalf("ParseSelector(%q) = %v, want an error", c.in, sel)
				}
				if !strings.Contains(err.Error(), c.in) {
					t.Errorf("error %q does not quote the input", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseSelector(%q): %v", c.in, err)
			}
			if (sel == nil) != c.wantNil {
				t.Fatalf("ParseSelector(%q) = %v, want nil: %v", c.in, sel, c.wantNil)
			}
			for _, s := range c.match {
				if !sel.Matches(s) {
					t.Errorf("%q does not select %v", c.in, s)
				}
			}
			for _, s := range c.noMatch {
				if sel.Matches(s) {
					t.Errorf("%q selects %v", c.in, s)
				}
			}
		})
	}
}

func TestWorkloadsDropsIgnoredKindsAndRollsRolloutsOnlyWithArgo(t *testing.T) {
	cases := []struct {
		ignored, argo string
		want          []string
	}{
		{"", "false", []string{"CronJob", "DaemonSet", "Deployment", "Job", "StatefulSet"}},
		{"deployments", "false", []string{"CronJob", "DaemonSet", "Job", "StatefulSet"}},
		{"StatefulSets, DAEMONSETS", "false", []string{"CronJob", "Deployment", "Job"}},
		{"jobs,cronjobs", "false", []string{"DaemonSet", "Deployment", "StatefulSet"}},
		{"", "true", []string{"CronJob", "DaemonSet", "Deployment", "Job", "Rollout", "StatefulSet"}},
		{"deployments,statefulsets,daemonsets,jobs,cronjobs", "True", []string{"Rollout"}},
		{"rollouts", "true", []string{"CronJob", "DaemonSet", "Deployment", "Job", "StatefulSet"}},
		{"rollouts", "false", []string{"CronJob", "DaemonSet", "Deployment", "Job", "StatefulSet"}},
	}
	for _, c := range cases {
		t.Run(c.ignored+" argo="+c.argo, func(t *testing.T) {
			o := mustParse(t, "--ignored-workload-types", c.ignored, "--is-Argo-Rollouts", c.argo)
			var got []string
			for _, k := range o.Workloads() {
				got = append(got, k.Kind)
			}
			slices.Sort(got)
			if !slices.Equal(got, c.want) {
				t.Errorf("Workloads() = %v, want %v", got, c.want)
			}
		})
	}
}

func cronJobs(t *testing.T) workload.Type {
	t.Helper()
	typ, ok := workload.ByPlural("cronjobs")
	if !ok {
		t.Fatal("no cronjobs type")
	}
	return typ
}

func TestCronJobStrategy_FlagSetsTheDefaultAndRefusesOtherValues(t *testing.T) {
	cases := []struct {
		value, want, err string
	}{
		{"job", "job", ""},
		{"template", "template", ""},
		{"Template", "", `--cronjob-strategy: "Template" is not job or template`},
		{"", "", `--cronjob-strategy: "" is not job or template`},
	}
	for _, c := range cases {
		fs := pflag.NewFlagSet("ripple", pflag.ContinueOnError)
		p := NewParser(fs)
		if err := fs.Parse([]string{"--cronjob-strategy=" + c.value}); err != nil {
			t.Fatal(err)
		}
		o, err := p.Options()
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: error %v, want %q", c.value, err, c.err)
			}
			continue
		}
		if err != nil || o.StrategyOf(cronJobs(t)) != c.want {
			t.Errorf("%q: strategy %q, error %v; want %q", c.value, o.StrategyOf(cronJobs(t)), err, c.want)
		}
	}
}

func TestVerbosity(t *testing.T) {
	cases := map[string]int{
		"trace": 10, "debug": 1, "info": 0, "warning": -1, "warn": -1, "error": -2,
		"Debug": 1, "ERROR": -2, "fatal": -2, "panic": -2,
	}
	for level, want := range cases {
		o := mustParse(t, "--log-level", level)
		if got := o.Verbosity(); got != want {
			t.Errorf("--log-level=%s: Verbosity() = %d, want %d", level, got, want)
		}
	}
}

func TestHMACKeySecret_EmptyNamespaceOrNameIsRejected(t *testing.T) {
	for _, v := range []string{"/", "ns/", "/name", "ns.with.dots/name"} {
		if _, err := parse(t, "--hmac-key-secret", v); err == nil || !strings.Contains(err.Error(), "--hmac-key-secret:") {
			t.Errorf("--hmac-key-secret=%q: err = %v, want one naming the flag", v, err)
		}
	}
}

func TestRepeatedSelectorFlagsAllMustMatch(t *testing.T) {
	o := mustParse(t, "--namespace-selector", "team:x", "--namespace-selector", "reload:*",
		"--resource-label-selector", "a=1", "--resource-label-selector", "b:*")
	if !o.NamespaceSelector.Matches(labels.Set{"team": "x", "reload": "1"}) || o.NamespaceSelector.Matches(labels.Set{"team": "x"}) {
		t.Errorf("--namespace-selector twice = %v, want both terms", o.NamespaceSelector)
	}
	if !o.ResourceSelector.Matches(labels.Set{"a": "1", "b": ""}) || o.ResourceSelector.Matches(labels.Set{"a": "1"}) {
		t.Errorf("--resource-label-selector twice = %v, want both terms", o.ResourceSelector)
	}
}

func TestNamespaceScope(t *testing.T) {
	cases := []struct {
		name        string
		env         map[string]string
		args        []string
		namespaces  []string
		ignored     []string
		selector    bool
		dropped     []string
		leaseInNsOf string
	}{
		{name: "all namespaces by default"},
		{name: "ignore list and selector apply to all namespaces",
			args:    []string{"--namespaces-to-ignore=kube-system", "--namespace-selector=team:*"},
			ignored: []string{"kube-system"}, selector: true},
		{name: "repeated --namespaces add up",
			args: []string{"--namespaces= a, ,b ", "--namespaces", "c"}, namespaces: []string{"a", "b", "c"}},
		{name: "a namespace named twice is watched once",
			args: []string{"--namespaces=a,b,a", "--namespaces=b"}, namespaces: []string{"a", "b"}},
		{name: "repeated --namespaces-to-ignore add up",
			args: []string{"--namespaces-to-ignore=a", "--namespaces-to-ignore=b"}, ignored: []string{"a", "b"}},
		{name: "KUBERNETES_NAMESPACE watches one namespace",
			env: map[string]string{EnvWatchNamespace: "apps"}, namespaces: []string{"apps"}},
		{name: "--namespaces wins over KUBERNETES_NAMESPACE",
			env: map[string]string{EnvWatchNamespace: "apps"}, args: []string{"--namespaces=a"}, namespaces: []string{"a"}},
		{name: "a blank KUBERNETES_NAMESPACE watches all namespaces",
			env: map[string]string{EnvWatchNamespace: " "}, args: []string{"--namespace-selector=team:*"}, selector: true},
		{name: "--namespaces drops the ignore list and the selector",
			args:       []string{"--namespaces=a", "--namespaces-to-ignore=a", "--namespace-selector=team=x"},
			namespaces: []string{"a"}, dropped: []string{"namespaces-to-ignore", "namespace-selector"}},
		{name: "KUBERNETES_NAMESPACE drops the ignore list and the selector",
			env:        map[string]string{EnvWatchNamespace: "apps"},
			args:       []string{"--namespaces-to-ignore=kube-system", "--namespace-selector=team=x"},
			namespaces: []string{"apps"}, dropped: []string{"namespaces-to-ignore", "namespace-selector"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o, err := parseEnv(t, c.env, c.args...)
			if err != nil {
				t.Fatalf("Options: %v", err)
			}
			if !slices.Equal(o.Namespaces, c.namespaces) {
				t.Errorf("Namespaces = %q, want %q", o.Namespaces, c.namespaces)
			}
			if !slices.Equal(o.NamespacesToIgnore, c.ignored) {
				t.Errorf("NamespacesToIgnore = %q, want %q", o.NamespacesToIgnore, c.ignored)
			}
			if (o.NamespaceSelector != nil) != c.selector {
				t.Errorf("NamespaceSelector = %v, want one: %v", o.NamespaceSelector, c.selector)
			}
			if !slices.Equal(o.Dropped, c.dropped) {
				t.Errorf("Dropped = %q, want %q", o.Dropped, c.dropped)
			}
		})
	}
}

func TestLeaderElectionNamespace(t *testing.T) {
	cases := []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{name: "empty: controller-runtime's in-cluster default", want: ""},
		{name: "POD_NAMESPACE", env: map[string]string{EnvPodNamespace: "ripple"}, want: "ripple"},
		{name: "the flag wins over POD_NAMESPACE", env: map[string]string{EnvPodNamespace: "ripple"},
			args: []string{"--leader-election-namespace=locks"}, want: "locks"},
		{name: "KUBERNETES_NAMESPACE does not place the Lease", env: map[string]string{EnvWatchNamespace: "apps"},
			want: ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o, err := parseEnv(t, c.env, c.args...)
			if err != nil {
				t.Fatalf("Options: %v", err)
			}
			if o.LeaderElectionNamespace != c.want {
				t.Errorf("LeaderElectionNamespace = %q, want %q", o.LeaderElectionNamespace, c.want)
			}
		})
	}
}

func TestExcludeAnnotationsAreRenamed(t *testing.T) {
	o := mustParse(t, "--configmap-exclude-annotation=example.com/cm-exclude", "--secret-exclude-annotation=example.com/secret-exclude")
	if o.Keys.ConfigMapExclude != "example.com/cm-exclude" || o.Keys.SecretExclude != "example.com/secret-exclude" {
		t.Errorf("Keys = %+v", o.Keys)
	}
}

func TestHMACKeySecret_NameAloneOrNamespaceAndNameIsAccepted(t *testing.T) {
	for _, v := range []string{"digest-key", "ripple-system/digest-key", "keys/ripple.key"} {
		if o := mustParse(t, "--hmac-key-secret", v); o.HMACKeySecret != v {
			t.Errorf("--hmac-key-secret=%q parsed as %q", v, o.HMACKeySecret)
		}
	}
}

func TestEnableCSIIntegration_ReadsTheSecretProviderClassAnnotations(t *testing.T) {
	o := mustParse(t, "--enable-csi-integration")
	if !o.EnableCSIIntegration || o.Keys != annotations.DefaultKeys().WithCSI() {
		t.Errorf("EnableCSIIntegration=%v Keys=%+v", o.EnableCSIIntegration, o.Keys)
	}
}

func TestListFlagsReadQuotedValuesAsReloadersChartRendersThem(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		namespace []string
		selected  labels.Set
	}{
		{"a quoted selector", []string{`--namespace-selector="team=platform"`}, nil, labels.Set{"team": "platform"}},
		{"a quoted list of namespaces", []string{`--namespaces="a,b"`}, []string{"a", "b"}, nil},
		{"unquoted values as before", []string{"--namespaces=a, b", "--namespaces=c"}, []string{"a", "b", "c"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := mustParse(t, tt.args...)
			if !slices.Equal(o.Namespaces, tt.namespace) {
				t.Errorf("namespaces = %q, want %q", o.Namespaces, tt.namespace)
			}
			if tt.selected != nil && (o.NamespaceSelector == nil || !o.NamespaceSelector.Matches(tt.selected)) {
				t.Errorf("namespace selector %v does not match %v", o.NamespaceSelector, tt.selected)
			}
		})
	}
}
