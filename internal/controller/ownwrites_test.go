package controller

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func versionOf(name, rv string) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv}}
}

func TestOwnWrites_BehindWhileTheCacheHoldsTheVersionWrittenOver(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name      string
		cached    *metav1.PartialObjectMetadata
		after     time.Duration
		want      time.Duration
		wantStale bool
	}{
		{"the version written over, a moment later: waits out the rest of the lag", versionOf("app", "5"), time.Second, ownWriteLag - time.Second, false},
		{"an earlier version (the write retried on a version read afresh)", versionOf("app", "4"), time.Second, ownWriteLag - time.Second, false},
		{"the version written over, past the lag allowed: read afresh", versionOf("app", "5"), ownWriteLag, 0, true},
		{"an earlier version, past the lag allowed: read afresh", versionOf("app", "4"), 2 * ownWriteLag, 0, true},
		{"the version written over, past ownWriteKept: decided on", versionOf("app", "5"), ownWriteKept + time.Second, 0, false},
		{"a later version", versionOf("app", "6"), time.Second, 0, false},
		{"a later version, with more digits", versionOf("app", "10"), time.Second, 0, false},
		{"a later version, past the lag allowed", versionOf("app", "6"), ownWriteLag, 0, false},
		{"another workload at the same version", versionOf("other", "5"), time.Second, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := newOwnWrites()
			o.wrote(versionOf("app", "5"), at)
			if got, stale := o.behind(tc.cached, at.Add(tc.after)); got != tc.want || stale != tc.wantStale {
				t.Fatalf("behind = %v, stale %v; want %v, stale %v", got, stale, tc.want, tc.wantStale)
			}
		})
	}
}

// The update past the version written over ends a reconcile's wait, and
// only then passes: without a reconcile waiting, ripple's own write stays
// as uninteresting as ever.
func TestOwnWrites_TheUpdatePastTheVersionWrittenOverEndsTheWait(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	key := types.NamespacedName{Namespace: "ns", Name: "app"}
	for _, tc := range []struct {
		name        string
		waited      bool
		next        string
		wantPass    bool
		wantBehind  bool
		wantEntries int
	}{
		{"a reconcile waits: the update to a later version", true, "6", true, false, 0},
		{"a reconcile waits: an update to the version written over, which the cache had not yet", true, "5", false, true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := newOwnWrites()
			o.wrote(versionOf("app", "5"), at)
			if tc.waited {
				o.behind(versionOf("app", "5"), at)
			}
			if got := o.arrived(key, tc.next, at); got != tc.wantPass {
				t.Fatalf("arrived = %v, want %v", got, tc.wantPass)
			}
			if got, _ := o.behind(versionOf("app", "5"), at); (got > 0) != tc.wantBehind || len(o.m) != tc.wantEntries {
				t.Fatalf("behind = %v with %d entries, want waiting %v with %d", got, len(o.m), tc.wantBehind, tc.wantEntries)
			}
		})
	}
}

// Entries are dropped as writes go on: once the lag has passed since the
// update came, or, for workloads deleted before their cache moved on, once
// ownWriteKept has. An entry whose update has not come is the cache still
// behind, and stays: dropped, the next reconcile decided on the version
// ripple's write replaced.
func TestOwnWrites_EntriesAreDroppedOnceTheirUpdateCameOrLongAfter(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name     string
		arrived  bool
		pruneAt  time.Duration
		wantKept bool
	}{
		{"the update came, past the lag", true, 2 * ownWriteLag, false},
		{"the update has not come, past the lag", false, 2 * ownWriteLag, true},
		{"the update has not come, past ownWriteKept", false, ownWriteKept + ownWriteLag, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := newOwnWrites()
			o.wrote(versionOf("app", "1"), at)
			if tc.arrived {
				o.arrived(types.NamespacedName{Namespace: "ns", Name: "app"}, "2", at)
			}
			o.wrote(versionOf("other", "1"), at.Add(tc.pruneAt))
			if _, kept := o.m[types.NamespacedName{Namespace: "ns", Name: "app"}]; kept != tc.wantKept {
				t.Fatalf("entry kept = %v, want %v", kept, tc.wantKept)
			}
		})
	}
}

// Another workload's write prunes while the cache of this one still lags
// past the wait: it is still read around (a review's case).
func TestOwnWrites_APruneKeepsAStaleEntryWhileTheCacheStillLags(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	o := newOwnWrites()
	o.wrote(versionOf("app", "5"), at)
	if _, stale := o.behind(versionOf("app", "5"), at.Add(ownWriteLag+time.Second)); !stale {
		t.Fatal("not read around past the lag")
	}
	o.arrived(types.NamespacedName{Namespace: "ns", Name: "other"}, "100", at.Add(ownWriteLag+time.Second))
	if _, stale := o.behind(versionOf("app", "5"), at.Add(ownWriteLag+2*time.Second)); !stale {
		t.Fatal("the cache still holds the version written over, and the reconcile is to decide on it")
	}
}

func TestPast_OrdersTheAPIServersVersionsAndElseTellsOnlyOthers(t *testing.T) {
	for _, tc := range []struct {
		version, over string
		want          bool
	}{
		{"6", "5", true},
		{"10", "9", true},
		{"5", "5", false},
		{"4", "5", false},
		{"9", "10", false},
		{"b", "a", true},
		{"a", "a", false},
	} {
		if got := past(tc.version, tc.over); got != tc.want {
			t.Errorf("past(%q, %q) = %v, want %v", tc.version, tc.over, got, tc.want)
		}
	}
}

// The informer stores a version before its predicates see it: a reconcile
// that read the version written over just before, and finds the update
// come and gone, reads again at once rather than deciding on it.
func TestOwnWrites_AReadJustBeforeTheUpdateCameReadsAgain(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	o := newOwnWrites()
	o.wrote(versionOf("app", "5"), at)
	if o.arrived(types.NamespacedName{Namespace: "ns", Name: "app"}, "6", at) {
		t.Fatal("ripple's own write passes though no reconcile waits")
	}
	if got, _ := o.behind(versionOf("app", "5"), at.Add(time.Millisecond)); got != conflictRetry {
		t.Fatalf("behind = %v for a read of the version written over, want %v", got, conflictRetry)
	}
	if got, _ := o.behind(versionOf("app", "6"), at.Add(time.Millisecond)); got != 0 || len(o.m) != 0 {
		t.Fatalf("behind = %v with %d entries once the later version is read, want 0 with none", got, len(o.m))
	}
}

func TestOwnWrites_PruningKeepsEntriesWithinTheLag(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	o := newOwnWrites()
	o.wrote(versionOf("old", "1"), at)
	o.arrived(types.NamespacedName{Namespace: "ns", Name: "old"}, "2", at)
	o.wrote(versionOf("young", "1"), at.Add(ownWriteLag*2/3))
	o.arrived(types.NamespacedName{Namespace: "ns", Name: "young"}, "2", at.Add(ownWriteLag*2/3))
	o.wrote(versionOf("late", "1"), at.Add(ownWriteLag+time.Second))
	if got, _ := o.behind(versionOf("young", "1"), at.Add(ownWriteLag+time.Second)); got == 0 {
		t.Fatal("an entry within the lag was pruned")
	}
	if _, ok := o.m[types.NamespacedName{Namespace: "ns", Name: "old"}]; ok {
		t.Fatal("an entry past the lag was kept")
	}
}

// A cache that lags past the wait is read around for as long as it still
// holds a version no later than the one written over, not just once.
func TestOwnWrites_ACacheLaggingPastTheWaitIsReadAroundUntilItMovesOn(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	o := newOwnWrites()
	o.wrote(versionOf("app", "5"), at)
	for _, after := range []time.Duration{ownWriteLag, ownWriteLag + time.Second} {
		if _, stale := o.behind(versionOf("app", "5"), at.Add(after)); !stale {
			t.Fatalf("the cache's version written over %v after the write is not read around", after)
		}
	}
	if _, stale := o.behind(versionOf("app", "6"), at.Add(ownWriteLag+2*time.Second)); stale || len(o.m) != 0 {
		t.Fatalf("a later version read around (%v) or its entry kept (%d)", stale, len(o.m))
	}
}
