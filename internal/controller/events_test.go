package controller

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestRecorder_WritesARepeatedEventOnce(t *testing.T) {
	at := time.Date(2026, 11, 25, 3, 0, 0, 0, time.UTC)
	event := func(version, note string) *eventsv1.Event {
		return &eventsv1.Event{Type: corev1.EventTypeWarning, Reason: ReasonInvalidAnnotation, Action: "Parse", Note: note,
			Regarding: corev1.ObjectReference{UID: "u1", ResourceVersion: version}}
	}
	rolled := func(version string) *eventsv1.Event {
		return &eventsv1.Event{Type: corev1.EventTypeNormal, Reason: ReasonReloaded, Action: "Reload", Note: "Rolled because ConfigMap/c changed",
			Regarding: corev1.ObjectReference{UID: "u1", ResourceVersion: version}}
	}
	timedOut := func(version string) *eventsv1.Event {
		return &eventsv1.Event{Type: corev1.EventTypeWarning, Reason: ReasonRolloutTimedOut, Action: "Reload", Note: "timed out",
			Regarding: corev1.ObjectReference{UID: "u1", ResourceVersion: version}}
	}
	tests := []struct {
		name   string
		second *eventsv1.Event
		after  time.Duration
		want   bool
	}{
		{"the same mistake on the same version, a reconcile later", event("1", "bad"), time.Second, true},
		{"the same mistake after the repeat window", event("1", "bad"), eventRepeat, false},
		{"the same mistake on a new version of the workload, its status updated", event("2", "bad"), time.Second, true},
		{"another note on the same version", event("1", "worse"), time.Second, false},
		{"a rollout's Event on the same version, a reconcile later", rolled("1"), time.Second, true},
		{"a rollout's Event on a new version: the next change", rolled("2"), time.Second, false},
		{"a rollout timed out again, on a new version", timedOut("2"), time.Second, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &recorder{recent: newRecentSet(recentEvents, eventRepeat)}
			first := event("1", "bad")
			switch tt.second.Reason {
			case ReasonReloaded:
				first = rolled("1")
			case ReasonRolloutTimedOut:
				first = timedOut("1")
			}
			if r.repeats(first, at) {
				t.Fatal("the first Event counts as a repeat")
			}
			if got := r.repeats(tt.second, at.Add(tt.after)); got != tt.want {
				t.Errorf("repeats = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestRecorder_WritesAnEventOnceTheWorkloadWritesAreDone(t *testing.T) {
	w := newWrites()
	r := &recorder{writes: w}
	ctx := t.Context()
	fresh := &eventsv1.Event{EventTime: metav1.NewMicroTime(time.Now())}

	goes := func(ev *eventsv1.Event) <-chan struct{} {
		went := make(chan struct{})
		go func() {
			r.behind(ctx, ev)
			close(went)
		}()
		return went
	}
	waits := func(went <-chan struct{}) bool {
		select {
		case <-went:
			return false
		case <-time.After(50 * time.Millisecond):
			return true
		}
	}

	if waits(goes(fresh)) {
		t.Fatal("with no write in flight the Event waits")
	}

	w.start()
	w.start()
	went := goes(fresh)
	w.end()
	if !waits(went) {
		t.Fatal("the Event went while a write was still in flight")
	}
	w.end()
	<-went

	w.start()
	defer w.end()
	old := &eventsv1.Event{EventTime: metav1.NewMicroTime(time.Now().Add(-eventDelay))}
	if waits(goes(old)) {
		t.Fatal("an Event eventDelay old waits behind writes")
	}
}
