//go:build !linux

package cluster

import "syscall"

// childProcAttr puts a component in its own process group, so a Ctrl-C in
// the terminal reaches only the test process, which then stops the
// components in order. Only Linux can also tie the child's life to ours.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
