// Command ripple rolls Deployments, StatefulSets and DaemonSets when the
// ConfigMaps and Secrets they use change. It reads stakater/Reloader's
// annotations and flags.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/ripple-controller/ripple/internal/logging"
	"github.com/ripple-controller/ripple/internal/manager"
	"github.com/ripple-controller/ripple/internal/options"
	"github.com/ripple-controller/ripple/internal/version"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "ripple:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
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
	ctx := ctrl.SetupSignalHandler()
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
