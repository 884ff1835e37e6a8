package annotations

import (
	"strings"
	"testing"
	"time"
)

func TestPeriodReadsAGoDurationAndFallsBackToTheDefaultOnAMistake(t *testing.T) {
	const key = PausePeriod
	for _, tc := range []struct {
		name    string
		meta    map[string]string
		def     time.Duration
		want    time.Duration
		problem string
	}{
		{"absent uses the default", nil, time.Minute, time.Minute, ""},
		{"absent without a default is no pause", map[string]string{}, 0, 0, ""},
		{"a duration", map[string]string{key: "10s"}, 0, 10 * time.Second, ""},
		{"zero turns the default off", map[string]string{key: "0"}, time.Minute, 0, ""},
		{"not a duration", map[string]string{key: "ten"}, time.Minute, time.Minute, "is not a duration"},
		{"a bare number", map[string]string{key: "30"}, 0, 0, "is not a duration"},
		{"negative", map[string]string{key: "-5s"}, 0, 0, "is negative"},
		{"too long", map[string]string{key: "25h"}, 0, 0, "is longer than 24h0m0s"},
		{"huge value is shortened", map[string]string{key: strings.Repeat("9", 10000)}, 0, 0, "is not a duration"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, p := Period(tc.meta, key, tc.def)
			if got != tc.want {
				t.Errorf("period = %s, want %s", got, tc.want)
			}
			switch {
			case tc.problem == "" && p != nil:
				t.Errorf("unexpected problem %s", p)
			case tc.problem != "" && (p == nil || !strings.Contains(p.Reason, tc.problem)):
				t.Errorf("problem = %v, want one saying %q", p, tc.problem)
			case p != nil && len(p.String()) > 1024:
				t.Errorf("problem is %d bytes long", len(p.String()))
			}
		})
	}
}

func TestPausedSinceReadsRFC3339AndCallsAnythingElseUnreadable(t *testing.T) {
	for _, tc := range []struct {
		name        string
		meta        map[string]string
		wantOK, bad bool
		want        time.Time
	}{
		{"absent", nil, false, false, time.Time{}},
		{"a time", map[string]string{PausedAt: "2026-11-24T10:00:00Z"}, true, false, time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)},
		{"garbage", map[string]string{PausedAt: "yesterday"}, true, true, time.Time{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			at, ok, err := PausedSince(tc.meta, PausedAt)
			if ok != tc.wantOK || (err != nil) != tc.bad || !at.Equal(tc.want) {
				t.Errorf("PausedSince = %s, %v, %v", at, ok, err)
			}
		})
	}
}
