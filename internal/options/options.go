package options

import (
	"encoding/csv"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/ripple-controller/ripple/internal/annotations"
	"github.com/ripple-controller/ripple/internal/workload"
)

// Options is ripple's validated configuration.
type Options struct {
	Kubeconfig string

	// Namespaces is ripple's watch scope: --namespaces, else
	// KUBERNETES_NAMESPACE; empty watches every namespace.
	Namespaces         []string
	NamespacesToIgnore []string
	// NamespaceSelector is nil when every namespace is selected.
	NamespaceSelector labels.Selector
	// Dropped names the flags that were set but do not apply, because
	// ripple watches a list of namespaces, as in Reloader's scoped mode.
	Dropped []string
	// ResourceSelector is nil when every ConfigMap and Secret is watched.
	ResourceSelector labels.Selector
	IgnoreConfigMaps bool
	IgnoreSecrets    bool
	// EnableCSIIntegration tracks SecretProviderClasses through the
	// SecretProviderClassPodStatus objects of the secrets store CSI driver.
	EnableCSIIntegration bool
	// IgnoredWorkloads holds the plurals of the workload types never rolled.
	IgnoredWorkloads map[string]bool
	// Strategies holds the strategy flags of the workload types that offer
	// a choice (see workload.Strategy), by flag name.
	Strategies map[string]string
	// Enabled holds the flags that turn workload types on (see
	// workload.Type.EnabledBy), by flag name.
	Enabled map[string]bool

	// ReloadStrategy is how workloads roll unless their ReloadStrategy
	// annotation says otherwise: one of workload.ReloadStrategies.
	ReloadStrategy string
	// KeyPrecision is the default of the KeyPrecision annotation: roll a
	// workload only when a key it reads changes.
	KeyPrecision bool
	// PausePeriod is the pause of every workload without the pause
	// annotation; 0 pauses none.
	PausePeriod time.Duration

	AutoReloadAll  bool
	ReloadOnCreate bool
	ReloadOnDelete bool
	Keys           annotations.Keys

	LogFormat string
	LogLevel  string

	EnableHA                bool
	LeaderElectionID        string
	LeaderElectionNamespace string
	LeaseDuration           time.Duration
	RenewDeadline           time.Duration
	RetryPeriod             time.Duration

	MetricsAddr string
	ProbeAddr   string
	QPS         float32
	Burst       int
	Debounce    time.Duration
	Workers     int
	// MaxRolloutsInProgress caps, for each change, the rollouts it started
	// that are not available yet; 0 starts them all at once.
	MaxRolloutsInProgress int
	// RolloutTimeout is how long a paced rollout may take to become
	// available before the next of its change starts anyway.
	RolloutTimeout time.Duration
	// MinRolloutInterval is the default of the MinRolloutInterval
	// annotation; 0 for none.
	MinRolloutInterval time.Duration
	// EnablePodRefresh allows the refresh reload strategy, which patches
	// pods: the chart grants that right only with it.
	EnablePodRefresh bool
	// DryRun sends every write to a workload as a server-side dry run and
	// reports the rollouts it would have made instead.
	DryRun bool

	HMACKeySecret string

	// Extras holds pprof, --webhook-url, alerts and metric options (extras.go).
	Extras
}

// Environment variables ripple reads, as Reloader does.
const (
	// EnvWatchNamespace limits ripple to one namespace when --namespaces is
	// empty: Reloader's single-namespace mode.
	EnvWatchNamespace = "KUBERNETES_NAMESPACE"
	// EnvPodNamespace is the namespace of the leader election Lease when
	// --leader-election-namespace is empty. The chart sets it from the
	// downward API; outside a cluster, where controller-runtime would look
	// for the in-cluster namespace file, it is the only default.
	EnvPodNamespace = "POD_NAMESPACE"
)

// raw holds flag values that need parsing before they become Options. The
// namespace and selector flags may be repeated, as in Reloader; their
// values add up.
type raw struct {
	namespaces, namespacesToIgnore, namespaceSelector, resourceSelector []string
	resourcesToIgnore, ignoredWorkloadTypes                             []string
	strategies, enablers                                                map[string]*string
}

// Parser binds ripple's flags to a flag set and turns them into Options.
type Parser struct {
	opts Options
	raw  raw
	// getenv reads ripple's environment variables; tests replace it.
	getenv func(string) string
}

// NewParser returns a Parser whose flags are bound to fs.
func NewParser(fs *pflag.FlagSet) *Parser {
	return NewParserEnv(fs, os.Getenv)
}

// NewParserEnv is NewParser reading ripple's environment variables with
// getenv: a check of flags alone, as migrate-values makes, must not depend
// on the environment it runs in.
func NewParserEnv(fs *pflag.FlagSet, getenv func(string) string) *Parser {
	p := &Parser{getenv: getenv}
	p.opts.Keys = annotations.DefaultKeys()
	p.bind(fs)
	return p
}

func (p *Parser) bind(fs *pflag.FlagSet) {
	o, r, k := &p.opts, &p.raw, &p.opts.Keys
	fs.StringVar(&o.Kubeconfig, "kubeconfig", "", "Path to a kubeconfig. Defaults to $KUBECONFIG, then the in-cluster config, then ~/.kube/config.")

	fs.StringArrayVar(&r.namespaces, "namespaces", nil, "Comma-separated namespaces to watch; may be repeated. Empty watches the namespace in $"+EnvWatchNamespace+" if set, else all namespaces. A list of namespaces ignores --namespaces-to-ignore and --namespace-selector, as in Reloader.")
	fs.StringArrayVar(&r.namespacesToIgnore, "namespaces-to-ignore", nil, "Comma-separated namespaces whose workloads are never rolled; may be repeated. Only applies when all namespaces are watched.")
	fs.StringArrayVar(&r.namespaceSelector, "namespace-selector", nil, "Only roll workloads in namespaces whose labels match; may be repeated, and every term must match. Comma-separated terms: k=v or k:v, k=* or k:* (label exists), or any Kubernetes label selector term. Only applies when all namespaces are watched.")
	fs.StringArrayVar(&r.resourceSelector, "resource-label-selector", nil, "Only watch ConfigMaps and Secrets whose labels match (same syntax as --namespace-selector); applied by the API server.")
	fs.StringArrayVar(&r.resourcesToIgnore, "resources-to-ignore", nil, "Ignore one kind of config object: configMaps or secrets.")
	fs.BoolVar(&o.EnableCSIIntegration, "enable-csi-integration", false, "Roll workloads whose secrets store CSI volumes report new secret versions in their SecretProviderClassPodStatus objects.")
	fs.StringArrayVar(&r.ignoredWorkloadTypes, "ignored-workload-types", nil, "Comma-separated workload types never rolled: "+strings.Join(plurals(), ", ")+"; may be repeated.")
	r.strategies, r.enablers = map[string]*string{}, map[string]*string{}
	for _, t := range workload.All {
		if st := t.Strategy; st != nil && st.Flag != "" {
			r.strategies[st.Flag] = new(string)
			fs.StringVar(r.strategies[st.Flag], st.Flag, st.Values[0], fmt.Sprintf("How %ss roll when their config changes: %s. The annotation %s on one overrides it.", t.Kind, strings.Join(st.Values, " or "), st.Annotation))
		}
		if t.EnabledBy != "" {
			// A string, as in Reloader, so that "--flag false" means false.
			r.enablers[t.EnabledBy] = new(string)
			fs.StringVar(r.enablers[t.EnabledBy], t.EnabledBy, "false", fmt.Sprintf("Roll %ss (%s) too: true or false. Without their API served, ripple says so and rolls the other kinds.", t.Kind, t.GroupVersion))
		}
	}

	fs.BoolVar(&o.KeyPrecision, "key-precision", false, "Roll a workload only when a key its pod spec reads changes (env valueFrom, volume or projected items), not on any key of the objects it uses, as Reloader does. The annotation "+annotations.KeyPrecision+" on one overrides it.")
	fs.StringVar(&o.ReloadStrategy, "reload-strategy", workload.StampAnnotations, "How workloads roll: annotations (a digest annotation on the pod template), env-vars (Reloader's STAKATER_<NAME>_<KIND> variable on the container that uses the changed object) or refresh (an annotation on the running pods, with --enable-pod-refresh, where a restart is not needed). The annotation "+annotations.ReloadStrategy+" on one overrides it.")
	fs.DurationVar(&o.PausePeriod, "pause-period", 0, "Pause of every Deployment, StatefulSet and DaemonSet without the pause-period annotation: a change starts it, and the workload rolls once, with every change made meanwhile, when it ends. 0 pauses none.")
	fs.BoolVar(&o.AutoReloadAll, "auto-reload-all", false, "Treat every workload as annotated auto=\"true\", unless it says \"false\".")
	fs.BoolVar(&o.ReloadOnCreate, "reload-on-create", false, "Roll workloads when an object they track is created.")
	fs.BoolVar(&o.ReloadOnDelete, "reload-on-delete", false, "Roll workloads when an object they track is deleted.")

	fs.StringVar(&k.Auto, "auto-annotation", k.Auto, "Annotation that tracks every referenced ConfigMap and Secret.")
	fs.StringVar(&k.ConfigMapAuto, "configmap-auto-annotation", k.ConfigMapAuto, "Annotation that tracks every referenced ConfigMap.")
	fs.StringVar(&k.SecretAuto, "secret-auto-annotation", k.SecretAuto, "Annotation that tracks every referenced Secret.")
	fs.StringVar(&k.Search, "auto-search-annotation", k.Search, "Annotation on a workload that tracks referenced objects carrying the match annotation.")
	fs.StringVar(&k.Match, "search-match-annotation", k.Match, "Annotation on a ConfigMap or Secret that makes searching workloads track it.")
	fs.StringVar(&k.ConfigMapReload, "configmap-annotation", k.ConfigMapReload, "Annotation listing ConfigMap names (anchored regular expressions) that trigger a workload.")
	fs.StringVar(&k.SecretReload, "secret-annotation", k.SecretReload, "Annotation listing Secret names (anchored regular expressions) that trigger a workload.")
	fs.StringVar(&k.Ignore, "ignore-annotation", k.Ignore, "Annotation on a ConfigMap or Secret that stops it triggering anything.")
	fs.StringVar(&k.ConfigMapExclude, "configmap-exclude-annotation", k.ConfigMapExclude, "Annotation on a workload listing ConfigMap names that never trigger it.")
	fs.StringVar(&k.SecretExclude, "secret-exclude-annotation", k.SecretExclude, "Annotation on a workload listing Secret names that never trigger it.")
	fs.StringVar(&k.PausePeriod, "pause-deployment-annotation", k.PausePeriod, "Annotation on a workload giving its pause period (a duration such as 5m).")
	fs.StringVar(&k.PausedAt, "pause-deployment-time-annotation", k.PausedAt, "Annotation ripple writes on a paused workload: when the pause began.")

	fs.StringVar(&o.LogFormat, "log-format", "json", "Log format: json, or text (also the empty value, as in Reloader).")
	fs.StringVar(&o.LogLevel, "log-level", "info", "Log level: trace, debug, info, warning or error; fatal and panic, Reloader's, log errors only.")

	fs.BoolVar(&o.EnableHA, "enable-ha", false, "Run several replicas with leader election; only the leader rolls workloads.")
	fs.StringVar(&o.LeaderElectionID, "leader-election-id", "ripple-leader", "Name of the Lease used for leader election.")
	fs.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", "", "Namespace of the leader election Lease. Empty uses $"+EnvPodNamespace+" if set, else the namespace of ripple's in-cluster service account.")
	fs.DurationVar(&o.LeaseDuration, "leader-election-lease-duration", 15*time.Second, "How long a standby waits before taking over a lease that is not renewed.")
	fs.DurationVar(&o.RenewDeadline, "leader-election-renew-deadline", 10*time.Second, "How long the leader keeps trying to renew before it steps down.")
	fs.DurationVar(&o.RetryPeriod, "leader-election-retry-period", 2*time.Second, "How often leader election is attempted.")

	fs.StringVar(&o.MetricsAddr, "metrics-bind-address", ":9090", "Address of the Prometheus metrics endpoint; 0 disables it.")
	fs.StringVar(&o.ProbeAddr, "health-probe-bind-address", ":8081", "Address of /healthz and /readyz; 0 disables them.")
	fs.Float32Var(&o.QPS, "kube-api-qps", -1, "Steady queries per second to the API server; negative sets no client-side limit, leaving it to the API server's priority and fairness.")
	fs.IntVar(&o.Burst, "kube-api-burst", 200, "Burst of queries to the API server.")
	fs.DurationVar(&o.Debounce, "debounce", time.Second, "Changes that reach one workload within this window make one rollout; 0 rolls at once, 24h at most.")
	fs.IntVar(&o.Workers, "workers", 16, "Workloads of each kind reconciled in parallel, at most 1000.")
	fs.IntVar(&o.MaxRolloutsInProgress, "max-rollouts-in-progress", 0, "For each change of a ConfigMap or Secret, start at most this many rollouts at once, and the next only as earlier ones become available or reach --rollout-timeout. Rollouts for other changes are never held up. 0 starts them all at once, as Reloader does.")
	fs.DurationVar(&o.RolloutTimeout, "rollout-timeout", 5*time.Minute, "How long a paced rollout may take to become available before the next of its change starts anyway, with a RolloutTimedOut Event.")
	fs.DurationVar(&o.MinRolloutInterval, "min-rollout-interval", 0, "The least time between two rollouts of a workload: a change within it waits, and the changes made meanwhile roll once. The annotation "+annotations.MinRolloutInterval+" on one overrides it.")
	fs.BoolVar(&o.EnablePodRefresh, "enable-pod-refresh", false, "Allow the refresh reload strategy: stamp a workload's running pods, so the kubelet rewrites their ConfigMap and Secret volumes at once, instead of rolling it, when the changed objects reach them only as whole volumes. Needs the right to list and patch pods.")
	fs.BoolVar(&o.DryRun, "dry-run", false, "Change no workload: send each write as a server-side dry run, and log and record a WouldReload Event for each rollout instead.")
	compatible(fs)
	p.bindExtras(fs)
	fs.StringVar(&o.HMACKeySecret, "hmac-key-secret", DefaultKeySecret, "The Secret, name in ripple's own namespace or namespace/name, whose data key \"key\" keys the digests ripple writes (data keys \"previous*\" hold keys it replaced). ripple creates it with a random key if it does not exist.")
}

// Options validates the parsed flags and returns the configuration.
func (p *Parser) Options() (Options, error) {
	o, r := p.opts, p.raw
	var errs []error
	fail := func(flag string, err error) { errs = append(errs, fmt.Errorf("--%s: %w", flag, err)) }

	for _, l := range []struct {
		flag string
		vals *[]string
	}{{"namespaces", &p.raw.namespaces}, {"namespaces-to-ignore", &p.raw.namespacesToIgnore},
		{"namespace-selector", &p.raw.namespaceSelector}, {"resource-label-selector", &p.raw.resourceSelector}} {
		vals, err := csvValues(*l.vals)
		if err != nil {
			fail(l.flag, err)
			continue
		}
		*l.vals = vals
	}
	r = p.raw
	var err error
	if o.NamespaceSelector, err = ParseSelector(strings.Join(r.namespaceSelector, ",")); err != nil {
		fail("namespace-selector", err)
	}
	if o.ResourceSelector, err = ParseSelector(strings.Join(r.resourceSelector, ",")); err != nil {
		fail("resource-label-selector", err)
	}
	p.scope(&o)
	if err := ignoreResources(&o, r.resourcesToIgnore); err != nil {
		fail("resources-to-ignore", err)
	}
	if o.EnableCSIIntegration {
		o.Keys = o.Keys.WithCSI()
	}
	if o.IgnoredWorkloads, err = workloadTypes(strings.Join(r.ignoredWorkloadTypes, ",")); err != nil {
		fail("ignored-workload-types", err)
	}
	o.Strategies = map[string]string{}
	for _, t := range workload.All {
		if st := t.Strategy; st != nil && st.Flag != "" {
			v := *r.strategies[st.Flag]
			if !slices.Contains(st.Values, v) {
				fail(st.Flag, fmt.Errorf("%q is not %s", v, strings.Join(st.Values, " or ")))
			}
			o.Strategies[st.Flag] = v
		}
	}
	o.Enabled = map[string]bool{}
	for flag, v := range r.enablers {
		on, err := strconv.ParseBool(strings.TrimSpace(*v))
		if err != nil {
			fail(flag, fmt.Errorf("%q is not true or false", *v))
		}
		o.Enabled[flag] = on
	}
	errs = append(errs, p.extras(&o)...)
	errs = append(errs, o.validate()...)
	return o, errors.Join(errs...)
}

// scope applies Reloader's namespace modes: --namespaces, else
// KUBERNETES_NAMESPACE, lists the namespaces watched, and then the ignore
// list and the namespace selector do not apply; --leader-election-namespace,
// else POD_NAMESPACE, places the Lease.
func (p *Parser) scope(o *Options) {
	r := p.raw
	o.Namespaces = namespaceList(r.namespaces)
	if ns := strings.TrimSpace(p.getenv(EnvWatchNamespace)); len(o.Namespaces) == 0 && ns != "" {
		o.Namespaces = []string{ns}
	}
	o.NamespacesToIgnore = namespaceList(r.namespacesToIgnore)
	if len(o.Namespaces) > 0 {
		if len(o.NamespacesToIgnore) > 0 {
			o.Dropped = append(o.Dropped, "namespaces-to-ignore")
			o.NamespacesToIgnore = nil
		}
		if o.NamespaceSelector != nil {
			o.Dropped = append(o.Dropped, "namespace-selector")
			o.NamespaceSelector = nil
		}
	}
	if o.LeaderElectionNamespace == "" {
		o.LeaderElectionNamespace = strings.TrimSpace(p.getenv(EnvPodNamespace))
	}
}

func (o *Options) validate() []error {
	var errs []error
	fail := func(flag, format string, args ...any) {
		errs = append(errs, fmt.Errorf("--%s: "+format, append([]any{flag}, args...)...))
	}
	switch o.LogFormat {
	case "json", "text":
	case "":
		// Reloader's default, which means text.
		o.LogFormat = "text"
	default:
		fail("log-format", "%q is not json or text", o.LogFormat)
	}
	if _, ok := logLevels[strings.ToLower(o.LogLevel)]; !ok {
		fail("log-level", "%q is not trace, debug, info, warning, error, fatal or panic", o.LogLevel)
	}
	if o.Debounce < 0 || o.Debounce > annotations.MaxPeriod {
		fail("debounce", "%s is not between 0 and %s", o.Debounce, annotations.MaxPeriod)
	}
	if o.QPS >= 0 && o.QPS < MinQPS {
		fail("kube-api-qps", "%g is below %g a second, a rate at which ripple would wait minutes for each request: give a higher rate, or a negative value for no client-side limit", o.QPS, MinQPS)
	}
	if o.QPS > 0 && o.Burst <= 0 {
		fail("kube-api-burst", "%d must be positive", o.Burst)
	}
	if !slices.Contains(workload.ReloadStrategies, o.ReloadStrategy) {
		fail("reload-strategy", "%q is not %s", o.ReloadStrategy, strings.Join(workload.ReloadStrategies, " or "))
	}
	if o.MaxRolloutsInProgress < 0 {
		fail("max-rollouts-in-progress", "%d is negative", o.MaxRolloutsInProgress)
	}
	if o.RolloutTimeout <= 0 {
		fail("rollout-timeout", "%s is not positive", o.RolloutTimeout)
	}
	if o.MinRolloutInterval < 0 || o.MinRolloutInterval > annotations.MaxPeriod {
		fail("min-rollout-interval", "%s is not between 0 and %s", o.MinRolloutInterval, annotations.MaxPeriod)
	}
	if o.ReloadStrategy == workload.Refresh && !o.EnablePodRefresh {
		fail("reload-strategy", "refresh needs --enable-pod-refresh, which needs the right to list and patch pods")
	}
	if o.PausePeriod < 0 || o.PausePeriod > annotations.MaxPeriod {
		fail("pause-period", "%s is not between 0 and %s", o.PausePeriod, annotations.MaxPeriod)
	}
	if o.Workers <= 0 || o.Workers > MaxWorkers {
		fail("workers", "%d is not between 1 and %d", o.Workers, MaxWorkers)
	}
	if len(o.Workloads()) == 0 {
		fail("ignored-workload-types", "ignores every workload kind ripple would roll, so it would roll nothing")
	}
	if o.EnableHA {
		errs = append(errs, o.validateLease()...)
	}
	if err := validKeySecret(o.HMACKeySecret); err != nil {
		fail("hmac-key-secret", "%w", err)
	}
	keys := o.keyFlags()
	taken := map[string]string{}
	for _, flag := range slices.Sorted(maps.Keys(keys)) {
		key := keys[flag]
		msgs := validation.IsQualifiedName(key)
		switch {
		case key == "":
			fail(flag, "must not be empty")
		case len(msgs) > 0:
			fail(flag, "%q is not an annotation name: %s", key, strings.Join(msgs, "; "))
		case slices.Contains(annotations.Fixed, key):
			fail(flag, "%q is an annotation ripple reads or writes for another purpose", key)
		case taken[key] != "":
			fail(flag, "%q is also the name --%s gives", key, taken[key])
		}
		taken[key] = flag
	}
	return errs
}

// validateLease checks the leader election flags: a Lease the API server
// refuses to create (a name that is no DNS subdomain) would leave every
// replica ready and none leading, so nothing would roll.
func (o *Options) validateLease() []error {
	var errs []error
	if o.LeaseDuration <= o.RenewDeadline || o.RenewDeadline <= o.RetryPeriod || o.RetryPeriod <= 0 {
		errs = append(errs, fmt.Errorf("--leader-election-lease-duration: lease duration (%s) must exceed the renew deadline (%s), which must exceed the retry period (%s)", o.LeaseDuration, o.RenewDeadline, o.RetryPeriod))
	}
	if msgs := validation.IsDNS1123Subdomain(o.LeaderElectionID); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("--leader-election-id: %q is not a Lease name: %s", o.LeaderElectionID, strings.Join(msgs, "; ")))
	}
	if o.LeaderElectionNamespace != "" {
		if msgs := validation.IsDNS1123Label(o.LeaderElectionNamespace); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("--leader-election-namespace: %q is not a namespace name: %s", o.LeaderElectionNamespace, strings.Join(msgs, "; ")))
		}
	}
	return errs
}

// MaxWorkers bounds --workers: each workload kind starts that many
// goroutines, and a few thousand roll no faster against one API server.
const MaxWorkers = 1000

// MinQPS is the lowest client-side rate ripple takes.
const MinQPS = 0.1

// DefaultKeySecret is the digest key Secret, in ripple's own namespace,
// unless --hmac-key-secret names another.
const DefaultKeySecret = "ripple-digest-key"

// validKeySecret accepts a Secret name, or namespace/name. ripple has no
// unkeyed mode, so empty is refused.
func validKeySecret(s string) error {
	ns, name, qualified := strings.Cut(s, "/")
	if !qualified {
		ns, name = "", s
	}
	if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
		return fmt.Errorf("%q is not a Secret name or namespace/name: %s", s, strings.Join(msgs, "; "))
	}
	if msgs := validation.IsDNS1123Label(ns); qualified && len(msgs) > 0 {
		return fmt.Errorf("%q is not namespace/name: %s", s, strings.Join(msgs, "; "))
	}
	return nil
}

func (o *Options) keyFlags() map[string]string {
	k := o.Keys
	return map[string]string{
		"auto-annotation": k.Auto, "configmap-auto-annotation": k.ConfigMapAuto,
		"secret-auto-annotation": k.SecretAuto, "auto-search-annotation": k.Search,
		"search-match-annotation": k.Match, "configmap-annotation": k.ConfigMapReload,
		"secret-annotation": k.SecretReload, "ignore-annotation": k.Ignore,
		"configmap-exclude-annotation": k.ConfigMapExclude, "secret-exclude-annotation": k.SecretExclude,
		"pause-deployment-annotation": k.PausePeriod, "pause-deployment-time-annotation": k.PausedAt,
	}
}

// logLevels maps Reloader's level names to logr verbosity: V(1) is debug.
// Reloader's fatal and panic mean errors only here: ripple logs nothing
// above an error.
var logLevels = map[string]int{"trace": 10, "debug": 1, "info": 0, "warning": -1, "warn": -1, "error": -2, "fatal": -2, "panic": -2}

// Verbosity returns the logr verbosity of --log-level: 0 for info, higher
// for more detail, negative for warnings and errors only.
func (o *Options) Verbosity() int { return logLevels[strings.ToLower(o.LogLevel)] }

// StrategyOf returns the default strategy of the type's workloads: its
// flag's value, else the type's first.
func (o *Options) StrategyOf(t workload.Type) string {
	if t.Strategy == nil {
		return ""
	}
	if v := o.Strategies[t.Strategy.Flag]; v != "" {
		return v
	}
	return t.Strategy.Values[0]
}

func plurals() []string {
	out := make([]string, 0, len(workload.All))
	for _, t := range workload.All {
		out = append(out, t.Plural)
	}
	return out
}

// Workloads returns the workload types that are turned on and not ignored.
func (o *Options) Workloads() []workload.Type {
	var out []workload.Type
	for _, k := range workload.All {
		if !o.IgnoredWorkloads[k.Plural] && (k.EnabledBy == "" || o.Enabled[k.EnabledBy]) {
			out = append(out, k)
		}
	}
	return out
}

// csvValues reads each value of a repeated list flag as one line of
// comma-separated values, as Reloader's flags read theirs: its chart
// renders --namespace-selector="team=platform", quotes included.
func csvValues(vals []string) ([]string, error) {
	var out []string
	for _, v := range vals {
		if strings.TrimSpace(v) == "" {
			continue
		}
		fields, err := csv.NewReader(strings.NewReader(v)).Read()
		if err != nil {
			return nil, fmt.Errorf("reading %q as comma-separated values: %w", v, err)
		}
		out = append(out, fields...)
	}
	return out, nil
}

// list splits comma-separated values into their non-empty entries.
func list(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// namespaceList is list for namespaces, each once: a namespace named twice
// would start a second watch of its data.
func namespaceList(vals []string) []string {
	var out []string
	for _, ns := range list(strings.Join(vals, ",")) {
		if !slices.Contains(out, ns) {
			out = append(out, ns)
		}
	}
	return out
}

// ignoreResources sets the one kind of config object the flag's values
// name. Repeated, the flag adds up as Reloader's does, and naming both
// kinds is an error there too: ripple would watch nothing.
func ignoreResources(o *Options, vals []string) error {
	for _, v := range list(strings.Join(vals, ",")) {
		switch strings.ToLower(v) {
		case "configmaps":
			o.IgnoreConfigMaps = true
		case "secrets":
			o.IgnoreSecrets = true
		default:
			return fmt.Errorf("%q is not configMaps or secrets", v)
		}
	}
	if o.IgnoreConfigMaps && o.IgnoreSecrets {
		return errors.New("configMaps and secrets cannot both be ignored")
	}
	return nil
}

func workloadTypes(s string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, t := range list(s) {
		t = strings.ToLower(t)
		if k, ok := workload.ByPlural(t); ok {
			out[k.Plural] = true
			continue
		}
		return nil, fmt.Errorf("%q is not one of %s", t, strings.Join(plurals(), ", "))
	}
	return out, nil
}

// ParseSelector parses Reloader's selector syntax: comma-separated terms,
// each k=v or k:v, k=* or k:* for "label exists", or any term of the
// Kubernetes label selector syntax. An empty string selects everything (nil).
func ParseSelector(s string) (labels.Selector, error) {
	terms := list(s)
	if len(terms) == 0 {
		return nil, nil
	}
	for i, t := range terms {
		var err error
		if terms[i], err = selectorTerm(t); err != nil {
			return nil, fmt.Errorf("%q: %w", s, err)
		}
	}
	sel, err := labels.Parse(strings.Join(terms, ","))
	if err != nil {
		return nil, fmt.Errorf("%q is not a label selector: %w", s, err)
	}
	return sel, nil
}

// selectorTerm rewrites Reloader's forms of one term into the Kubernetes
// syntax. Neither a label key nor a value may hold ':', so a ':' is always
// Reloader's separator; Reloader drops what follows a second one, ripple
// refuses it.
func selectorTerm(t string) (string, error) {
	key, value, legacy := strings.Cut(t, ":")
	if !legacy {
		if key, value, _ = strings.Cut(t, "="); strings.TrimSpace(value) != "*" {
			return t, nil
		}
	}
	key, value = strings.TrimSpace(key), strings.TrimSpace(value)
	switch {
	case key == "":
		return "", fmt.Errorf("term %q has no label key", t)
	case strings.Contains(value, ":"):
		return "", fmt.Errorf("term %q has more than one ':'", t)
	case value == "*":
		return key, nil
	}
	return key + "=" + value, nil
}

// compatible accepts Reloader flags whose job ripple always does its own
// way, so that a Reloader command line starts ripple unchanged.
func compatible(fs *pflag.FlagSet) {
	fs.Bool("sync-after-restart", false, "Accepted for Reloader compatibility: ripple always converges after a restart, without rolling what did not change.")
	_ = fs.MarkDeprecated("sync-after-restart", "ripple always converges after a restart")
}
