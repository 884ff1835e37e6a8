package bench

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// Build is one ripple binary with environment variables of its own.
type Build struct {
	Bin string
	Env []string
}

func (b Build) String() string { return strings.TrimSpace(b.Bin + " " + strings.Join(b.Env, " ")) }

// RunPaired compares builds' CPU per edit of scenario (e) on one control
// plane: one W=5,000 C=500 namespace, each build started, made idle and
// timed over edits edits, the builds taking turns, rounds times. A
// comparison of whole bench runs is lost in how much the machine's speed
// moves between them.
func RunPaired(ctx context.Context, builds []Build, edits, rounds int, logf func(string, ...any)) (err error) {
	ctrllog.SetLogger(logr.Discard())
	cl, err := StartCluster()
	if err != nil {
		return err
	}
	defer func() {
		if err = errors.Join(err, cl.Stop()); err == nil {
			err = cl.Cleanup()
		} else {
			logf("kept %s for inspection", cl.Dir)
		}
	}()
	b := &Bench{cfg: Config{Logf: logf, Floor: DefaultFloor}, cluster: cl, report: &Report{}, dir: cl.Dir}
	if b.cs, err = cl.Clientset(); err != nil {
		return err
	}
	e, err := b.setup(ctx, Layout{Workloads: 5000, ConfigMaps: 500})
	if err != nil {
		return err
	}
	// The tracker's watch would hold the API server from stopping.
	defer e.cancel()
	perEdit := make([][]float64, len(builds))
	next := 0
	for round := range rounds {
		for i, build := range builds {
			cms := make([]string, edits)
			for k := range cms {
				cms[k] = cmName((next + k) % e.layout.ConfigMaps)
			}
			next += edits
			ms, err := b.timeEdits(ctx, e, build, fmt.Sprintf("paired%d-%d", round, i), cms)
			if err != nil {
				return fmt.Errorf("%s: %w", build, err)
			}
			perEdit[i] = append(perEdit[i], ms)
			logf("round %d, %s: %.2f ms per edit", round, build, ms)
		}
	}
	for i, build := range builds {
		logf("%s: mean %.2f ms per edit over %v", build, mean(perEdit[i]), perEdit[i])
	}
	return nil
}

// timeEdits starts build, makes the edits once it is idle, and returns its
// CPU time (user and system) per edit, with its user and system time apart
// in the log.
func (b *Bench) timeEdits(ctx context.Context, e *env, build Build, name string, cms []string) (float64, error) {
	b.cfg.RippleBin, b.cfg.RippleEnv = build.Bin, build.Env
	r, err := b.startRipple(ctx, e, name, "--debounce=0")
	if err != nil {
		return 0, err
	}
	defer func() { _ = r.Stop() }()
	ed := b.rippleEditor(e, r, 300*time.Millisecond)
	// As in (e): no scrapes of ripple's metrics between the edits.
	ed.Idle = nil
	// Scraped outside the CPU time measured, as (e) does.
	heapBefore, err := r.Metrics(ctx)
	if err != nil {
		return 0, err
	}
	before, err := r.Proc()
	if err != nil {
		return 0, err
	}
	edits, err := ed.Run(ctx, cms)
	if err != nil {
		return 0, err
	}
	after, err := r.Proc()
	if err != nil {
		return 0, err
	}
	if msg := Correctness(edits); msg != "" {
		return 0, fmt.Errorf("did not roll exactly the affected workloads: %s", msg)
	}
	heapAfter, err := r.Metrics(ctx)
	if err != nil {
		return 0, err
	}
	kib, gcs := HeapOf(heapBefore).PerEdit(HeapOf(heapAfter), len(edits))
	b.cfg.Logf("%s: user %s, system %s over %d edits; per edit %.0f KiB allocated, %.3f collections",
		build, after.User-before.User, after.System-before.System, len(edits), kib, gcs)
	return float64((after.CPU - before.CPU).Microseconds()) / 1000 / float64(len(edits)), nil
}

func mean(xs []float64) float64 {
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}
