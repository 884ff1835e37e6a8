package alert

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"
)

func TestDrain_SendsWhatReconcilesQueueUntilTheyAreDone(t *testing.T) {
	tests := []struct {
		name string
		// queued before the stop, and queued after a write of late.
		queued []int
		late   time.Duration
		want   []int
	}{
		{name: "nothing queued: returns after the idle spell", want: nil},
		{name: "queued before the stop: all sent", queued: []int{1, 2, 3}, want: []int{1, 2, 3}},
		{name: "queued by a write that ends after the idle spell: sent", late: 3 * DrainIdle, want: []int{9}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			queue := make(chan int, 10)
			for _, i := range tt.queued {
				queue <- i
			}
			var settled Settled
			if tt.late > 0 {
				writing := make(chan struct{})
				settled = func() <-chan struct{} { return writing }
				time.AfterFunc(tt.late, func() {
					queue <- 9
					close(writing)
				})
			}
			if got := drainStopped(t, queue, settled); !slices.Equal(got, tt.want) {
				t.Fatalf("sent %v, want %v", got, tt.want)
			}
		})
	}
}

func TestDrain_WaitsForAWriteThatStartsDuringTheIdleSpell(t *testing.T) {
	queue := make(chan int, 1)
	var mu sync.Mutex
	state := closed
	settled := func() <-chan struct{} {
		mu.Lock()
		defer mu.Unlock()
		return state
	}
	writing := make(chan struct{})
	time.AfterFunc(DrainIdle/4, func() {
		mu.Lock()
		state = writing
		mu.Unlock()
	})
	time.AfterFunc(2*DrainIdle, func() {
		queue <- 7
		mu.Lock()
		close(writing)
		mu.Unlock()
	})
	if got := drainStopped(t, queue, settled); !slices.Equal(got, []int{7}) {
		t.Fatalf("sent %v, want the item the write queued", got)
	}
}

// drainStopped drains queue as a runner whose stop has come, and returns
// what it sent.
func drainStopped(t *testing.T, queue <-chan int, settled Settled) []int {
	stopped, stop := context.WithCancel(t.Context())
	stop()
	ctx, cancel := DrainContext(stopped, DrainFor)
	defer cancel()
	var got []int
	Drain(ctx, queue, settled, func(i int) { got = append(got, i) })
	return got
}

func TestDrainContext_EndsItsDurationAfterTheStop(t *testing.T) {
	const d = 50 * time.Millisecond
	stopped, stop := context.WithCancel(t.Context())
	ctx, cancel := DrainContext(stopped, d)
	defer cancel()
	stop()
	if ctx.Err() != nil {
		t.Fatal("the drain context ended with the stop")
	}
	select {
	case <-ctx.Done():
	case <-time.After(d + time.Second):
		t.Fatal("the drain context outlived its duration")
	}
}
