package controller

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestOwnWrites_BehindWhileTheCacheHoldsTheVersionWrittenOver(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	version := func(name, rv string) *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv}}
	}
	for _, tc := range []struct {
		name   string
		cached *metav1.PartialObjectMetadata
		after  time.Duration
		want   bool
	}{
		{"the version written over, a moment later", version("app", "5"), time.Millisecond, true},
		{"the version written over, at the end of the lag allowed", version("app", "5"), ownWriteLag, true},
		{"the version written over, past the lag allowed", version("app", "5"), ownWriteLag + time.Millisecond, false},
		{"a later version", version("app", "6"), time.Millisecond, false},
		{"another workload at the same version", version("other", "5"), time.Millisecond, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := newOwnWrites()
			o.wrote(version("app", "5"), at)
			if got := o.behind(tc.cached, at.Add(tc.after)); got != tc.want {
				t.Fatalf("behind = %v, want %v", got, tc.want)
			}
		})
	}
}

// Once the cache moved on, the entry goes: the same version read again
// (a relist replaying it) is no longer behind.
func TestOwnWrites_AVersionPastIsForgotten(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	obj := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "app", ResourceVersion: "5"}}
	o := newOwnWrites()
	o.wrote(obj, at)
	later := obj.DeepCopy()
	later.ResourceVersion = "6"
	o.behind(later, at)
	if o.behind(obj, at) || len(o.m) != 0 {
		t.Fatalf("behind after the cache moved on; %d entries kept", len(o.m))
	}
}

// Entries past the lag are dropped as writes go on, so that a fan-out
// over thousands of workloads keeps none of them for long.
func TestOwnWrites_EntriesPastTheLagAreDropped(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	o := newOwnWrites()
	for _, name := range []string{"a", "b", "c"} {
		o.wrote(&metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: "1"}}, at)
	}
	o.wrote(&metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "late", ResourceVersion: "1"}}, at.Add(2*ownWriteLag))
	if len(o.m) != 1 {
		t.Fatalf("%d entries kept, want only the one within the lag", len(o.m))
	}
}
