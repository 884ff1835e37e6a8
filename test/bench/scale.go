package bench

import (
	"context"
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The scale of (g): the largest clusters the README claims, with every
// ConfigMap used and many unused Secrets as weight for the cache.
const (
	scaleWorkloads     = 20000
	scaleConfigMaps    = scaleWorkloads / 10
	scaleUnusedSecrets = 10000
	scaleSecretBytes   = 1 << 10
	// scaleRSS and scaleStartup are (g)'s targets: peak RSS, and a restart
	// with nothing changed ready and idle.
	scaleRSS     = 150 << 20
	scaleStartup = time.Minute
)

// scale is (g): W=20,000 Deployments. It measures the first workload's
// latency against the floor and against (a), ripple's peak RSS and what it
// holds per workload, and a restart with nothing changed: how long until
// ready and idle, and that it writes nothing.
func (b *Bench) scale(ctx context.Context, a *latencyResult) error {
	scen := fmt.Sprintf("(g) W=%d C=%d + %d unused %dKiB Secrets", scaleWorkloads, scaleConfigMaps, scaleUnusedSecrets, scaleSecretBytes>>10)
	e, err := b.setup(ctx, Layout{Workloads: scaleWorkloads, ConfigMaps: scaleConfigMaps,
		UnusedSecrets: scaleUnusedSecrets, UnusedSecretBytes: scaleSecretBytes})
	if err != nil {
		return err
	}
	cms := editTargets(b.cfg.Edits, scaleConfigMaps)
	const settle = 300 * time.Millisecond
	floorMark := b.cluster.AuditMark()
	floorEdits, _, err := b.floor(ctx, e, cms, settle, b.cfg.Floor)
	if err != nil {
		return err
	}

	start := time.Now()
	r, err := b.startRipple(ctx, e, "debounce0", "--debounce=0")
	if err != nil {
		return err
	}
	b.report.note("%s: first start, recording every workload, idle after %s", scen, time.Since(start).Round(time.Millisecond))
	rippleMark := b.cluster.AuditMark()
	edits, err := b.profiled(ctx, r, b.rippleEditor(e, r, settle), cms)
	if err != nil {
		return errors.Join(err, r.Stop())
	}
	p, err := r.Proc()
	if err != nil {
		return errors.Join(err, r.Stop())
	}
	b.noteProc(scen+" --debounce=0", r)
	if err := r.Stop(); err != nil {
		return err
	}
	// The restart must find nothing changed: the floor edits again after it.
	restartRows, err := b.scaleRestart(ctx, e, scen)
	if err != nil {
		return err
	}
	if floorEdits, err = b.floorAgain(ctx, scen, e, cms, settle, floorEdits); err != nil {
		return err
	}
	ff, _ := Latencies(floorEdits)
	rf, _ := Latencies(edits)
	b.correctness(scen+" --debounce=0", edits)
	b.ratioRow(scen+" --debounce=0", "first workload p50", rf.P50, ff.P50, 1.2)
	b.firstPatchRows(scen+" --debounce=0", floorMark, floorEdits, rippleMark, edits)
	if a != nil {
		b.againstA(scen+" --debounce=0", "first workload p50 vs (a)", rf.P50, a.first.P50)
		b.floorAgainstA(scen, ff.P50, a)
	}
	b.report.add(Row{Scenario: scen, Measure: "ripple peak RSS (VmHWM)", Ripple: mib(p.HWM),
		Target: "<= " + mib(scaleRSS), Pass: pass(p.HWM <= scaleRSS)})
	b.report.add(Row{Scenario: scen, Measure: "heap and stacks (RssAnon) per workload", Ripple: fmt.Sprintf("%d B", p.Anon/scaleWorkloads)})
	for _, row := range restartRows {
		b.report.add(row)
	}
	if err := b.teardown(ctx, e); err != nil {
		return err
	}
	return b.wide(ctx)
}

// scaleRestart starts ripple again on (g)'s records: ready and idle within
// scaleStartup, and no write. It returns its rows.
func (b *Bench) scaleRestart(ctx context.Context, e *env, scen string) ([]Row, error) {
	mark := b.cluster.AuditMark()
	rolls := e.tracker.Mark()
	start := time.Now()
	r, err := b.startRipple(ctx, e, "restart")
	if err != nil {
		return nil, err
	}
	took := time.Since(start)
	b.noteProc(scen+" restarted", r)
	// A restart reads every object at once, while the first start's
	// records arrive at the API server's pace: its peak may be the higher.
	p, err := r.Proc()
	if err := errors.Join(err, r.Stop()); err != nil {
		return nil, err
	}
	audit, err := b.cluster.AuditCounts(mark)
	if err != nil {
		return nil, err
	}
	writes := Writes(audit)
	return []Row{
		{Scenario: scen, Measure: "restart, nothing changed: ready and idle", Ripple: took.Round(time.Millisecond).String(),
			Target: "<= " + scaleStartup.String(), Pass: pass(took <= scaleStartup)},
		{Scenario: scen, Measure: "restart, nothing changed: writes", Ripple: fmt.Sprintf("%.0f", writes),
			Target: "0", Pass: pass(writes == 0 && len(e.tracker.RollsSince(rolls)) == 0)},
		{Scenario: scen, Measure: "restart, nothing changed: ripple peak RSS (VmHWM)", Ripple: mib(p.HWM),
			Target: "<= " + mib(scaleRSS), Pass: pass(p.HWM <= scaleRSS)},
	}, nil
}

// wideListObjects is how many ConfigMaps the reload list of (g)'s wide
// workload matches, and wideFirstSight how soon ripple must record it.
const (
	wideListObjects = 5000
	wideFirstSight  = 5 * time.Second
)

// wide is part of (g): a workload created while ripple runs, whose reload
// list matches 5,000 ConfigMaps, is recorded within wideFirstSight.
func (b *Bench) wide(ctx context.Context) error {
	const scen = "(g) first sight, a reload list matching 5,000 ConfigMaps"
	e, err := b.setup(ctx, Layout{UnusedConfigMaps: wideListObjects, UnusedConfigMapBytes: 1 << 10})
	if err != nil {
		return err
	}
	r, err := b.startRipple(ctx, e, "wide")
	if err != nil {
		return err
	}
	d := deployment("wide", "unused-0")
	d.Annotations = map[string]string{ConfigMapReloadAnnotation: "unused-.*"}
	start := time.Now()
	if _, err := b.cs.AppsV1().Deployments(e.layout.Namespace).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		return errors.Join(err, r.Stop())
	}
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	err = e.tracker.WaitRecorded(wctx, 1)
	cancel()
	took := time.Since(start)
	if err := errors.Join(err, r.Stop()); err != nil {
		return err
	}
	b.report.add(Row{Scenario: scen, Measure: "recorded after its creation", Ripple: ms(took),
		Target: "<= " + wideFirstSight.String(), Pass: pass(took <= wideFirstSight)})
	return b.teardown(ctx, e)
}
