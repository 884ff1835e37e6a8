package manager

import (
	"net"
	"net/http"
	"time"

	"k8s.io/client-go/rest"
)

// Dead connections are found by TCP keepalives: a connection that has
// heard nothing for keepaliveIdle is probed every keepaliveInterval, and
// closed after keepaliveProbes unanswered probes, half a minute in all, as
// client-go's HTTP/2 pings would find it.
const (
	keepaliveIdle     = 15 * time.Second
	keepaliveInterval = 5 * time.Second
	keepaliveProbes   = 3
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
// own, which idleConns keeps for the next request. HTTP/2's pings no
// longer find a dead connection; TCP keepalives do (keepaliveIdle).
func useHTTP1(cfg *rest.Config, idleConns int) {
	cfg.NextProtos = []string{"http/1.1"}
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAliveConfig: net.KeepAliveConfig{
		Enable: true, Idle: keepaliveIdle, Interval: keepaliveInterval, Count: keepaliveProbes}}
	cfg.Dial = d.DialContext
	// client-go keeps 25 idle connections to a host: more writes in
	// flight would each dial, and shake hands, anew.
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		if t, ok := rt.(*http.Transport); ok {
			t.MaxIdleConnsPerHost = idleConns
		}
		return rt
	})
}
