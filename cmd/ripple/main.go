// Command ripple rolls Deployments, StatefulSets and DaemonSets when the
// ConfigMaps and Secrets they use change. It reads stakater/Reloader's
// annotations and flags.
package main

import (
	"fmt"
	"os"

	"github.com/ripple-controller/ripple/internal/cli"
)

func main() {
	if err := cli.Run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "ripple:", err)
		os.Exit(1)
	}
}
