package bench

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// Smoke checks ripple's correctness at a small scale, not its speed: W=200
// Deployments over 20 ConfigMaps, --debounce=0, edits one at a time; every
// affected Deployment rolls exactly once and nothing else does, each edit's
// patches are exactly the affected workloads, and a restart with nothing
// changed writes nothing.
func Smoke(ctx context.Context, cfg Config) error {
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	ctrllog.SetLogger(logr.Discard())
	if cfg.Edits == 0 {
		cfg.Edits = 10
	}
	cl, err := StartCluster()
	if err != nil {
		return err
	}
	b := &Bench{cfg: cfg, cluster: cl, report: &Report{}, dir: cl.Dir}
	err = b.smoke(ctx)
	err = errors.Join(err, cl.Stop())
	if err == nil {
		_ = cl.Cleanup()
	} else {
		err = fmt.Errorf("%w (logs kept in %s)", err, cl.Dir)
	}
	return err
}

func (b *Bench) smoke(ctx context.Context) error {
	var err error
	if b.cs, err = b.cluster.Clientset(); err != nil {
		return err
	}
	const w, c = 200, 20
	e, err := b.setup(ctx, Layout{Workloads: w, ConfigMaps: c})
	if err != nil {
		return err
	}
	defer e.cancel()
	r, err := b.startRipple(ctx, e, "debounce0", "--debounce=0")
	if err != nil {
		return err
	}
	defer func() { _ = r.Stop() }()
	mark := b.cluster.AuditMark()
	edits, err := b.rippleEditor(e, r, 200*time.Millisecond).Run(ctx, editTargets(b.cfg.Edits, c))
	if err != nil {
		return err
	}
	if msg := Correctness(edits); msg != "" {
		return fmt.Errorf("edits: %s", msg)
	}
	// The editor waited after each edit until ripple was idle and the
	// Deployments quiet, so the audit log (blocking mode) holds every patch.
	audit, err := b.cluster.AuditCounts(mark)
	if err != nil {
		return err
	}
	if got, want := audit["patch deployments"], float64(Affected(edits)); got != want {
		return fmt.Errorf("ripple patched Deployments %v times for %v affected workloads; requests: %s", got, want, FormatCounts(audit))
	}
	if err := r.Stop(); err != nil {
		return err
	}
	mark = b.cluster.AuditMark()
	rolls := e.tracker.Mark()
	// startRipple returns once ripple has reconciled every Deployment and
	// is idle, so any write of the restart is in the audit log by then.
	r, err = b.startRipple(ctx, e, "restart")
	if err != nil {
		return err
	}
	if audit, err = b.cluster.AuditCounts(mark); err != nil {
		return err
	}
	if n := Writes(audit); n != 0 || len(e.tracker.RollsSince(rolls)) != 0 {
		return fmt.Errorf("a restart with nothing changed wrote %v times and rolled %d workloads; requests: %s", n, len(e.tracker.RollsSince(rolls)), FormatCounts(audit))
	}
	b.cfg.Logf("smoke: %d edits rolled %d workloads exactly; restart wrote nothing", len(edits), Affected(edits))
	return nil
}
