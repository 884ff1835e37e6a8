package gcpace

import (
	"context"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

func TestPercentBoundsTheHeapsHeadroom(t *testing.T) {
	const mib = 1 << 20
	tests := []struct {
		name string
		live uint64
		want int
	}{
		{"an empty heap", 0, 25},
		{"a small cluster", 4 * mib, 25},
		{"the end of the small range", 8 * mib, 25},
		{"halfway", 12 * mib, 62},
		{"a thousand workloads' live heap doubles", 16 * mib, 100},
		{"the start of the large range", 24 * mib, 100},
		{"a large cluster keeps 24 MiB of headroom", 48 * mib, 50},
		{"a larger one too", 96 * mib, 25},
		{"never below 25", 512 * mib, 25},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Percent(tt.live); got != tt.want {
				t.Errorf("Percent(%d) = %d, want %d", tt.live, got, tt.want)
			}
		})
	}
}

func TestStartSetsGOGCAfterACollection(t *testing.T) {
	unsetGOGC(t)
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if live() > smallHeap {
		t.Fatalf("the test's live heap, %d bytes, is not small", live())
	}
	Start(ctx)
	if got := gogcAfterCollections(t); got != smallPercent {
		t.Fatalf("GOGC after a collection with a %d-byte live heap = %d, want %d", live(), got, smallPercent)
	}
}

func TestStartLeavesAnExplicitGOGCAlone(t *testing.T) {
	t.Setenv("GOGC", "100")
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	Start(ctx)
	if got := gogcAfterCollections(t); got != 100 {
		t.Fatalf("GOGC = %d with GOGC=100 in the environment, want 100", got)
	}
}

// gogcAfterCollections runs collections, each until a finalizer of the
// test's own has run, so that the finalizer goroutine has had its turns
// after the pacer's sentinel was collected, then reads the collector's GOGC.
func gogcAfterCollections(t *testing.T) int {
	t.Helper()
	for range 3 {
		ran := make(chan struct{})
		runtime.SetFinalizer(&sentinel{}, func(*sentinel) { close(ran) })
		runtime.GC()
		select {
		case <-ran:
		case <-time.After(10 * time.Second):
			t.Fatal("no finalizer ran within 10s of a collection")
		}
	}
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int(s[0].Value.Uint64())
}

// unsetGOGC removes GOGC from the environment for the test only.
func unsetGOGC(t *testing.T) {
	t.Helper()
	t.Setenv("GOGC", "")
	if err := os.Unsetenv("GOGC"); err != nil {
		t.Fatal(err)
	}
}

func live() uint64 {
	s := []metrics.Sample{{Name: liveHeap}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
