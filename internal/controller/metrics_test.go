package controller

import (
	"fmt"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ripple-controller/ripple/internal/refs"
)

// resetKeyChanges forgets every series of ripple_key_changes_total.
func resetKeyChanges(t *testing.T) {
	t.Helper()
	keyChanges.mu.Lock()
	defer keyChanges.mu.Unlock()
	keyChangesTotal.Reset()
	keyChanges.seen = map[kindKey]prometheus.Counter{}
}

// keySeriesCounts gathers ripple_key_changes_total as a registry serves
// it: one entry per series.
func keySeriesCounts(t *testing.T) map[kindKey]float64 {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(keyChangesTotal)
	families, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	out := map[kindKey]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			var s kindKey
			for _, l := range m.GetLabel() {
				switch l.GetName() {
				case "kind":
					s.kind = l.GetValue()
				case "key":
					s.key = l.GetValue()
				}
			}
			out[s] = m.GetCounter().GetValue()
		}
	}
	return out
}

// distinctKeys names n keys that differ from every other test's.
func distinctKeys(prefix string, n int) []string {
	ks := make([]string, n)
	for i := range ks {
		ks[i] = fmt.Sprintf("%s-%d", prefix, i)
	}
	return ks
}

func TestCountKeys_BoundsDistinctKeySeries(t *testing.T) {
	cm := refs.Ref{Kind: refs.ConfigMap, Name: "cfg"}
	secret := refs.Ref{Kind: refs.Secret, Name: "creds"}
	tests := []struct {
		name string
		// rollouts are counted in order, one countKeys call each.
		rollouts   []map[refs.Ref][]string
		wantSeries int
		// want holds counts of single series, by kind and key.
		want map[kindKey]float64
	}{
		{
			name:       "fewer keys than the cap each get a series and no other",
			rollouts:   []map[refs.Ref][]string{{cm: distinctKeys("k", maxKeySeries-1)}},
			wantSeries: maxKeySeries - 1,
			want:       map[kindKey]float64{{"ConfigMap", "k-0"}: 1, {"ConfigMap", otherKey}: 0},
		},
		{
			name:       "exactly the cap gets no other series",
			rollouts:   []map[refs.Ref][]string{{cm: distinctKeys("k", maxKeySeries)}},
			wantSeries: maxKeySeries,
			want:       map[kindKey]float64{{"ConfigMap", fmt.Sprintf("k-%d", maxKeySeries-1)}: 1, {"ConfigMap", otherKey}: 0},
		},
		{
			name:       "keys past the cap count under other",
			rollouts:   []map[refs.Ref][]string{{cm: distinctKeys("k", maxKeySeries+50)}},
			wantSeries: maxKeySeries + 1,
			want:       map[kindKey]float64{{"ConfigMap", otherKey}: 50, {"ConfigMap", fmt.Sprintf("k-%d", maxKeySeries)}: 0},
		},
		{
			name: "renaming keys every rollout stays at the cap plus other",
			rollouts: []map[refs.Ref][]string{
				{cm: distinctKeys("a", maxKeySeries)}, {cm: distinctKeys("b", maxKeySeries)}, {cm: distinctKeys("c", maxKeySeries)},
			},
			wantSeries: maxKeySeries + 1,
			want:       map[kindKey]float64{{"ConfigMap", otherKey}: 2 * maxKeySeries},
		},
		{
			name: "a known key keeps counting in its own series past the cap",
			rollouts: []map[refs.Ref][]string{
				{cm: distinctKeys("k", maxKeySeries+10)}, {cm: {"k-0", "k-7"}}, {cm: {"k-0", "new"}},
			},
			wantSeries: maxKeySeries + 1,
			want: map[kindKey]float64{
				{"ConfigMap", "k-0"}: 3, {"ConfigMap", "k-7"}: 2, {"ConfigMap", otherKey}: 11, {"ConfigMap", "new"}: 0,
			},
		},
		{
			name: "Secrets share the cap and get their own other",
			rollouts: []map[refs.Ref][]string{
				{cm: distinctKeys("k", maxKeySeries)}, {secret: {"password", "token"}, cm: {"k-1"}},
			},
			wantSeries: maxKeySeries + 1,
			want: map[kindKey]float64{
				{"Secret", otherKey}: 2, {"Secret", "password"}: 0, {"ConfigMap", "k-1"}: 2, {"ConfigMap", otherKey}: 0,
			},
		},
		{
			name:       "the same key name in two kinds is two series",
			rollouts:   []map[refs.Ref][]string{{cm: {"tls.crt"}, secret: {"tls.crt"}}},
			wantSeries: 2,
			want:       map[kindKey]float64{{"ConfigMap", "tls.crt"}: 1, {"Secret", "tls.crt"}: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resetKeyChanges(t)
			t.Cleanup(func() { resetKeyChanges(t) })
			for _, keys := range tt.rollouts {
				countKeys(keys)
			}
			got := keySeriesCounts(t)
			if len(got) != tt.wantSeries {
				t.Errorf("series = %d, want %d (cap %d)", len(got), tt.wantSeries, maxKeySeries)
			}
			for s, want := range tt.want {
				if got := got[s]; got != want {
					t.Errorf("ripple_key_changes_total{kind=%q,key=%q} = %v, want %v", s.kind, s.key, got, want)
				}
			}
		})
	}
}

func TestCountKeys_ConcurrentRolloutsStayWithinTheBound(t *testing.T) {
	resetKeyChanges(t)
	t.Cleanup(func() { resetKeyChanges(t) })
	cm := refs.Ref{Kind: refs.ConfigMap, Name: "cfg"}
	const workers, perWorker = 8, 50
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWorker {
				countKeys(map[refs.Ref][]string{cm: {"shared", fmt.Sprintf("w%d-%d", w, i)}})
			}
		}()
	}
	wg.Wait()
	got := keySeriesCounts(t)
	if len(got) != maxKeySeries+1 {
		t.Errorf("series = %d, want %d", len(got), maxKeySeries+1)
	}
	total := 0.0
	for _, n := range got {
		total += n
	}
	if want := float64(2 * workers * perWorker); total != want {
		t.Errorf("counted %v changes, want %v: none may be lost", total, want)
	}
}
