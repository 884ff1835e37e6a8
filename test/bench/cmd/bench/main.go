// Command bench runs ripple's benchmarks on a local control plane and prints
// a table of results, each row PASS or FAIL against its target. See the
// package test/bench for what is measured and how.
//
//	go run ./test/bench/cmd/bench -ripple bin/ripple -out /tmp/readme-performance.md
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/ripple-controller/ripple/test/bench"
)

func main() {
	ripple := flag.String("ripple", "bin/ripple", "the built ripple binary (make build)")
	scenarios := flag.String("scenarios", "abcdefgp", "scenarios to run: a, b (with e and f), c, d, g (W=20,000), p (paced fan-out)")
	// 100: ripple's CPU time is read from /proc in 10 ms ticks, which over
	// 30 edits of (e) moved its CPU per edit by up to 0.7 ms, and a p50 of
	// 30 latencies moved with one of them.
	edits := flag.Int("edits", 100, "ConfigMap edits per latency phase")
	fanoutEdits := flag.Int("fanout-edits", 10, "edits of the one ConfigMap in scenario d")
	out := flag.String("out", "", "also write the report as Markdown to this file")
	rippleEnv := flag.String("ripple-env", "", "space-separated VAR=value pairs added to ripple's environment, e.g. GODEBUG=gctrace=1 GOMEMLIMIT=30MiB")
	profileDir := flag.String("profile-dir", "", "with -ripple naming a ripple-profiled build, write CPU, heap and allocs profiles of each phase here")
	memprobe := flag.String("memprobe", "", "a built test/bench/cmd/memprobe that (c) also runs, to compare cache designs")
	keep := flag.Bool("keep", false, "keep the control plane's directory (logs, audit log, ripple's logs) after a successful run")
	strict := flag.Bool("strict", false, "exit 1 when a row fails")
	floorWorkers := flag.Int("floor-workers", bench.DefaultFloor.Workers, "parallel patches of the floor")
	flag.Parse()

	bin, err := bench.RippleBinary(*ripple)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logf := func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "%s %s\n", time.Now().Format("15:04:05.000"), fmt.Sprintf(format, args...))
	}
	rep, err := bench.Run(ctx, bench.Config{RippleBin: bin, Scenarios: *scenarios, Edits: *edits, FanoutEdits: *fanoutEdits,
		RippleEnv: strings.Fields(*rippleEnv), ProfileDir: *profileDir, Keep: *keep, MemProbe: *memprobe, Logf: logf,
		Floor: bench.FloorOptions{QPS: bench.DefaultFloor.QPS, Workers: *floorWorkers}})
	rep.Command = "go run ./test/bench/cmd/bench " + strings.Join(os.Args[1:], " ")
	if os.Getenv("MAKELEVEL") != "" {
		rep.Command = "make bench, which runs " + rep.Command
	}
	fmt.Print(rep.Text())
	for _, n := range rep.Notes {
		fmt.Println("note:", n)
	}
	if *out != "" {
		if werr := os.WriteFile(*out, []byte(rep.Markdown()), 0o644); werr != nil {
			fmt.Fprintln(os.Stderr, "bench:", werr)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	failed := rep.Failed()
	fmt.Printf("%d rows, %d failed\n", len(rep.Rows), len(failed))
	if *strict && len(failed) > 0 {
		os.Exit(1)
	}
}
