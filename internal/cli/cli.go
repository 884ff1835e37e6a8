// Package cli is ripple's command line: flags to options, options to a
// running manager. cmd/ripple is only its entry point.
package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/ripple-controller/ripple/internal/gcpace"
	"github.com/ripple-controller/ripple/internal/logging"
	"github.com/ripple-controller/ripple/internal/manager"
	"github.com/ripple-controller/ripple/internal/options"
	"github.com/ripple-controller/ripple/internal/version"
)

// Run parses args as ripple's flags and runs ripple until SIGTERM or
// SIGINT. configure, if given, adjusts the client configuration, as a
// profiling build of the bench does.
func Run(args []string, configure ...func(*rest.Config)) error {
	fs := pflag.NewFlagSet("ripple", pflag.ContinueOnError)
	parser := options.NewParser(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return nil
		}
		return err
	}
	opts, err := parser.Options()
	if err != nil {
		return err
	}
	log, err := logging.New(opts.LogFormat, opts.Verbosity())
	if err != nil {
		return err
	}
	ctrl.SetLogger(log)
	cfg, err := restConfig(opts.Kubeconfig)
	if err != nil {
		return err
	}
	for _, c := range configure {
		c(cfg)
	}
	ctx := ctrl.SetupSignalHandler()
	gcpace.Start(ctx)
	mgr, err := manager.New(ctx, cfg, &opts)
	if err != nil {
		return err
	}
	log.Info("Starting ripple", "version", version.Version)
	return mgr.Start(ctx)
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
