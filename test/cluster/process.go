package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// stopGrace is how long a component gets to exit after SIGTERM before it is
// killed; on loopback a clean exit takes a few seconds at most.
const stopGrace = 10 * time.Second

// Process is one component of a Cluster run as a child process. It can be
// stopped and started again any number of times with the same arguments, so
// it comes back on the same port with the same data, as a restarted
// component of a real cluster would.
type Process struct {
	name    string
	path    string
	args    []string
	env     []string
	logPath string
	// healthy reports whether the started process serves; it is polled
	// until it returns nil.
	healthy func(ctx context.Context) error

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
	// waitErr is how the last run ended; it is read after exited is closed.
	waitErr error
}

// Name is the component's name, e.g. "kube-apiserver".
func (p *Process) Name() string { return p.name }

// LogFile is the file the component's stdout and stderr go to, across
// restarts.
func (p *Process) LogFile() string { return p.logPath }

// Running reports whether the process is started and has not exited.
func (p *Process) Running() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.runningLocked()
}

func (p *Process) runningLocked() bool {
	if p.cmd == nil {
		return false
	}
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// Start starts the process and waits until it is healthy. If it exits or
// does not become healthy in time, it is killed and the error quotes the end
// of its log.
func (p *Process) Start(ctx context.Context) error {
	if err := p.spawn(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	err := p.waitHealthy(ctx)
	if err == nil {
		return nil
	}
	return errors.Join(fmt.Errorf("%s did not start: %w\n%s", p.name, err, p.logTail()), p.Stop())
}

func (p *Process) spawn() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.runningLocked() {
		return fmt.Errorf("starting %s: already running", p.name)
	}
	log, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("opening the %s log: %w", p.name, err)
	}
	fmt.Fprintf(log, "=== %s starting %s %s\n", time.Now().Format(time.RFC3339Nano), p.path, strings.Join(p.args, " "))
	cmd := exec.Command(p.path, p.args...)
	cmd.Env = p.env
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = childProcAttr()
	if err := cmd.Start(); err != nil {
		return errors.Join(fmt.Errorf("starting %s: %w", p.name, err), log.Close())
	}
	exited := make(chan struct{})
	p.cmd, p.exited = cmd, exited
	go func() {
		err := cmd.Wait()
		_ = log.Close() // the log was written by the child; nothing is buffered here to lose
		p.mu.Lock()
		p.waitErr = err
		p.mu.Unlock()
		close(exited)
	}()
	return nil
}

func (p *Process) waitHealthy(ctx context.Context) error {
	p.mu.Lock()
	exited := p.exited
	p.mu.Unlock()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var lastErr error
	for {
		probeCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		lastErr = p.healthy(probeCtx)
		cancel()
		if lastErr == nil {
			return nil
		}
		select {
		case <-exited:
			p.mu.Lock()
			defer p.mu.Unlock()
			if p.waitErr == nil {
				return errors.New("exited with status 0")
			}
			return fmt.Errorf("exited: %w", p.waitErr)
		case <-ctx.Done():
			return fmt.Errorf("not healthy: %w (last check: %w)", ctx.Err(), lastErr)
		case <-tick.C:
		}
	}
}

// Stop asks the process to terminate and kills it if it has not after its
// grace period, as a supervisor would. It returns once the process is gone.
// Stopping a process that is not running does nothing.
func (p *Process) Stop() error {
	p.mu.Lock()
	cmd, exited := p.cmd, p.exited
	p.mu.Unlock()
	if cmd == nil {
		return nil
	}
	select {
	case <-exited:
		return nil
	default:
	}
	// The whole process group, in case a component runs helpers of its own.
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("stopping %s: %w", p.name, err)
	}
	select {
	case <-exited:
		return nil
	case <-time.After(stopGrace):
	}
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("killing %s: %w", p.name, err)
	}
	<-exited
	return nil
}

// logTail returns the last lines of the log, to make a failure readable
// without opening files.
func (p *Process) logTail() string {
	const lines = 30
	data, err := os.ReadFile(p.logPath)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	all := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return fmt.Sprintf("--- last lines of %s ---\n%s", p.logPath, bytes.Join(all, []byte("\n")))
}
