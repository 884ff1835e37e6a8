package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// auditLine is one audit event of a PATCH as the API server writes it.
func auditLine(user, agent, resource, stage string, received, at time.Time) string {
	return fmt.Sprintf(`{"kind":"Event","stage":%q,"verb":"patch","user":{"username":%q},"userAgent":%q,`+
		`"objectRef":{"resource":%q},"requestReceivedTimestamp":%q,"stageTimestamp":%q}`,
		stage, user, agent, resource, received.Format(time.RFC3339Nano), at.Format(time.RFC3339Nano))
}

func TestFirstPatchesTimesEachEditsFirstPatchOfTheChosenClient(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 20, 0, 0, 0, time.UTC)
	ms := func(n float64) time.Time { return t0.Add(time.Duration(n * float64(time.Millisecond))) }
	edits := []Edit{{At: ms(0)}, {At: ms(1000)}, {At: ms(2000)}}
	lines := []string{
		// Edit 0: ripple's first patch is received at 4 ms, answered at 9 ms;
		// a later one and the floor's, which a floor run would pick, do not count.
		auditLine(RippleUser, "ripple", "deployments", "ResponseComplete", ms(6), ms(8)),
		auditLine(RippleUser, "ripple", "deployments", "ResponseComplete", ms(4), ms(9)),
		auditLine(RippleUser, FloorAgent, "deployments", "ResponseComplete", ms(3), ms(5)),
		// Edit 1: events of another stage, user or resource do not count.
		auditLine(RippleUser, "ripple", "deployments", "ResponseStarted", ms(1001), ms(1001)),
		auditLine("someone", "ripple", "deployments", "ResponseComplete", ms(1001), ms(1002)),
		auditLine(RippleUser, "ripple", "statefulsets", "ResponseComplete", ms(1001), ms(1002)),
		auditLine(RippleUser, "ripple", "deployments", "ResponseComplete", ms(1006), ms(1008)),
		`not json`,
		// Edit 2 has no patch of its own: none counts for it.
	}
	path := filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := &Cluster{AuditLog: path}
	for _, tc := range []struct {
		name                 string
		floor                bool
		n                    int
		received, answeredIn time.Duration
	}{
		{name: "ripple", floor: false, n: 2, received: 4 * time.Millisecond, answeredIn: 2 * time.Millisecond},
		{name: "floor", floor: true, n: 1, received: 3 * time.Millisecond, answeredIn: 2 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			received, answered, err := c.FirstPatches(0, tc.floor, edits)
			if err != nil {
				t.Fatal(err)
			}
			// Nearest rank: the p50 of two is the smaller.
			if received.N != tc.n || received.P50 != tc.received || answered.P50 != tc.answeredIn {
				t.Errorf("received %+v, answered %+v; want %d edits, p50 %s and %s", received, answered, tc.n, tc.received, tc.answeredIn)
			}
		})
	}
}
