package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Ripple is the built ripple binary run as a child process.
type Ripple struct {
	Bin        string
	Kubeconfig string
	LogPath    string
	// Args are added to --kubeconfig and the metrics and probe addresses.
	Args []string
	// Env is added to the bench's environment.
	Env []string

	MetricsAddr, ProbeAddr string

	cmd    *exec.Cmd
	exited chan struct{}
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// Start starts ripple and waits until /readyz answers 200.
func (r *Ripple) Start(ctx context.Context) error {
	var err error
	if r.MetricsAddr, err = freeAddr(); err != nil {
		return err
	}
	if r.ProbeAddr, err = freeAddr(); err != nil {
		return err
	}
	args := append([]string{
		"--kubeconfig=" + r.Kubeconfig,
		"--metrics-bind-address=" + r.MetricsAddr,
		"--health-probe-bind-address=" + r.ProbeAddr,
	}, r.Args...)
	log, err := os.OpenFile(r.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer log.Close()
	fmt.Fprintf(log, "=== %s %s\n", r.Bin, strings.Join(args, " "))
	r.cmd = exec.Command(r.Bin, args...)
	r.cmd.Stdout, r.cmd.Stderr = log, log
	r.cmd.Env = append(os.Environ(), r.Env...)
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := r.cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", r.Bin, err)
	}
	r.exited = make(chan struct{})
	go func() { _ = r.cmd.Wait(); close(r.exited) }()
	deadline := time.Now().Add(5 * time.Minute)
	for {
		resp, err := http.Get("http://" + r.ProbeAddr + "/readyz")
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-r.exited:
			return fmt.Errorf("ripple exited before it was ready; log in %s", r.LogPath)
		case <-ctx.Done():
			return errors.Join(ctx.Err(), r.Stop())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return errors.Join(fmt.Errorf("ripple not ready after 5 minutes; log in %s", r.LogPath), r.Stop())
		}
	}
}

// Signal sends sig to ripple, e.g. to start or stop ripple-profiled's profiles.
func (r *Ripple) Signal(sig os.Signal) {
	if r.cmd != nil && r.cmd.Process != nil {
		_ = r.cmd.Process.Signal(sig)
	}
}

// StopProfile ends ripple-profiled's CPU profile and waits until it has
// written its allocs profile, the last of the three: stopping ripple
// sooner leaves them empty.
func (r *Ripple) StopProfile(ctx context.Context) error {
	var dir string
	for _, kv := range r.Env {
		if v, ok := strings.CutPrefix(kv, "RIPPLE_PROFILE_DIR="); ok {
			dir = v
		}
	}
	before, _ := filepath.Glob(filepath.Join(dir, "allocs-*.pprof"))
	r.Signal(syscall.SIGUSR2)
	if dir == "" {
		return nil
	}
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		after, _ := filepath.Glob(filepath.Join(dir, "allocs-*.pprof"))
		for _, f := range after {
			if fi, err := os.Stat(f); err == nil && fi.Size() > 0 && !slices.Contains(before, f) {
				return nil
			}
		}
		select {
		case <-wctx.Done():
			return fmt.Errorf("waiting for ripple's profiles in %s: %w", dir, wctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Pid is the process id of the running ripple.
func (r *Ripple) Pid() int { return r.cmd.Process.Pid }

// Stop sends SIGTERM and waits for ripple to exit, killing it after 30s.
func (r *Ripple) Stop() error {
	if r.cmd == nil || r.cmd.Process == nil {
		return nil
	}
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.exited:
	case <-time.After(30 * time.Second):
		_ = r.cmd.Process.Kill()
		<-r.exited
	}
	r.cmd = nil
	return nil
}

// Metrics scrapes ripple's metrics endpoint.
func (r *Ripple) Metrics(ctx context.Context) (Samples, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+r.MetricsAddr+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return ParseSamples(resp.Body)
}

// ProcStats is what /proc says of a process.
type ProcStats struct {
	// CPU is User plus System, the process's CPU time in user space
	// and in the kernel.
	CPU, User, System time.Duration
	// HWM is the peak resident set size, RSS the current one, of which
	// Anon is anonymous memory (heap, stacks) and File mapped files (the
	// binary's code and data).
	HWM, RSS, Anon, File int64
}

// Proc reads ripple's CPU time and memory from /proc.
func (r *Ripple) Proc() (ProcStats, error) { return readProc(r.Pid()) }

// clockTicks is USER_HZ, 100 on every Linux platform Go supports.
const clockTicks = 100

func readProc(pid int) (ProcStats, error) {
	var p ProcStats
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return p, err
	}
	// Fields after the command, which is in parentheses and may hold spaces.
	rest := string(stat[strings.LastIndexByte(string(stat), ')')+2:])
	f := strings.Fields(rest)
	// utime and stime are fields 14 and 15 of the whole line, 12 and 13 here.
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	p.User, p.System = time.Duration(ut)*time.Second/clockTicks, time.Duration(st)*time.Second/clockTicks
	p.CPU = p.User + p.System
	status, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return p, err
	}
	defer status.Close()
	sc := bufio.NewScanner(status)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		switch k {
		case "VmHWM":
			p.HWM = kb << 10
		case "VmRSS":
			p.RSS = kb << 10
		case "RssAnon":
			p.Anon = kb << 10
		case "RssFile":
			p.File = kb << 10
		}
	}
	return p, sc.Err()
}
