//go:build !linux

package manager

import "syscall"

// boundUnacked leaves the system's retransmission timeout, where TCP has
// no per-connection one ripple sets.
func boundUnacked(string, string, syscall.RawConn) error { return nil }
