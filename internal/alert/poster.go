package alert

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"time"
)

// Timeout bounds one POST, connection and response headers included.
const Timeout = 10 * time.Second

// ParseURL checks a webhook URL: absolute, http or https, with a host. Its
// errors never quote the URL, which may hold a token.
func ParseURL(s string) (*url.URL, error) {
	return parseURL(s, "an http or https URL", "http", "https")
}

// ParseProxy checks an ALERT_WEBHOOK_PROXY: an http, https or SOCKS5 URL
// with a host, as Go's transport takes. Its errors never quote the URL,
// which may hold credentials.
func ParseProxy(s string) (*url.URL, error) {
	return parseURL(s, "an http, https, socks5 or socks5h URL", "http", "https", "socks5", "socks5h")
}

// parseURL checks an absolute URL of one of schemes, with a host; what
// names them for an error.
func parseURL(s, what string, schemes ...string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, errors.New("is not a URL")
	}
	if !slices.Contains(schemes, u.Scheme) {
		return nil, errors.New("is not " + what)
	}
	if u.Host == "" {
		return nil, errors.New("has no host")
	}
	return u, nil
}

// Poster posts to one webhook URL.
type Poster struct {
	url    *url.URL
	client *http.Client
}

// NewPoster returns a Poster for u, through proxy if it is not nil, else
// straight to u, as Reloader posts: the proxy the environment names
// (HTTPS_PROXY and the like, which ripple's API client takes) would take an
// alert meant for a receiver in the cluster to a proxy outside it.
func NewPoster(u, proxy *url.URL) *Poster {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil
	if proxy != nil {
		t.Proxy = http.ProxyURL(proxy)
	}
	t.ResponseHeaderTimeout = Timeout
	return &Poster{url: u, client: &http.Client{
		Transport: t,
		Timeout:   Timeout,
		// A webhook that redirects is misconfigured, or sends the body,
		// which may name what changed, somewhere else: Reloader's alerts
		// refuse redirects too (its --webhook-url POST follows them).
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// Redacted names the webhook for logs and errors: scheme and host only.
func (p *Poster) Redacted() string { return Redact(p.url) }

// Redact returns u's scheme and host only.
func Redact(u *url.URL) string {
	if u == nil {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// StatusError is a response other than 2xx.
type StatusError struct {
	Host string
	Code int
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("%s answered %d %s", e.Host, e.Code, http.StatusText(e.Code))
}

// Post sends body as JSON. Any error names the webhook by scheme and host
// only; a response other than 2xx is a *StatusError.
func (p *Poster) Post(ctx context.Context, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.url.String(), bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("building a request to %s: %w", p.Redacted(), redact(err))
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := p.client.Do(req)
	if err != nil {
		return fmt.Errorf("posting to %s: %w", p.Redacted(), redact(err))
	}
	// Draining a little lets the connection be reused; the body itself is
	// of no interest and is never logged.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
	_ = resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return &StatusError{Host: p.Redacted(), Code: resp.StatusCode}
	}
	return nil
}

// redact drops the *url.Error layer, whose message quotes the full URL.
func redact(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// retryable tells the failures worth another attempt: the network, a
// timeout, the server's own trouble (5xx) and its asking to slow down (429).
// Any other status will not change by asking again.
func retryable(err error) bool {
	var se *StatusError
	if errors.As(err, &se) {
		return se.Code >= 500 || se.Code == http.StatusTooManyRequests
	}
	// Canceled means ripple is stopping.
	return !errors.Is(err, context.Canceled)
}
