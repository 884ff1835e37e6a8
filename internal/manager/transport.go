package manager

import (
	"net"
	"time"

	"k8s.io/client-go/rest"
)

// A dead connection is found within about 30 s, as client-go's HTTP/2
// pings found it: an idle one by TCP keepalives (a probe after 15 s of
// silence, then every 5 s, closed after 3 unanswered), one holding a
// request by unackedTimeout, since Linux sends no keepalive probe while
// written data waits for its acknowledgement.
const (
	keepaliveIdle     = 15 * time.Second
	keepaliveInterval = 5 * time.Second
	keepaliveProbes   = 3
	unackedTimeout    = 30 * time.Second
)

// useHTTP1 makes ripple speak HTTP/1.1 to the API server.
//
// Over HTTP/2, Go's client writes a request's headers and its body to the
// socket apart, and a flow-control update for about every 4 KiB it reads
// of a watch; a write to the socket is most of what a request costs
// ripple. In the bench's scenario (e), 10 rollouts an edit at W=5,000,
// HTTP/1.1 halved ripple's write calls, from 6 to 3 a rollout (the patch,
// the Event, the log line), and took its CPU per edit from 6.3 to 5.3 ms
// (the mean of two runs of 300 edits each, taken in turns on one control
// plane).
//
// Each watch and each request in flight then holds a connection of its
// own; client-go keeps 25 idle for the next requests.
func useHTTP1(cfg *rest.Config) {
	cfg.NextProtos = []string{"http/1.1"}
	d := &net.Dialer{Timeout: 30 * time.Second, Control: boundUnacked, KeepAliveConfig: net.KeepAliveConfig{
		Enable: true, Idle: keepaliveIdle, Interval: keepaliveInterval, Count: keepaliveProbes}}
	cfg.Dial = d.DialContext
}
