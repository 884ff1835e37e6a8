package manager

import (
	"context"
	"net"
	"testing"

	"golang.org/x/sys/unix"
	"k8s.io/client-go/rest"
)

// A connection the dialer makes finds a dead peer within about 30 s,
// whether it is idle (keepalives) or waits for an acknowledgement.
func TestUseHTTP1DialsConnectionsThatFindADeadPeer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	cfg := &rest.Config{}
	useHTTP1(cfg)
	conn, err := cfg.Dial(context.Background(), "tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	raw, err := conn.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct{ level, opt, value int }{
		"SO_KEEPALIVE":     {unix.SOL_SOCKET, unix.SO_KEEPALIVE, 1},
		"TCP_KEEPIDLE":     {unix.IPPROTO_TCP, unix.TCP_KEEPIDLE, 15},
		"TCP_KEEPINTVL":    {unix.IPPROTO_TCP, unix.TCP_KEEPINTVL, 5},
		"TCP_KEEPCNT":      {unix.IPPROTO_TCP, unix.TCP_KEEPCNT, 3},
		"TCP_USER_TIMEOUT": {unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT, 30000},
	}
	for name, o := range want {
		var got int
		var getErr error
		if err := raw.Control(func(fd uintptr) { got, getErr = unix.GetsockoptInt(int(fd), o.level, o.opt) }); err != nil {
			t.Fatal(err)
		}
		if getErr != nil {
			t.Fatalf("%s: %v", name, getErr)
		}
		if got != o.value {
			t.Errorf("%s = %d, want %d", name, got, o.value)
		}
	}
}
