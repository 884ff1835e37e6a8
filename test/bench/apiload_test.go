package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// patchLine is the audit event of a PATCH as the API server writes it.
type patchLine struct {
	user, agent, resource, subresource, stage string
	code                                      int
	received, at                              time.Time
}

func (p patchLine) String() string {
	return fmt.Sprintf(`{"kind":"Event","stage":%q,"verb":"patch","user":{"username":%q},"userAgent":%q,`+
		`"objectRef":{"resource":%q,"subresource":%q},"responseStatus":{"code":%d},`+
		`"requestReceivedTimestamp":%q,"stageTimestamp":%q}`,
		p.stage, p.user, p.agent, p.resource, p.subresource, p.code,
		p.received.Format(time.RFC3339Nano), p.at.Format(time.RFC3339Nano))
}

func TestFirstPatchesTimesEachEditsFirstAppliedPatchOfTheChosenClient(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 20, 0, 0, 0, time.UTC)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	ripple := func(received, answered int) patchLine {
		return patchLine{RippleUser, "ripple", "deployments", "", "ResponseComplete", 200, ms(received), ms(answered)}
	}
	edits := []Edit{{At: ms(0)}, {At: ms(1000)}, {At: ms(2000)}, {At: ms(3000)}}
	refused, status, floor := ripple(2, 3), ripple(1, 2), ripple(3, 5)
	refused.code, status.subresource, floor.agent = 409, "status", FloorAgent
	started, other, statefulSet := ripple(2001, 2001), ripple(2001, 2002), ripple(2001, 2002)
	started.stage, other.user, statefulSet.resource = "ResponseStarted", "someone", "statefulsets"
	lines := []string{
		// Before the first edit: a record written at ripple's start.
		ripple(-5, -4).String(),
		// Edit 0: the first applied patch of ripple's is received at 4 ms and
		// answered at 9 ms. A later one, a refused one, one of the status
		// and the floor's (its own first) do not count for ripple.
		ripple(6, 8).String(), ripple(4, 9).String(), refused.String(), status.String(), floor.String(),
		// Edit 1 has no patch: the next edit's first patch is not its own.
		// Edit 2: at 3 ms, answered in 1 ms; other stages, users and
		// resources do not count.
		started.String(), other.String(), statefulSet.String(), `not json`, ripple(2003, 2004).String(),
		// Edit 3: at 7 ms, answered in 3 ms.
		ripple(3007, 3010).String(),
	}
	path := filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := &Cluster{AuditLog: path}
	d := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	for _, tc := range []struct {
		name               string
		floor              bool
		received, answered Stats
	}{
		{name: "ripple", received: Stats{N: 3, P50: d(4), P99: d(7), Max: d(7)}, answered: Stats{N: 3, P50: d(3), P99: d(5), Max: d(5)}},
		{name: "floor", floor: true, received: Stats{N: 1, P50: d(3), P99: d(3), Max: d(3)}, answered: Stats{N: 1, P50: d(2), P99: d(2), Max: d(2)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			received, answered, err := c.FirstPatches(0, tc.floor, edits)
			if err != nil {
				t.Fatal(err)
			}
			if received != tc.received || answered != tc.answered {
				t.Errorf("received %+v, answered %+v; want %+v and %+v", received, answered, tc.received, tc.answered)
			}
		})
	}
}

func TestWritesCountsWhatTheAPIServerStores(t *testing.T) {
	tests := []struct {
		name   string
		counts map[string]float64
		want   float64
	}{
		{"reads are not writes", map[string]float64{"get configmaps": 3, "list deployments": 1, "watch secrets": 2}, 0},
		{"every mutating verb is", map[string]float64{"create events": 2, "update leases": 1, "patch deployments": 3, "delete jobs": 1, "deletecollection pods": 1}, 8},
		{"an access review, created and stored nowhere, is not", map[string]float64{"create selfsubjectaccessreviews": 14, "patch deployments": 1}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Writes(tt.counts); got != tt.want {
				t.Errorf("Writes = %v, want %v", got, tt.want)
			}
		})
	}
}
