package controller

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"

	"github.com/ripple-controller/ripple/internal/annotations"
)

// lineLog is a logger that keeps the messages it is given.
type lineLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *lineLog) ctx() context.Context {
	log := funcr.New(func(prefix, args string) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.lines = append(l.lines, args)
	}, funcr.Options{})
	return logr.NewContext(context.Background(), log)
}

// count is how many lines contain msg.
func (l *lineLog) count(msg string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, line := range l.lines {
		if strings.Contains(line, msg) {
			n++
		}
	}
	return n
}

func workloadAt(version string) *appsv1.Deployment {
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: types.UID("uid-1"), ResourceVersion: version}}
}

func TestReportProblems_LogsEachProblemOncePerWorkloadWhateverItsStatusUpdates(t *testing.T) {
	r := &Reconciler{Recorder: events.NewFakeRecorder(100), logged: newRecentSet(loggedLines, eventRepeat)}
	var log lineLog
	ctx := log.ctx()
	problems := []annotations.Problem{
		{Annotation: annotations.Auto, Value: "yes", Reason: "is not a boolean"},
		{Annotation: annotations.Search, Value: "1", Reason: "is not a boolean"},
	}
	const msg = "Ignoring an invalid annotation value"

	for range 5 {
		r.reportProblems(ctx, workloadAt("1"), problems)
	}
	if n := log.count(msg); n != 2 {
		t.Fatalf("5 reconciles of one version with 2 problems logged %d lines, want 2", n)
	}
	r.reportProblems(ctx, workloadAt("2"), problems[:1])
	if n := log.count(msg); n != 2 {
		t.Errorf("a new version, a status update say, logged its problem %d times, want none", n-2)
	}
	other := workloadAt("1")
	other.UID = "uid-2"
	r.reportProblems(ctx, other, problems[:1])
	if n := log.count(msg); n != 3 {
		t.Errorf("another workload at the same resourceVersion logged its problem %d times, want once", n-2)
	}
}

func TestBorrowed_LogsAnUnfollowableReferenceOncePerWorkload(t *testing.T) {
	r := &Reconciler{Recorder: events.NewFakeRecorder(100), logged: newRecentSet(loggedLines, eventRepeat)}
	var log lineLog
	ctx := log.ctx()
	v := &view{unfollowable: `spec.workloadRef names ReplicaSet "web" of "apps/v1": ripple follows only the pod template of a Deployment (apps/v1)`}
	const msg = "Cannot read the pod template the workload uses"

	for range 5 {
		if got, err := r.borrowed(ctx, workloadAt("1"), v); got != nil || err != nil {
			t.Fatalf("borrowed = %v, %v; want nothing to do", got, err)
		}
	}
	if n := log.count(msg); n != 1 {
		t.Fatalf("5 reconciles of one version logged %d lines, want 1", n)
	}
	if _, err := r.borrowed(ctx, workloadAt("2"), v); err != nil {
		t.Fatal(err)
	}
	if n := log.count(msg); n != 1 {
		t.Errorf("a new version, a status update say, logged %d lines, want none", n-1)
	}
}

func TestLogFirst_RemembersAtMostLoggedLinesForgettingTheOldest(t *testing.T) {
	r := &Reconciler{logged: newRecentSet(loggedLines, eventRepeat)}
	oldest := workloadAt("0")
	if !r.logFirst(oldest, "problem", "p") {
		t.Fatal("the first line is not first")
	}
	if r.logFirst(oldest, "problem", "p") {
		t.Fatal("the same line is first twice")
	}
	if !r.logFirst(oldest, "templateRef", "p") {
		t.Error("a line of another kind with the same text is not first")
	}
	for i := range loggedLines {
		w := workloadAt("0")
		w.UID = types.UID(fmt.Sprint("uid-other-", i))
		r.logFirst(w, "problem", "p")
	}
	if n := r.logged.seen.Len(); n != loggedLines {
		t.Errorf("%d lines remembered, want %d: it fills up to its bound", n, loggedLines)
	}
	if !r.logFirst(oldest, "problem", "p") {
		t.Error("the oldest line is still remembered past loggedLines")
	}
}

func TestRecentSet_SaysAKeyAgainOnceItsWindowPassed(t *testing.T) {
	s := newRecentSet(10, time.Minute)
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if !s.first("k", at) || s.first("k", at.Add(59*time.Second)) {
		t.Fatal("a key is first once within its window")
	}
	if !s.first("k", at.Add(2*time.Minute)) {
		t.Error("a key is not first again after its window")
	}
	s.forget("k")
	if !s.first("k", at.Add(2*time.Minute)) {
		t.Error("a forgotten key is not first")
	}
}

// A workload whose reload list matches thousands of objects with mistaken
// annotations is told of ten, the same ten at each reconcile, and how many
// more: each said, they overflowed the caches that say a line once.
func TestMostOf_SaysTheSameFewProblemsAndCountsTheRest(t *testing.T) {
	problem := func(i int) annotations.Problem {
		return annotations.Problem{Annotation: "reloader.stakater.com/ignore", Value: "True", Reason: fmt.Sprintf("on ConfigMap/cm-%04d", i)}
	}
	many := func(n int, reversed bool) []annotations.Problem {
		out := make([]annotations.Problem, n)
		for i := range n {
			if reversed {
				out[i] = problem(n - 1 - i)
			} else {
				out[i] = problem(i)
			}
		}
		return out
	}
	tests := []struct {
		name     string
		problems []annotations.Problem
		want     int
		last     string
	}{
		{"a few, all said", many(3, false), 3, "cm-0002"},
		{"as many as are said", many(mostProblems, true), mostProblems, "cm-0000"},
		{"thousands, in one order", many(5000, false), mostProblems + 1, "and 4990 more"},
		{"thousands, in another", many(5000, true), mostProblems + 1, "and 4990 more"},
	}
	var first []string
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mostOf(tt.problems)
			if len(got) != tt.want || !strings.Contains(got[len(got)-1].String(), tt.last) {
				t.Fatalf("mostOf gave %d problems, the last %q; want %d, the last with %q", len(got), got[len(got)-1], tt.want, tt.last)
			}
			if len(tt.problems) < 5000 {
				return
			}
			var said []string
			for _, p := range got {
				said = append(said, p.String())
			}
			if first == nil {
				first = said
			} else if strings.Join(said, "\n") != strings.Join(first, "\n") {
				t.Errorf("another order says other problems:\n%v\nthen\n%v", first, said)
			}
		})
	}
}

// A change's ID names a CronJob's Job: two CronJobs recorded in the same
// second with the same config, whose names the Job's name cuts to the
// same first characters, must not share one.
func TestChangeID_DiffersBetweenWorkloadsWithTheSameRecordAndConfig(t *testing.T) {
	workload := func(uid types.UID) *appsv1.Deployment {
		return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{UID: uid, Annotations: map[string]string{annotations.Recorded: "k;at=100;ConfigMap/cfg=ab"}}}
	}
	tests := []struct {
		name string
		a, b *appsv1.Deployment
		same bool
	}{
		{"the same workload, tried again", workload("uid-1"), workload("uid-1"), true},
		{"two workloads", workload("uid-1"), workload("uid-2"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if same := changeID(tt.a, "digest") == changeID(tt.b, "digest"); same != tt.same {
				t.Errorf("same ID = %v, want %v", same, tt.same)
			}
		})
	}
}
