// Command local-cluster runs a full local cluster (see package cluster) for
// trying ripple by hand, until it gets SIGINT or SIGTERM or a component
// dies. hack/local-cluster.sh runs it in the background.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/ripple-controller/ripple/test/cluster"
)

// readyLine starts the line that tells hack/local-cluster.sh the cluster is
// up.
const readyLine = "export KUBECONFIG="

func main() {
	// A flag set of our own: controller-runtime, linked in through envtest,
	// defines -kubeconfig on the global one.
	flags := flag.NewFlagSet(os.Args[0], flag.ExitOnError)
	kubeconfig := flags.String("kubeconfig", "bin/local-cluster/kubeconfig", "where to write the admin kubeconfig")
	nodes := flags.Int("nodes", 2, "number of fake Ready nodes")
	_ = flags.Parse(os.Args[1:]) // ExitOnError: Parse exits on bad flags
	if err := run(*kubeconfig, *nodes); err != nil {
		fmt.Fprintln(os.Stderr, "local-cluster:", err)
		os.Exit(1)
	}
}

func run(kubeconfig string, nodes int) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	kubeconfig, err := filepath.Abs(kubeconfig)
	if err != nil {
		return fmt.Errorf("resolving the kubeconfig path: %w", err)
	}
	c, err := cluster.StartFull(ctx, cluster.Options{Nodes: nodes})
	if err != nil {
		return err
	}
	// Until this point StartFull cleaned up after itself; from here on the
	// cluster is ours to stop.
	err = serve(ctx, c, kubeconfig)
	if err != nil {
		c.KeepLogs()
	}
	return errors.Join(err, c.Stop(), removeIfExists(kubeconfig))
}

func serve(ctx context.Context, c *cluster.Cluster, kubeconfig string) error {
	data, err := os.ReadFile(c.Kubeconfig)
	if err != nil {
		return fmt.Errorf("reading the kubeconfig: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(kubeconfig), 0o755); err != nil {
		return fmt.Errorf("writing the kubeconfig: %w", err)
	}
	if err := os.WriteFile(kubeconfig, data, 0o600); err != nil {
		return fmt.Errorf("writing the kubeconfig: %w", err)
	}
	fmt.Printf("local cluster with %d nodes is up; logs in %s\n%s%s\n", len(c.Nodes), c.LogDir, readyLine, kubeconfig)

	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			fmt.Println("stopping the local cluster")
			return nil
		case <-tick.C:
			for _, p := range c.Processes() {
				if !p.Running() {
					return fmt.Errorf("%s exited; see %s", p.Name(), p.LogFile())
				}
			}
		}
	}
}

func removeIfExists(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("removing the kubeconfig: %w", err)
	}
	return nil
}
