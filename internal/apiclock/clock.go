package apiclock

import (
	"net/http"
	"sync/atomic"
	"time"
)

// Clock estimates the API server's time from the Date header of every
// response that passes through the transport it wraps. Until one has been
// seen, it tells the local time.
type Clock struct {
	offset atomic.Int64 // server minus local, in nanoseconds
	local  func() time.Time
}

// New returns a Clock that reads the local time from local (time.Now when nil).
func New(local func() time.Time) *Clock {
	if local == nil {
		local = time.Now
	}
	return &Clock{local: local}
}

// Now returns the API server's time as best known, to the second.
func (c *Clock) Now() time.Time {
	return c.local().Add(time.Duration(c.offset.Load())).Truncate(time.Second)
}

// Observe takes the server's Date from one response received at local time
// at. Date has whole seconds, so the server was up to a second ahead of it:
// half a second is added to centre the estimate.
func (c *Clock) Observe(date string, at time.Time) {
	server, err := http.ParseTime(date)
	if err != nil {
		return
	}
	c.offset.Store(int64(server.Add(time.Second / 2).Sub(at)))
}

// Wrap returns a transport that observes every response; it fits
// rest.Config.Wrap.
func (c *Clock) Wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper{next: rt, clock: c}
}

type roundTripper struct {
	next  http.RoundTripper
	clock *Clock
}

func (r roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.next.RoundTrip(req)
	if err == nil {
		r.clock.Observe(resp.Header.Get("Date"), r.clock.local())
	}
	return resp, err
}
