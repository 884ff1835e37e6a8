// Package bench measures ripple against a floor on a local control plane:
// how soon after a ConfigMap edit the Deployments that use it roll, how much
// API traffic and CPU each edit costs, how much memory ripple needs, and
// what a restart costs. Every timing target is a ratio to the floor measured
// in the same run, so a busy machine slows both sides alike.
//
// The floor is the least any controller can do: a watch on ConfigMaps and,
// for each event, merge patches of the Deployments it already knows use the
// ConfigMap, with ripple's client limits and parallelism.
package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/kubernetes"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// Config is one bench run.
type Config struct {
	// RippleBin is the built ripple binary.
	RippleBin string
	// Scenarios to run, from "abcdefgp"; e implies b, f implies b.
	Scenarios string
	// Edits per latency phase, at least 30 for the report; FanoutEdits for (d).
	Edits, FanoutEdits int
	// Floor is the floor's client: no client-side rate limit, and enough
	// parallel patches to find the API server's limit.
	Floor FloorOptions
	// RippleEnv is added to ripple's environment, e.g. GODEBUG=gctrace=1.
	RippleEnv []string
	// ProfileDir, with RippleBin a ripple-profiled, collects CPU, heap and
	// allocs profiles of each measured phase under this directory.
	ProfileDir string
	// MemProbe, if set, is a built test/bench/cmd/memprobe that (c) also
	// runs, to show the peak RSS of other cache designs on the same objects.
	MemProbe string
	// Keep keeps the control plane's directory (logs, audit log, ripple's
	// logs) also after a successful run.
	Keep bool
	// Logf reports progress.
	Logf func(format string, args ...any)
}

// DefaultFloor is the API server's limit, not ripple's: no client-side
// rate limit (a negative QPS turns client-go's token bucket off), and 16
// parallel patches, past which the floor does not get faster on this
// kind of machine.
var DefaultFloor = FloorOptions{QPS: -1, Workers: 16}

// DefaultDebounce is ripple's default --debounce.
const DefaultDebounce = time.Second

// Bench runs the scenarios on one control plane.
type Bench struct {
	cfg     Config
	cluster *Cluster
	cs      kubernetes.Interface
	report  *Report
	dir     string
	nsSeq   int
}

// Run starts a control plane, runs the scenarios and returns the report.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	ctrllog.SetLogger(logr.Discard())
	if cfg.Floor.Workers == 0 {
		cfg.Floor = DefaultFloor
	}
	rep := &Report{Machine: Machine(), Started: time.Now()}
	cl, err := StartCluster()
	if err != nil {
		return rep, err
	}
	b := &Bench{cfg: cfg, cluster: cl, report: rep, dir: cl.Dir}
	defer func() {
		if err := cl.Stop(); err != nil {
			cfg.Logf("stopping the control plane: %v", err)
		}
		rep.Duration = time.Since(rep.Started)
	}()
	cfg.Logf("control plane up; logs, audit log and ripple logs in %s", cl.Dir)
	if b.cs, err = cl.Clientset(); err != nil {
		return rep, err
	}
	err = b.run(ctx)
	rep.note("load average at the end: %s", LoadAverage())
	if err == nil && !cfg.Keep {
		_ = cl.Cleanup()
	} else {
		cfg.Logf("kept %s for inspection", cl.Dir)
	}
	return rep, err
}

func has(s string, c byte) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return true
		}
	}
	return false
}

func (b *Bench) run(ctx context.Context) error {
	s := b.cfg.Scenarios
	var a *latencyResult
	var err error
	if has(s, 'a') {
		if a, err = b.latency(ctx, "a", 1000, 100, nil); err != nil {
			return fmt.Errorf("scenario a: %w", err)
		}
	}
	if has(s, 'b') || has(s, 'e') || has(s, 'f') {
		if _, err = b.latency(ctx, "b", 5000, 500, a); err != nil {
			return fmt.Errorf("scenario b: %w", err)
		}
	}
	if has(s, 'd') {
		if err := b.fanout(ctx); err != nil {
			return fmt.Errorf("scenario d: %w", err)
		}
	}
	if has(s, 'p') {
		if err := b.pacing(ctx); err != nil {
			return fmt.Errorf("scenario p: %w", err)
		}
	}
	if has(s, 'c') {
		if err := b.memory(ctx); err != nil {
			return fmt.Errorf("scenario c: %w", err)
		}
	}
	if has(s, 'g') {
		if err := b.scale(ctx, a); err != nil {
			return fmt.Errorf("scenario g: %w", err)
		}
	}
	return nil
}

// env is one scenario's namespace, objects and watch.
type env struct {
	layout  Layout
	users   map[string][]string
	tracker *Tracker
	cancel  context.CancelFunc
}

func (b *Bench) setup(ctx context.Context, l Layout) (*env, error) {
	b.nsSeq++
	l.Namespace = fmt.Sprintf("bench-%d", b.nsSeq)
	start := time.Now()
	if err := l.Create(ctx, b.cs); err != nil {
		return nil, err
	}
	b.cfg.Logf("created %d Deployments, %d ConfigMaps, %d unused ConfigMaps and %d unused Secrets in %s in %s",
		l.Workloads, l.ConfigMaps, l.UnusedConfigMaps, l.UnusedSecrets, l.Namespace, time.Since(start).Round(time.Millisecond))
	tctx, cancel := context.WithCancel(ctx)
	t, err := StartTracker(tctx, b.cs, l.Namespace, DigestAnnotation, FloorAnnotation)
	if err != nil {
		cancel()
		return nil, err
	}
	return &env{layout: l, users: l.Users(), tracker: t, cancel: cancel}, nil
}

func (b *Bench) teardown(ctx context.Context, e *env) error {
	e.cancel()
	return e.layout.Delete(ctx, b.cs)
}

// editTargets lists n ConfigMaps to edit, cycling through them.
func editTargets(n, configMaps int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = cmName(i % configMaps)
	}
	return out
}

// floor measures the floor's latencies for the edits and returns them
// with the bench's own CPU time while they ran.
func (b *Bench) floor(ctx context.Context, e *env, cms []string, settle time.Duration, o FloorOptions) ([]Edit, time.Duration, error) {
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	f, err := StartFloor(fctx, b.cluster.RippleConfig, b.cs, e.layout.Namespace, e.users, o)
	if err != nil {
		return nil, 0, err
	}
	ed := &Editor{CS: b.cs, Tracker: e.tracker, Namespace: e.layout.Namespace, Users: e.users, Key: FloorAnnotation,
		Timeout: 5 * time.Minute, Settle: settle}
	before := selfCPU()
	edits, err := ed.Run(ctx, cms)
	cpu := selfCPU() - before
	if err == nil {
		err = f.Err()
	}
	if err == nil {
		if msg := Correctness(edits); msg != "" {
			err = fmt.Errorf("the floor did not roll exactly the affected workloads: %s", msg)
		}
	}
	first, last := Latencies(edits)
	b.cfg.Logf("floor (events %t): %d edits, first p50 %s, last p50 %s p99 %s", o.Events, len(edits), ms(first.P50), ms(last.P50), ms(last.P99))
	return edits, cpu, err
}

// floorAgain runs the floor's edits once more, after ripple's, and returns
// them pooled with before, its edits before ripple's: each ratio to the
// floor compares ripple with the floor on both sides of it. The API server
// drifts over a scenario, whose ripple phase follows ripple's start, a
// write to every workload: over six runs the floor's first workload p50
// after ripple's phase was slower than before it in four of (g) and three
// of three of (b), and faster in four of four of (a).
func (b *Bench) floorAgain(ctx context.Context, scen string, e *env, cms []string, settle time.Duration, before []Edit) ([]Edit, error) {
	after, _, err := b.floor(ctx, e, cms, settle, b.cfg.Floor)
	if err != nil {
		return nil, err
	}
	all := append(slices.Clip(before), after...)
	bf, bl := Latencies(before)
	af, al := Latencies(after)
	pf, pl := Latencies(all)
	b.report.note("%s: the floor's first and last workload p50, pooled in the rows: %s and %s before ripple's phase, %s and %s after, %s and %s pooled",
		scen, ms(bf.P50), ms(bl.P50), ms(af.P50), ms(al.P50), ms(pf.P50), ms(pl.P50))
	return all, nil
}

// selfCPU is the bench's own CPU time so far.
func selfCPU() time.Duration {
	p, _ := readProc(os.Getpid())
	return p.CPU
}

// startRipple starts ripple and waits until it is ready, has recorded every
// Deployment and is idle.
func (b *Bench) startRipple(ctx context.Context, e *env, name string, args ...string) (*Ripple, error) {
	r := &Ripple{Bin: b.cfg.RippleBin, Kubeconfig: b.cluster.RippleKubeconfig,
		LogPath: filepath.Join(b.dir, "ripple-"+e.layout.Namespace+"-"+name+".log"), Args: args,
		Env: append([]string(nil), b.cfg.RippleEnv...)}
	if b.cfg.ProfileDir != "" {
		r.Env = append(r.Env, "RIPPLE_PROFILE_DIR="+filepath.Join(b.cfg.ProfileDir, e.layout.Namespace+"-"+name))
	}
	start := time.Now()
	if err := r.Start(ctx); err != nil {
		return nil, err
	}
	ready := time.Since(start)
	wctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	if err := e.tracker.WaitRecorded(wctx, e.layout.Workloads); err != nil {
		return nil, errors.Join(err, r.Stop())
	}
	recorded := time.Since(start)
	if err := b.idle(wctx, e, r, time.Second); err != nil {
		return nil, errors.Join(err, r.Stop())
	}
	b.cfg.Logf("ripple %v: ready after %s, all recorded after %s, idle after %s", args, ready.Round(time.Millisecond),
		recorded.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	return r, nil
}

// idle waits until ripple's work queues are empty, it reconciled every
// Deployment at least once since it started, and the Deployments have been
// quiet for quiet.
//
// It scrapes ripple's metrics only once the Deployments are quiet, since a
// scrape costs ripple CPU time (about a millisecond).
func (b *Bench) idle(ctx context.Context, e *env, r *Ripple, quiet time.Duration) error {
	for {
		if q, _ := e.tracker.Quiet(); q >= quiet {
			m, err := r.Metrics(ctx)
			if err == nil {
				depth := m.Sum("workqueue_depth", nil)
				reconciled := m.Sum("controller_runtime_reconcile_total", map[string]string{"controller": "deployments"})
				if depth == 0 && reconciled >= float64(e.layout.Workloads) {
					return nil
				}
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for ripple to be idle: %w", ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (b *Bench) rippleEditor(e *env, r *Ripple, settle time.Duration) *Editor {
	return &Editor{CS: b.cs, Tracker: e.tracker, Namespace: e.layout.Namespace, Users: e.users, Key: DigestAnnotation,
		Timeout: 5 * time.Minute, Settle: settle,
		Idle: func(ctx context.Context) error { return b.idle(ctx, e, r, settle) }}
}

// profiled runs the edits between the signals that make ripple-profiled
// profile them (harmless to bin/ripple, which is not sent them).
func (b *Bench) profiled(ctx context.Context, r *Ripple, ed *Editor, cms []string) ([]Edit, error) {
	if b.cfg.ProfileDir == "" {
		return ed.Run(ctx, cms)
	}
	r.Signal(syscall.SIGUSR1)
	edits, err := ed.Run(ctx, cms)
	return edits, errors.Join(err, r.StopProfile(ctx))
}

// againstA adds the row comparing a latency of ripple's with its own at
// W=1,000, in (a).
func (b *Bench) againstA(scen, what string, now, alone time.Duration) {
	rt := ratio(now, alone)
	b.report.add(Row{Scenario: scen, Measure: what, Ripple: ms(now), Floor: "(a) " + ms(alone),
		Rate: rate(rt, 1.2), Target: "<= 1.2x (a)", Pass: pass(rt <= 1.2)})
}

// floorAgainstA notes how the floor's own first workload moved from (a)'s
// scale to this one: the API server's share of the rows against (a).
func (b *Bench) floorAgainstA(scen string, floorFirst time.Duration, a *latencyResult) {
	b.report.note("%s: the floor's own first workload p50, %s, is %.2fx its %s in (a)", scen, ms(floorFirst),
		ratio(floorFirst, a.floorFirst.P50), ms(a.floorFirst.P50))
}

// latencyResult is what (b) compares with (a): ripple's latencies, and the
// floor's first workload.
type latencyResult struct{ first, last, floorFirst Stats }

func (b *Bench) latency(ctx context.Context, id string, w, c int, base *latencyResult) (*latencyResult, error) {
	e, err := b.setup(ctx, Layout{Workloads: w, ConfigMaps: c})
	if err != nil {
		return nil, err
	}
	scen := fmt.Sprintf("(%s) W=%d C=%d", id, w, c)
	cms := editTargets(b.cfg.Edits, c)
	const settle = 300 * time.Millisecond

	// (e) also compares ripple's CPU with a floor that writes ripple's
	// Event on each rollout too; its latencies are not the floor's. It
	// runs first, so that the floor's latencies and ripple's are measured
	// one after the other.
	var cpus floorCPUs
	if id == "b" {
		withEvents := b.cfg.Floor
		withEvents.Events = true
		if _, cpus.withEvents, err = b.floor(ctx, e, cms, settle, withEvents); err != nil {
			return nil, err
		}
	}
	floorMark := b.cluster.AuditMark()
	floorEdits, floorCPU, err := b.floor(ctx, e, cms, settle, b.cfg.Floor)
	if err != nil {
		return nil, err
	}
	cpus.patches = floorCPU

	// debounce 0, with the API load and CPU of (e) measured around the edits.
	r, err := b.startRipple(ctx, e, "debounce0", "--debounce=0")
	if err != nil {
		return nil, err
	}
	if id == "b" {
		if err := b.restingCPU(ctx, r); err != nil {
			return nil, errors.Join(err, r.Stop())
		}
	}
	load := b.beginLoad(ctx, r)
	ed := b.rippleEditor(e, r, settle)
	if id == "b" {
		// No scrapes of ripple's metrics between the edits of (e): they
		// would count in ripple's CPU time. The Deployments staying quiet
		// for the settle time stands for idle.
		ed.Idle = nil
	}
	edits, err := b.profiled(ctx, r, ed, cms)
	if err != nil {
		return nil, errors.Join(err, r.Stop())
	}
	if id == "b" {
		if err := b.endLoad(ctx, r, load, edits, cpus); err != nil {
			return nil, errors.Join(err, r.Stop())
		}
	}
	b.noteProc(scen+" --debounce=0", r)
	if err := r.Stop(); err != nil {
		return nil, err
	}
	// ripple's next start rolls what the floor edits now, before its own
	// edits begin (startRipple waits until it is idle).
	if floorEdits, err = b.floorAgain(ctx, scen, e, cms, settle, floorEdits); err != nil {
		return nil, err
	}
	ff, fl := Latencies(floorEdits)
	rf, rl := Latencies(edits)
	b.cfg.Logf("ripple --debounce=0: first p50 %s, last p50 %s p99 %s", ms(rf.P50), ms(rl.P50), ms(rl.P99))
	b.correctness(scen+" --debounce=0", edits)
	// The same target as at W=20,000 (scale.go): issue 17 asks it at
	// every scale.
	b.ratioRow(scen+" --debounce=0", "first workload p50", rf.P50, ff.P50, 1.2)
	b.firstPatchRows(scen+" --debounce=0", floorMark, floorEdits, load.audit, edits)
	b.ratioRow(scen+" --debounce=0", "last workload p50", rl.P50, fl.P50, 2)
	b.ratioRow(scen+" --debounce=0", "last workload p99", rl.P99, fl.P99, 3)
	if base != nil {
		b.againstA(scen+" --debounce=0", "first workload p50 vs (a)", rf.P50, base.first.P50)
		b.againstA(scen+" --debounce=0", "last workload p50 vs (a)", rl.P50, base.last.P50)
		b.floorAgainstA(scen, ff.P50, base)
	}

	// The default debounce.
	r, err = b.startRipple(ctx, e, "default")
	if err != nil {
		return nil, err
	}
	edits, err = b.profiled(ctx, r, b.rippleEditor(e, r, settle), cms)
	if err != nil {
		return nil, errors.Join(err, r.Stop())
	}
	b.noteProc(scen+" default flags", r)
	df, dl := Latencies(edits)
	b.cfg.Logf("ripple default debounce: first p50 %s, last p50 %s p99 %s", ms(df.P50), ms(dl.P50), ms(dl.P99))
	b.correctness(scen+" default flags", edits)
	b.windowRow(scen+" default flags", "first workload p50", df.P50, ff.P50)
	b.windowRow(scen+" default flags", "last workload p50", dl.P50, fl.P50)

	if id == "b" && (has(b.cfg.Scenarios, 'f') || has(b.cfg.Scenarios, 'b')) {
		if err := b.restart(ctx, e, r, cms); err != nil {
			return nil, err
		}
	} else if err := r.Stop(); err != nil {
		return nil, err
	}
	if err := b.teardown(ctx, e); err != nil {
		return nil, err
	}
	return &latencyResult{first: rf, last: rl, floorFirst: ff}, nil
}

func (b *Bench) correctness(scen string, edits []Edit) {
	msg := Correctness(edits)
	val := fmt.Sprintf("%d edits, %d rolled", len(edits), Affected(edits))
	if msg != "" {
		val = msg
	}
	b.report.add(Row{Scenario: scen, Measure: "affected rolled once, nothing else", Ripple: val, Target: "exact", Pass: pass(msg == "")})
}

func (b *Bench) ratioRow(scen, what string, rp, fl time.Duration, most float64) {
	rt := ratio(rp, fl)
	b.report.add(Row{Scenario: scen, Measure: what, Ripple: ms(rp), Floor: ms(fl), Rate: rate(rt, most),
		Target: fmt.Sprintf("<= %gx", most), Pass: pass(fl > 0 && rt <= most)})
}

// firstPatchRows splits the first workload's latency, ripple's and the
// floor's, where the API server received the first patch (audit log):
// before, the watch event and the controller's work; after, the API
// server's, which shares the machine with the controller's handling of the
// edit's other rollouts.
func (b *Bench) firstPatchRows(scen string, floorMark AuditOffset, floorEdits []Edit, rippleMark AuditOffset, edits []Edit) {
	fr, fa, err := b.cluster.FirstPatches(floorMark, true, floorEdits)
	if err != nil {
		b.cfg.Logf("reading the audit log: %v", err)
		return
	}
	rr, ra, err := b.cluster.FirstPatches(rippleMark, false, edits)
	if err != nil {
		b.cfg.Logf("reading the audit log: %v", err)
		return
	}
	if fr.N < len(floorEdits) || rr.N < len(edits) {
		b.report.note("%s: the audit log has a first patch for %d of the floor's %d edits and %d of ripple's %d",
			scen, fr.N, len(floorEdits), rr.N, len(edits))
	}
	for _, r := range []struct {
		what   string
		rp, fl time.Duration
	}{
		{"first patch p50: edit until the API server received it", rr.P50, fr.P50},
		{"first patch p50: received until answered", ra.P50, fa.P50},
	} {
		b.report.add(Row{Scenario: scen, Measure: r.what, Ripple: ms(r.rp), Floor: ms(r.fl), Rate: fmt.Sprintf("%.2fx", ratio(r.rp, r.fl)), Target: "-"})
	}
}

// windowRow checks a latency under the default debounce against the window
// plus twice the floor.
func (b *Bench) windowRow(scen, what string, rp, fl time.Duration) {
	limit := DefaultDebounce + 2*fl
	b.report.add(Row{Scenario: scen, Measure: what, Ripple: ms(rp), Floor: ms(fl),
		Rate:   fmt.Sprintf("%.2fx", ratio(rp-DefaultDebounce, fl)) + " after 1s",
		Target: "<= 1s + 2x floor = " + ms(limit), Pass: pass(fl > 0 && rp <= limit)})
}

func (b *Bench) noteProc(what string, r *Ripple) {
	p, err := r.Proc()
	if err != nil {
		b.cfg.Logf("reading /proc of ripple: %v", err)
		return
	}
	b.report.note("%s: ripple VmHWM %s, VmRSS %s, CPU %s since start", what, mib(p.HWM), mib(p.RSS), p.CPU.Round(time.Millisecond))
}

// restingCPU notes ripple's CPU time while nothing changes, which the CPU
// per edit of (e) includes for the time the edits take. With -profile-dir
// it is profiled too.
func (b *Bench) restingCPU(ctx context.Context, r *Ripple) error {
	// /proc counts CPU in 10 ms ticks: 10 s tell 1 ms a second.
	span := 10 * time.Second
	if b.cfg.ProfileDir != "" {
		// Enough samples to tell where a few milliseconds a second go.
		span = 30 * time.Second
	}
	before, err := r.Proc()
	if err != nil {
		return err
	}
	if b.cfg.ProfileDir != "" {
		r.Signal(syscall.SIGUSR1)
	}
	time.Sleep(span)
	after, err := r.Proc()
	if err != nil {
		return err
	}
	if b.cfg.ProfileDir != "" {
		if err := r.StopProfile(ctx); err != nil {
			return err
		}
	}
	b.report.note("(e) ripple's CPU at rest, before the edits: %s per second", ms((after.CPU-before.CPU)*time.Second/span))
	return nil
}

// loadMark is the state before the edits of (e).
type loadMark struct {
	audit     AuditOffset
	apiserver map[string]float64
	client    map[string]float64
	heap      Heap
	proc      ProcStats
	// bench is the bench's own CPU time.
	bench time.Duration
}

func (b *Bench) beginLoad(ctx context.Context, r *Ripple) loadMark {
	m := loadMark{audit: b.cluster.AuditMark()}
	m.apiserver, _ = APIServerRequests(ctx, b.cs)
	if s, err := r.Metrics(ctx); err == nil {
		m.client = s.Counts("rest_client_requests_total", "method")
		m.heap = HeapOf(s)
	}
	m.proc, _ = r.Proc()
	m.bench = selfCPU()
	return m
}

// floorCPUs are the bench's CPU time over the floor's edits of the same
// ConfigMaps, without and with an Event per rollout: less the bench's own
// over ripple's (its edits and its watch of the Deployments), each is a
// floor's CPU time.
type floorCPUs struct{ patches, withEvents time.Duration }

// endLoad adds the rows of (e): ripple's requests and CPU time over the
// edits since m, against the floor's.
func (b *Bench) endLoad(ctx context.Context, r *Ripple, m loadMark, edits []Edit, floorCPU floorCPUs) error {
	proc, err := r.Proc()
	if err != nil {
		return err
	}
	benchCPU := selfCPU() - m.bench
	// Give the audit log a moment for requests that ended with the edits.
	time.Sleep(500 * time.Millisecond)
	audit, err := b.cluster.AuditCounts(m.audit)
	if err != nil {
		return err
	}
	apis, err := APIServerRequests(ctx, b.cs)
	if err != nil {
		return err
	}
	s, err := r.Metrics(ctx)
	if err != nil {
		return err
	}
	client := Diff(m.client, s.Counts("rest_client_requests_total", "method"))
	server := Diff(m.apiserver, apis)
	n := len(edits)
	affected := Affected(edits)
	const scen = "(e) under (b) --debounce=0"
	patches := audit["patch deployments"]
	b.report.add(Row{Scenario: scen, Measure: "PATCH deployments (audit, ripple's user)", Ripple: fmt.Sprintf("%.0f", patches),
		Target: fmt.Sprintf("= %d affected", affected), Pass: pass(patches == float64(affected))})
	var lists, gets float64
	for k, v := range audit {
		switch {
		case verbOf(k) == "list":
			lists += v
		case k == "get deployments" || k == "get statefulsets" || k == "get daemonsets":
			gets += v
		}
	}
	b.report.add(Row{Scenario: scen, Measure: "LISTs (audit)", Ripple: fmt.Sprintf("%.0f", lists), Target: "0", Pass: pass(lists == 0)})
	b.report.add(Row{Scenario: scen, Measure: "GETs of workloads (audit)", Ripple: fmt.Sprintf("%.0f", gets), Target: "0", Pass: pass(gets == 0)})
	b.report.add(Row{Scenario: scen, Measure: "PATCH deployments (apiserver_request_total)",
		Ripple: fmt.Sprintf("%.0f", server["PATCH deployments"]), Target: fmt.Sprintf("= %d affected", affected),
		Pass: pass(server["PATCH deployments"] == float64(affected))})
	b.report.add(Row{Scenario: scen, Measure: "PATCHes (ripple rest_client_requests_total)",
		Ripple: fmt.Sprintf("%.0f", client["PATCH"]), Target: fmt.Sprintf("= %d affected", affected),
		Pass: pass(client["PATCH"] == float64(affected))})
	cpu := (proc.CPU - m.proc.CPU) / time.Duration(max(n, 1))
	floor := max(floorCPU.patches-benchCPU, 0) / time.Duration(max(n, 1))
	withEvents := max(floorCPU.withEvents-benchCPU, 0) / time.Duration(max(n, 1))
	b.report.add(Row{Scenario: scen, Measure: "ripple CPU per edit (utime+stime)", Ripple: ms(cpu), Floor: ms(floor),
		Rate: fmt.Sprintf("%.2fx", ratio(cpu, floor)), Target: "<= 5ms", Pass: pass(cpu <= 5*time.Millisecond)})
	b.report.add(Row{Scenario: scen, Measure: "ripple CPU per edit, against a floor that also writes ripple's Event per rollout", Ripple: ms(cpu),
		Floor: ms(withEvents), Rate: fmt.Sprintf("%.2fx", ratio(cpu, withEvents)), Target: "-"})
	kib, gcs := m.heap.PerEdit(HeapOf(s), n)
	b.report.add(Row{Scenario: scen, Measure: "ripple heap allocated per edit, and collections per edit (go_memstats, go_gc)",
		Ripple: fmt.Sprintf("%.0f KiB, %.3f", kib, gcs), Target: "-"})
	b.report.note("(e) the floor's CPU per edit is the bench's own CPU time over the floor's edits (%s; %s with the Events) less that over ripple's (%s), divided by the %d edits",
		ms(floorCPU.patches), ms(floorCPU.withEvents), ms(benchCPU), n)
	b.report.note("(e) %d edits, %d affected workloads; ripple's requests in the audit log: %s", n, affected, FormatCounts(audit))
	b.report.note("(e) apiserver_request_total over the edits, all clients (the bench's edits included): %s", FormatCounts(server))
	b.report.note("(e) ripple's rest_client_requests_total over the edits: %s", FormatCounts(client))
	return nil
}

// restart is (f): ripple stopped and started again with nothing changed
// writes nothing; one ConfigMap edited while it was down rolls exactly the
// workloads that use it, once.
func (b *Bench) restart(ctx context.Context, e *env, r *Ripple, cms []string) error {
	const scen = "(f) restart under (b)"
	if err := r.Stop(); err != nil {
		return err
	}
	mark := b.cluster.AuditMark()
	rolls := e.tracker.Mark()
	start := time.Now()
	r, err := b.startRipple(ctx, e, "restart")
	if err != nil {
		return err
	}
	converged := time.Since(start)
	time.Sleep(500 * time.Millisecond)
	audit, err := b.cluster.AuditCounts(mark)
	if err != nil {
		return errors.Join(err, r.Stop())
	}
	writes := Writes(audit)
	b.report.add(Row{Scenario: scen, Measure: "writes after a restart, nothing changed", Ripple: fmt.Sprintf("%.0f (idle after %s)", writes, converged.Round(time.Millisecond)),
		Target: "0", Pass: pass(writes == 0 && len(e.tracker.RollsSince(rolls)) == 0)})
	b.report.note("(f) requests of a restart with nothing changed: %s", FormatCounts(audit))
	if err := r.Stop(); err != nil {
		return err
	}

	cm := cmName(len(cms) % e.layout.ConfigMaps)
	rolls = e.tracker.Mark()
	ed := b.rippleEditor(e, nil, 0)
	t0, err := ed.EditConfigMap(ctx, cm)
	if err != nil {
		return err
	}
	r, err = b.startRipple(ctx, e, "edited-while-down")
	if err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	_, werr := e.tracker.WaitRolled(wctx, rolls, DigestAnnotation, e.users[cm])
	cancel()
	if werr == nil {
		werr = b.idle(ctx, e, r, time.Second)
	}
	edit := Judge(cm, t0, e.users[cm], e.tracker.RollsSince(rolls), DigestAnnotation)
	msg := Correctness([]Edit{edit})
	val := fmt.Sprintf("%d of %d rolled once, nothing else", edit.Affected-len(edit.Missing), edit.Affected)
	if msg != "" {
		val = msg
	}
	b.report.add(Row{Scenario: scen, Measure: "edited while down: affected rolled once, nothing else", Ripple: val,
		Target: "exact", Pass: pass(msg == "" && werr == nil)})
	return r.Stop()
}

// fanout is (d): one ConfigMap used by 1,000 Deployments, default flags
// but --debounce=0, so that the time is ripple's work, not its window.
func (b *Bench) fanout(ctx context.Context) error {
	const scen = "(d) 1 ConfigMap, 1,000 users, --debounce=0"
	e, err := b.setup(ctx, Layout{Workloads: 1000, ConfigMaps: 1})
	if err != nil {
		return err
	}
	cms := editTargets(b.cfg.FanoutEdits, 1)
	// Long enough for the API server to be idle again between edits, for
	// the floor and ripple alike.
	const settle = 2500 * time.Millisecond
	floorEdits, _, err := b.floor(ctx, e, cms, settle, b.cfg.Floor)
	if err != nil {
		return err
	}
	r, err := b.startRipple(ctx, e, "debounce0", "--debounce=0")
	if err != nil {
		return err
	}
	edits, err := b.profiled(ctx, r, b.rippleEditor(e, r, settle), cms)
	if err != nil {
		return errors.Join(err, r.Stop())
	}
	b.noteProc(scen, r)
	if err := r.Stop(); err != nil {
		return err
	}
	if floorEdits, err = b.floorAgain(ctx, scen, e, cms, settle, floorEdits); err != nil {
		return err
	}
	_, fl := Latencies(floorEdits)
	_, rl := Latencies(edits)
	b.cfg.Logf("fan-out: floor all rolled p50 %s, ripple %s", ms(fl.P50), ms(rl.P50))
	b.correctness(scen, edits)
	b.ratioRow(scen, "all 1,000 rolled, p50", rl.P50, fl.P50, 1.5)
	b.ratioRow(scen, "all 1,000 rolled, max", rl.Max, fl.Max, 1.5)
	return b.teardown(ctx, e)
}

// memory is (c): ripple's peak RSS with many unused ConfigMaps and Secrets.
func (b *Bench) memory(ctx context.Context) error {
	const scen = "(c) W=100 C=10 + 5,000 unused 10KiB ConfigMaps + 2,000 unused 4KiB Secrets"
	// ripple's own floor: its peak RSS in a cluster with nothing to track.
	empty, err := b.setup(ctx, Layout{})
	if err != nil {
		return err
	}
	r, err := b.startRipple(ctx, empty, "empty")
	if err != nil {
		return err
	}
	base, err := r.Proc()
	if err = errors.Join(err, r.Stop(), b.teardown(ctx, empty)); err != nil {
		return err
	}
	b.report.add(Row{Scenario: "(c) reference: an empty cluster", Measure: "ripple peak RSS (VmHWM) once ready", Ripple: mib(base.HWM)})
	b.report.note("(c) in an empty cluster: VmHWM %s, VmRSS %s = RssAnon %s (heap, stacks) + RssFile %s (the binary)", mib(base.HWM), mib(base.RSS), mib(base.Anon), mib(base.File))

	e, err := b.setup(ctx, Layout{Workloads: 100, ConfigMaps: 10,
		UnusedConfigMaps: 5000, UnusedConfigMapBytes: 10 << 10, UnusedSecrets: 2000, UnusedSecretBytes: 4 << 10})
	if err != nil {
		return err
	}
	r, err = b.startRipple(ctx, e, "default")
	if err != nil {
		return err
	}
	if b.cfg.ProfileDir != "" {
		r.Signal(syscall.SIGUSR2) // heap-0 and allocs-0: what startup allocated and what it keeps
	}
	atReady, err := r.Proc()
	if err != nil {
		return errors.Join(err, r.Stop())
	}
	edits, err := b.profiled(ctx, r, b.rippleEditor(e, r, 300*time.Millisecond), editTargets(b.cfg.Edits, 10))
	if err != nil {
		return errors.Join(err, r.Stop())
	}
	after, err := r.Proc()
	if err != nil {
		return errors.Join(err, r.Stop())
	}
	if err := r.Stop(); err != nil {
		return err
	}
	b.correctness(scen, edits)
	b.report.add(Row{Scenario: scen, Measure: "ripple peak RSS (VmHWM) after the edits", Ripple: mib(after.HWM),
		Target: "<= 40MiB", Pass: pass(after.HWM <= 40<<20)})
	b.report.note("(c) VmHWM %s and VmRSS %s (RssAnon %s, RssFile %s) once ready and idle; VmRSS %s after %d edits", mib(atReady.HWM), mib(atReady.RSS), mib(atReady.Anon), mib(atReady.File), mib(after.RSS), len(edits))
	if b.cfg.MemProbe != "" {
		for _, v := range []struct{ mode, env string }{
			{"typed", ""}, {"meta", ""}, {"typed", "GOMEMLIMIT=12MiB"}, {"meta", "GOMEMLIMIT=12MiB"},
		} {
			cmd := exec.CommandContext(ctx, b.cfg.MemProbe, "-kubeconfig", b.cluster.RippleKubeconfig, "-mode", v.mode)
			cmd.Env = append(os.Environ(), v.env)
			out, err := cmd.CombinedOutput()
			if err != nil {
				return fmt.Errorf("memprobe: %w: %s", err, out)
			}
			f := strings.Fields(string(out))
			if len(f) < 6 {
				return fmt.Errorf("memprobe printed %q", out)
			}
			kib := func(s string) int64 { n, _ := strconv.ParseInt(s, 10, 64); return n << 10 }
			b.report.add(Row{Scenario: "(c) memprobe, a cache alone: " + v.mode + " " + v.env, Measure: "peak RSS (VmHWM) once synced",
				Ripple: fmt.Sprintf("%s (anon %s, file %s)", mib(kib(f[1])), mib(kib(f[3])), mib(kib(f[4]))), Target: "<= 40MiB", Pass: nil})
		}
	}
	return b.teardown(ctx, e)
}

// RippleBinary returns path if it names an executable, else an error that
// says how to build it.
func RippleBinary(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(abs)
	if err != nil || fi.Mode().Perm()&0o111 == 0 {
		return "", fmt.Errorf("no ripple binary at %s: run `make build`", abs)
	}
	return abs, nil
}
