package apiclock

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestNowFollowsTheServersDateHeader(t *testing.T) {
	local := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		date string
		want time.Time
	}{
		{"no response yet tells local time", "", local},
		{"server five minutes ahead", local.Add(5 * time.Minute).Format(http.TimeFormat), local.Add(5 * time.Minute)},
		{"server an hour behind", local.Add(-time.Hour).Format(http.TimeFormat), local.Add(-time.Hour)},
		{"unparsable date is ignored", "yesterday", local},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := New(func() time.Time { return local })
			if tt.date != "" {
				c.Observe(tt.date, local)
			}
			if got := c.Now(); !got.Equal(tt.want) {
				t.Fatalf("Now() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestWrapObservesEveryResponse(t *testing.T) {
	ahead := time.Now().Add(10 * time.Minute)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Date", ahead.UTC().Format(http.TimeFormat))
	}))
	defer srv.Close()
	c := New(nil)
	client := &http.Client{Transport: c.Wrap(http.DefaultTransport)}
	resp, err := client.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if d := c.Now().Sub(ahead); d < -2*time.Second || d > 2*time.Second {
		t.Fatalf("Now() is %v from the server's time", d)
	}
}
