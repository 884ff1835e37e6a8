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
		return &eventsv1.Event{Reason: ReasonInvalidAnnotation, Action: "Parse", Note: note,
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
		{"the same note on a new version of the workload", event("2", "bad"), time.Second, false},
		{"another note on the same version", event("1", "worse"), time.Second, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &recorder{recent: newRecentSet(recentEvents, eventRepeat)}
			if r.repeats(event("1", "bad"), at) {
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

	if !r.behind(ctx, fresh) {
		t.Fatal("with no write in flight the Event waits")
	}

	w.start()
	w.start()
	went := make(chan bool)
	go func() { went <- r.behind(ctx, fresh) }()
	w.end()
	select {
	case <-went:
		t.Fatal("the Event went while a write was still in flight")
	case <-time.After(50 * time.Millisecond):
	}
	w.end()
	if !<-went {
		t.Fatal("the Event did not go once the writes were done")
	}

	w.start()
	defer w.end()
	old := &eventsv1.Event{EventTime: metav1.NewMicroTime(time.Now().Add(-eventDelay))}
	if !r.behind(ctx, old) {
		t.Fatal("an Event eventDelay old waits behind writes")
	}
}
