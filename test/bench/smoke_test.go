package bench

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSmoke_EachEditRollsItsUsersOnceAndARestartWritesNothing runs the
// bench harness at W=200 against the built ripple binary and checks
// correctness only (see Smoke). RIPPLE_BIN names a binary to use; otherwise
// the test builds ./cmd/ripple itself.
func TestSmoke_EachEditRollsItsUsersOnceAndARestartWritesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane and ripple")
	}
	bin := os.Getenv("RIPPLE_BIN")
	if bin == "" {
		bin = filepath.Join(t.TempDir(), "ripple")
		build := exec.Command("go", "build", "-o", bin, "github.com/ripple-controller/ripple/cmd/ripple")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("building ripple: %v\n%s", err, out)
		}
	}
	bin, err := RippleBinary(bin)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	err = Smoke(ctx, Config{RippleBin: bin, Edits: 10, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
}

func TestJudge(t *testing.T) {
	t0 := time.Now()
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	rolls := []Roll{
		{Name: "a", Key: DigestAnnotation, At: at(10)},
		{Name: "x", Key: FloorAnnotation, At: at(11)},
		{Name: "b", Key: DigestAnnotation, At: at(30)},
		{Name: "c", Key: DigestAnnotation, At: at(40)},
		{Name: "a", Key: DigestAnnotation, At: at(50)},
	}
	e := Judge("cm-0", t0, []string{"a", "b", "d"}, rolls, DigestAnnotation)
	if e.First != 10*time.Millisecond || e.Last != 30*time.Millisecond {
		t.Errorf("first, last = %s, %s; want 10ms, 30ms", e.First, e.Last)
	}
	if len(e.Missing) != 1 || e.Missing[0] != "d" {
		t.Errorf("missing = %v, want [d]", e.Missing)
	}
	if len(e.Extra) != 2 || e.Extra[0] != "a" || e.Extra[1] != "c" {
		t.Errorf("extra = %v, want [a c]", e.Extra)
	}
	if Correctness([]Edit{e}) == "" {
		t.Error("Correctness passed an edit with missing and extra rolls")
	}
}

func TestSummarise(t *testing.T) {
	var ds []time.Duration
	for i := 100; i >= 1; i-- {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	s := Summarise(ds)
	if s.P50 != 50*time.Millisecond || s.P99 != 99*time.Millisecond || s.Max != 100*time.Millisecond || s.N != 100 {
		t.Errorf("Summarise = %+v", s)
	}
}

func TestParseSamples(t *testing.T) {
	in := `# HELP x y
apiserver_request_total{code="200",component="apiserver",resource="deployments",verb="PATCH"} 7
apiserver_request_total{code="409",component="apiserver",resource="deployments",verb="PATCH"} 2
rest_client_requests_total{code="200",host="127.0.0.1:1",method="GET"} 3
workqueue_depth{controller="deployments",name="deployments"} 0
process_cpu_seconds_total 1.5
`
	ss, err := ParseSamples(stringsReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if got := ss.Counts("apiserver_request_total", "verb", "resource")["PATCH deployments"]; got != 9 {
		t.Errorf("PATCH deployments = %v, want 9", got)
	}
	if got := ss.Sum("rest_client_requests_total", map[string]string{"method": "GET"}); got != 3 {
		t.Errorf("GET = %v, want 3", got)
	}
	if got := ss.Sum("process_cpu_seconds_total", nil); got != 1.5 {
		t.Errorf("cpu = %v", got)
	}
}

func stringsReader(s string) *strings.Reader { return strings.NewReader(s) }
