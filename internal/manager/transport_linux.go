package manager

import (
	"errors"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// boundUnacked closes a TCP connection whose written data goes
// unacknowledged for unackedTimeout.
func boundUnacked(network, _ string, c syscall.RawConn) error {
	if !strings.HasPrefix(network, "tcp") {
		return nil
	}
	var set error
	err := c.Control(func(fd uintptr) {
		set = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT, int(unackedTimeout.Milliseconds()))
	})
	return errors.Join(err, set)
}
