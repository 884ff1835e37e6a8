package alert

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

func TestParseURL(t *testing.T) {
	for _, c := range []struct {
		in string
		ok bool
	}{
		{"https://hooks.example.com/services/T000/B000/XXXX", true},
		{"http://10.0.0.1:8080/hook?token=abc", true},
		{"ftp://example.com/hook", false},
		{"example.com/hook", false},
		{"https://", false},
		{"http://[::1", false},
		{"", false},
	} {
		_, err := ParseURL(c.in)
		if (err == nil) != c.ok {
			t.Errorf("ParseURL(%q) = %v, want ok %v", c.in, err, c.ok)
		}
		if err != nil && c.in != "" && strings.Contains(err.Error(), c.in) {
			t.Errorf("ParseURL's error %q quotes the URL", err)
		}
	}
}

func TestRedact(t *testing.T) {
	u, _ := ParseURL("https://user:pw@hooks.example.com:8443/services/T0/B0/secret?token=x")
	if got, want := Redact(u), "https://hooks.example.com:8443"; got != want {
		t.Errorf("Redact = %q, want %q", got, want)
	}
}

// server answers with the codes in turn, repeating the last one, and
// counts the requests.
func server(t *testing.T, codes ...int) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(n.Add(1)) - 1
		w.WriteHeader(codes[min(i, len(codes)-1)])
	}))
	t.Cleanup(s.Close)
	return s, &n
}

func TestPostErrorsNameOnlyTheHost(t *testing.T) {
	s, _ := server(t, http.StatusForbidden)
	u, _ := ParseURL(s.URL + "/hook/s3cr3t-token")
	err := NewPoster(u, nil).Post(context.Background(), []byte(`{}`))
	if err == nil || strings.Contains(err.Error(), "s3cr3t-token") {
		t.Errorf("Post = %v, want an error without the path", err)
	}
	s.Close()
	err = NewPoster(u, nil).Post(context.Background(), []byte(`{}`))
	if err == nil || strings.Contains(err.Error(), "s3cr3t-token") {
		t.Errorf("Post to a closed server = %v, want an error without the path", err)
	}
}

func TestSenderRetries(t *testing.T) {
	for _, c := range []struct {
		name     string
		codes    []int
		requests int64
		sent     bool
	}{
		{"accepted at once", []int{http.StatusOK}, 1, true},
		{"204 counts as accepted", []int{http.StatusNoContent}, 1, true},
		{"5xx, then accepted", []int{http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusOK}, 3, true},
		{"429, then accepted", []int{http.StatusTooManyRequests, http.StatusOK}, 2, true},
		{"5xx on every attempt", []int{http.StatusInternalServerError}, Attempts, false},
		{"4xx is not retried", []int{http.StatusBadRequest}, 1, false},
		{"a redirect is not followed", []int{http.StatusFound}, 1, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, n := server(t, c.codes...)
			u, _ := ParseURL(s.URL + "/hook")
			snd := NewSender(Config{Sink: Slack, URL: u}, testLogger(t))
			snd.backoff = time.Millisecond
			sent, failed := value(sentTotal), value(failedTotal)
			snd.send(context.Background(), testLogger(t), Message{Kind: "Deployment", Namespace: "ns", Name: "web", Changed: "ConfigMap/app"})
			if got := n.Load(); got != c.requests {
				t.Errorf("%d requests, want %d", got, c.requests)
			}
			gotSent, gotFailed := value(sentTotal)-sent, value(failedTotal)-failed
			if c.sent && (gotSent != 1 || gotFailed != 0) || !c.sent && (gotSent != 0 || gotFailed != 1) {
				t.Errorf("sent %v, failed %v; want sent: %v", gotSent, gotFailed, c.sent)
			}
		})
	}
}

func TestNotifyNeverBlocks(t *testing.T) {
	u, _ := ParseURL("http://127.0.0.1:1/hook")
	snd := NewSender(Config{Sink: Raw, URL: u}, testLogger(t))
	dropped := value(droppedTotal)
	done := make(chan struct{})
	go func() {
		// Nothing sends: the queue fills, and the rest is dropped.
		for range QueueSize + 10 {
			snd.Notify(context.Background(), Message{})
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Notify blocked on a full queue")
	}
	if got := value(droppedTotal) - dropped; got != 10 {
		t.Errorf("dropped %v, want 10", got)
	}
}

func TestLimiter(t *testing.T) {
	var l limiter
	t0 := time.Now()
	steps := []struct {
		at         time.Duration
		ok         bool
		suppressed int
	}{
		{0, true, 0},
		{time.Second, false, 0},
		{30 * time.Second, false, 0},
		{logEvery + time.Millisecond, true, 2},
		{logEvery + 2*time.Millisecond, false, 0},
	}
	for i, s := range steps {
		ok, n := l.allow(t0.Add(s.at))
		if ok != s.ok || n != s.suppressed {
			t.Errorf("step %d: allow = %v, %d; want %v, %d", i, ok, n, s.ok, s.suppressed)
		}
	}
}

func value(c prometheus.Counter) float64 {
	var m dto.Metric
	_ = c.Write(&m)
	return m.GetCounter().GetValue()
}

// Alerts go straight to the webhook unless ALERT_WEBHOOK_PROXY names a
// proxy, as Reloader posts them: HTTPS_PROXY, set for the API server, would
// send an alert meant for a receiver in the cluster to a proxy outside it.
func TestNewPoster_GoesDirectUnlessAProxyIsSet(t *testing.T) {
	hook, _ := url.Parse("http://receiver.monitoring:8080/hook")
	proxy, _ := url.Parse("socks5://proxy:1080")
	req := httptest.NewRequest(http.MethodPost, hook.String(), nil)
	for _, c := range []struct {
		name  string
		proxy *url.URL
		want  string
	}{
		{"no proxy set", nil, ""},
		{"ALERT_WEBHOOK_PROXY", proxy, proxy.String()},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("HTTP_PROXY", "http://env-proxy:3128")
			tr := NewPoster(hook, c.proxy).client.Transport.(*http.Transport)
			// The environment's proxy is read once per process, maybe
			// before this test set one: no proxy function at all is
			// what shows it is not taken.
			if c.proxy == nil && tr.Proxy != nil {
				t.Fatal("alerts take a proxy although ALERT_WEBHOOK_PROXY is unset")
			}
			var got string
			if tr.Proxy != nil {
				u, err := tr.Proxy(req)
				if err != nil {
					t.Fatal(err)
				}
				if u != nil {
					got = u.String()
				}
			}
			if got != c.want {
				t.Errorf("an alert goes through proxy %q, want %q", got, c.want)
			}
		})
	}
}
