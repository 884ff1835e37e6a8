package cluster

import "syscall"

// childProcAttr puts a component in its own process group, so a Ctrl-C in
// the terminal reaches only the test process, which then stops the
// components in order. Pdeathsig kills the component if the test process
// dies without doing so, e.g. when `go test -timeout` panics. The kernel
// sends it when the forking thread exits; Go only retires threads that a
// goroutine locked and never unlocked, which nothing here does.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
