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

	"github.com/go-logr/logr"
	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/ripple-controller/ripple/internal/gcpace"
	"github.com/ripple-controller/ripple/internal/logging"
	"github.com/ripple-controller/ripple/internal/manager"
	"github.com/ripple-controller/ripple/internal/migrate"
	"github.com/ripple-controller/ripple/internal/options"
	"github.com/ripple-controller/ripple/internal/version"
)

// Run parses args as ripple's flags and runs ripple until SIGTERM or
// SIGINT, logging to stderr. configure, if given, adjusts the client
// configuration, as a profiling build of the bench does.
func Run(args []string, configure ...func(*rest.Config)) error {
	if len(args) > 0 && args[0] == "migrate-values" {
		return MigrateValues(args[1:], os.Stdin, os.Stdout)
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
	ctx := ctrl.SetupSignalHandler()
	gcpace.Start(ctx)
	mgr, err := NewManager(ctx, cfg, &opts, os.Stderr)
	if err != nil {
		return err
	}
	// What logs outside the manager (controller-runtime's own packages)
	// logs the same way.
	ctrl.SetLogger(mgr.GetLogger())
	mgr.GetLogger().Info("Starting ripple", "version", version.Version)
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

// Parse turns args into ripple's options. --help prints the usage and
// returns pflag.ErrHelp.
func Parse(args []string) (options.Options, error) {
	fs := pflag.NewFlagSet("ripple", pflag.ContinueOnError)
	parser := options.NewParser(fs)
	if err := fs.Parse(args); err != nil {
		return options.Options{}, err
	}
	return parser.Options()
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
