// Command ripple-profiled is cmd/ripple with profiling hooks, for the bench
// to find where ripple's time and memory go. It is never what the bench
// measures against its targets (that is the built bin/ripple); it runs the
// same options, manager and controllers, and adds, from the environment:
//
//	RIPPLE_PPROF_ADDR     serve net/http/pprof on this address
//	RIPPLE_PROFILE_DIR    on SIGUSR1 write the allocs profile so far and start a CPU
//	                      profile, on SIGUSR2 stop it and write it with heap and
//	                      allocs profiles into this directory
//	RIPPLE_PROFILE_START=1  start the CPU profile at once, to profile startup
//	RIPPLE_PROTOBUF=1     talk protobuf to the API server instead of JSON
package main

import (
	"fmt"
	"net/http"
	_ "net/http/pprof" //nolint:gosec // profiling endpoint of a bench-only binary, bound to loopback by the bench
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"syscall"

	"k8s.io/client-go/rest"

	"github.com/ripple-controller/ripple/internal/cli"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "ripple-profiled:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if addr := os.Getenv("RIPPLE_PPROF_ADDR"); addr != "" {
		go func() { _ = http.ListenAndServe(addr, nil) }() //nolint:gosec // no timeouts needed for a bench
	}
	if dir := os.Getenv("RIPPLE_PROFILE_DIR"); dir != "" {
		if err := profileOnSignals(dir, os.Getenv("RIPPLE_PROFILE_START") == "1"); err != nil {
			return err
		}
	}
	// ripple samples the heap for profiles only with --enable-pprof; its
	// endpoint goes to a free port, out of the way of RIPPLE_PPROF_ADDR,
	// unless the flags that follow say otherwise.
	if len(args) == 0 || (strings.HasPrefix(args[0], "--") && args[0] != "--version") {
		args = append([]string{"--enable-pprof", "--pprof-addr=127.0.0.1:0"}, args...)
	}
	return cli.Run(args, func(cfg *rest.Config) {
		if os.Getenv("RIPPLE_PROTOBUF") == "1" {
			cfg.ContentType = "application/vnd.kubernetes.protobuf"
			cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
		}
	})
}

// profileOnSignals profiles between SIGUSR1 and SIGUSR2, numbering the files.
func profileOnSignals(dir string, now bool) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var n int
	var cpu *os.File
	start := func() {
		if cpu != nil {
			return
		}
		n++
		// The allocs profile counts from ripple's start: with this one as
		// the base (go tool pprof -base), it shows what the phase allocated.
		if f, err := os.Create(filepath.Join(dir, fmt.Sprintf("allocs-%d-before.pprof", n))); err == nil {
			_ = pprof.Lookup("allocs").WriteTo(f, 0)
			_ = f.Close()
		}
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("cpu-%d.pprof", n)))
		if err == nil && pprof.StartCPUProfile(f) == nil {
			cpu = f
		}
	}
	stop := func() {
		if cpu != nil {
			pprof.StopCPUProfile()
			_ = cpu.Close()
			cpu = nil
		}
		for _, p := range []string{"heap", "allocs"} {
			if f, err := os.Create(filepath.Join(dir, fmt.Sprintf("%s-%d.pprof", p, n))); err == nil {
				_ = pprof.Lookup(p).WriteTo(f, 0)
				_ = f.Close()
			}
		}
	}
	if now {
		start()
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGUSR1, syscall.SIGUSR2)
	go func() {
		for s := range sigs {
			if s == syscall.SIGUSR1 {
				start()
			} else {
				stop()
			}
		}
	}()
	return nil
}
