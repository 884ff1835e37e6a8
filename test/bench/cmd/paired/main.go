// Command paired compares ripple builds' CPU per edit of the bench's
// scenario (e) in turns on one local control plane (bench.RunPaired). Each
// argument is a binary, optionally followed by comma-separated VAR=value
// pairs for its environment:
//
//	go run ./test/bench/cmd/paired -edits 300 -rounds 2 bin/ripple-before bin/ripple bin/ripple,GOMAXPROCS=2
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
	edits := flag.Int("edits", 300, "edits each build is timed over, each round")
	rounds := flag.Int("rounds", 2, "turns of every build")
	flag.Parse()
	if flag.NArg() == 0 || *edits <= 0 || *rounds <= 0 {
		fmt.Fprintln(os.Stderr, "usage: paired [-edits N] [-rounds N] BIN[,VAR=value...] ...")
		os.Exit(2)
	}
	var builds []bench.Build
	for _, arg := range flag.Args() {
		parts := strings.Split(arg, ",")
		builds = append(builds, bench.Build{Bin: parts[0], Env: parts[1:]})
	}
	logf := func(format string, args ...any) {
		fmt.Printf(time.Now().Format("15:04:05 ")+format+"\n", args...)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := bench.RunPaired(ctx, builds, *edits, *rounds, logf); err != nil {
		fmt.Fprintln(os.Stderr, "paired:", err)
		os.Exit(1)
	}
}
