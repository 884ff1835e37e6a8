// Package cli is ripple's command line: flags to options, options to a
// manager. cmd/ripple is only its entry point; the test suites start ripple
// through Parse and NewManager too, so they run what the binary runs.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"

	"github.com/go-logr/logr"
	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ripple-controller/ripple/internal/controller"
	"github.com/ripple-controller/ripple/internal/gcpace"
	"github.com/ripple-controller/ripple/internal/logging"
	"github.com/ripple-controller/ripple/internal/manager"
	"github.com/ripple-controller/ripple/internal/migrate"
	"github.com/ripple-controller/ripple/internal/options"
	"github.com/ripple-controller/ripple/internal/procs"
	"github.com/ripple-controller/ripple/internal/refs"
	"github.com/ripple-controller/ripple/internal/version"
	"github.com/ripple-controller/ripple/internal/workload"
)

// Run parses args as ripple's flags and runs ripple until SIGTERM or
// SIGINT, logging to stderr. configure, if given, adjusts the client
// configuration, as a profiling build of the bench does.
func Run(args []string, configure ...func(*rest.Config)) error {
	if len(args) > 0 && args[0] == "migrate-values" {
		return MigrateValues(args[1:], os.Stdin, os.Stdout)
	}
	if len(args) > 0 && args[0] == "explain" {
		return Explain(context.Background(), args[1:], os.Stdout)
	}
	// Not one of the controller's flags: it runs nothing.
	if len(args) == 1 && args[0] == "--version" {
		_, err := fmt.Println(version.Version)
		return err
	}
	opts, err := Parse(args)
	if errors.Is(err, pflag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	cfg, err := restConfig(opts.Kubeconfig)
	if err != nil {
		return err
	}
	for _, c := range configure {
		c(cfg)
	}
	sampleHeap(opts.EnablePprof)
	maxProcs := procs.Limit()
	ctx := ctrl.SetupSignalHandler()
	gcpace.Start(ctx)
	mgr, err := NewManager(ctx, cfg, &opts, os.Stderr)
	if err != nil {
		return err
	}
	// What logs outside the manager (controller-runtime's own packages)
	// logs the same way.
	ctrl.SetLogger(mgr.GetLogger())
	mgr.GetLogger().Info("Starting ripple", "version", version.Version, "gomaxprocs", maxProcs)
	return mgr.Start(ctx)
}

// MigrateValues is `ripple migrate-values FILE`: it reads a values file of
// stakater/Reloader's chart (standard input for "-") and prints ripple's
// values, with a comment for each setting it could not carry over.
func MigrateValues(args []string, stdin io.Reader, stdout io.Writer) error {
	if len(args) != 1 {
		return migrate.ErrUsage
	}
	r := stdin
	if args[0] != "-" {
		f, err := os.Open(args[0])
		if err != nil {
			return fmt.Errorf("migrate-values: %w", err)
		}
		defer func() { _ = f.Close() }()
		r = f
	}
	in, err := io.ReadAll(io.LimitReader(r, migrate.MaxInput+1))
	if err != nil {
		return fmt.Errorf("migrate-values: reading %s: %w", args[0], err)
	}
	res, err := migrate.Values(in)
	if err != nil {
		return fmt.Errorf("migrate-values: %s: %w", args[0], err)
	}
	out, err := res.Render()
	if err != nil {
		return fmt.Errorf("migrate-values: %w", err)
	}
	_, err = stdout.Write(out)
	return err
}

// explainUsage is how `ripple explain` is called. It reads ripple's own
// flags too, so that it scopes and names annotations as the controller
// given the same flags does.
const explainUsage = "usage: ripple explain configmap|secret|deployment|statefulset|daemonset|cronjob|job|rollout NAME [-n NAMESPACE] [ripple's flags]"

// Explain is `ripple explain KIND NAME`, also run as `kubectl ripple
// explain`: it prints which workloads a change of a ConfigMap or Secret
// would roll, or which objects would roll a workload, and why, reading the
// cluster of the kubeconfig.
func Explain(ctx context.Context, args []string, stdout io.Writer) error {
	fs := pflag.NewFlagSet("ripple explain", pflag.ContinueOnError)
	parser := options.NewParser(fs)
	namespace := fs.StringP("namespace", "n", "", "The namespace of the object; defaults to the kubeconfig context's.")
	if err := fs.Parse(args); errors.Is(err, pflag.ErrHelp) {
		return nil
	} else if err != nil {
		return fmt.Errorf("explain: %w", err)
	}
	opts, err := parser.Options()
	if err != nil {
		return fmt.Errorf("explain: %w", err)
	}
	if fs.NArg() != 2 {
		return errors.New(explainUsage)
	}
	kind, name := strings.ToLower(fs.Arg(0)), fs.Arg(1)
	ns, err := namespaceOf(opts.Kubeconfig, *namespace)
	if err != nil {
		return err
	}
	e, err := explainer(&opts)
	if err != nil {
		return err
	}
	var x *controller.Explanation
	if ck, ok := configKinds[kind]; ok {
		x, err = e.Object(ctx, ck, ns, name)
	} else if typ, ok := explainedType(kind, &opts); ok {
		x, err = e.Workload(ctx, typ, ns, name)
	} else {
		return fmt.Errorf("explain: ripple rolls no %q: %s", kind, explainUsage)
	}
	if err != nil {
		return fmt.Errorf("explain: %w", err)
	}
	return x.Write(stdout)
}

// configKinds are the words explain takes for ConfigMaps and Secrets.
var configKinds = map[string]refs.Kind{"configmap": refs.ConfigMap, "configmaps": refs.ConfigMap, "cm": refs.ConfigMap,
	"secret": refs.Secret, "secrets": refs.Secret}

// workloadShortNames are kubectl's short names of the workload kinds.
var workloadShortNames = map[string]string{"deploy": "deployments", "sts": "statefulsets", "ds": "daemonsets", "cj": "cronjobs", "ro": "rollouts"}

// explainedType finds the workload type a word names, as a kind, plural
// or short name, among the types ripple rolls under opts.
func explainedType(word string, opts *options.Options) (workload.Type, bool) {
	for _, t := range opts.Workloads() {
		if word == strings.ToLower(t.Kind) || word == t.Plural || workloadShortNames[word] == t.Plural {
			return t, true
		}
	}
	return workload.Type{}, false
}

func explainer(opts *options.Options) (*controller.Explainer, error) {
	cfg, err := restConfig(opts.Kubeconfig)
	if err != nil {
		return nil, err
	}
	scheme, err := manager.SchemeFor(opts.Workloads())
	if err != nil {
		return nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("explain: connecting: %w", err)
	}
	return &controller.Explainer{Reader: c, Opts: opts}, nil
}

// namespaceOf is -n, else the namespace of the kubeconfig's context, as
// kubectl chooses.
func namespaceOf(kubeconfig, flag string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	ns, _, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).Namespace()
	if err != nil {
		return "", fmt.Errorf("explain: the kubeconfig's namespace: %w", err)
	}
	return ns, nil
}

// Parse turns args into ripple's options. --help prints the usage and
// returns pflag.ErrHelp.
func Parse(args []string) (options.Options, error) {
	fs := pflag.NewFlagSet("ripple", pflag.ContinueOnError)
	parser := options.NewParser(fs)
	if err := fs.Parse(args); err != nil {
		return options.Options{}, err
	}
	if fs.NArg() > 0 {
		return options.Options{}, strayArgument(fs, args)
	}
	return parser.Options()
}

// strayArgument reports the first argument that is no flag's. Reloader's
// --reload-on-create and --reload-on-delete take their value after a
// space; ripple's are boolean, which take it only after "=", so that
// "--reload-on-delete false" would turn it on if the "false" were dropped.
func strayArgument(fs *pflag.FlagSet, args []string) error {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") || a == "--" {
			if a == "--" && i+1 < len(args) {
				a = args[i+1]
			}
			return fmt.Errorf("unexpected argument %q: ripple takes no arguments, only flags", a)
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		f := fs.Lookup(name)
		if f == nil || hasValue {
			continue
		}
		if f.NoOptDefVal == "" {
			i++ // its value
			continue
		}
		if i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			return fmt.Errorf("unexpected argument %q after %s: ripple takes no arguments, and a flag's value goes after \"=\", as in %s=%s",
				args[i+1], a, a, args[i+1])
		}
	}
	return fmt.Errorf("unexpected argument %q: ripple takes no arguments, only flags", fs.Arg(0))
}

// NewManager builds ripple from opts on cfg, logging to w in the format and
// at the level opts ask for; Start runs it.
func NewManager(ctx context.Context, cfg *rest.Config, opts *options.Options, w io.Writer) (ctrl.Manager, error) {
	log := logging.New(w, opts.LogFormat, opts.Verbosity())
	return manager.New(logr.NewContext(ctx, log), cfg, opts)
}

// restConfig prefers --kubeconfig, then controller-runtime's lookup
// ($KUBECONFIG, in-cluster, ~/.kube/config).
func restConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig == "" {
		cfg, err := ctrl.GetConfig()
		if err != nil {
			return nil, fmt.Errorf("finding a kubeconfig: %w", err)
		}
		return cfg, nil
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("--kubeconfig: %w", err)
	}
	return cfg, nil
}

// sampleHeap keeps Go's sampling of allocations for heap profiles only when
// --enable-pprof serves them, or GODEBUG sets memprofilerate: nothing else
// reads them, and the profiler's records cost about 0.4 MiB of RSS in the
// bench's memory scenario (c).
func sampleHeap(pprof bool) {
	if !pprof && !strings.Contains(os.Getenv("GODEBUG"), "memprofilerate=") {
		runtime.MemProfileRate = 0
	}
}
