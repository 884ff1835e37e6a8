package alert

import (
	"context"
	"time"
)

// What is queued when ripple stops (alerts, Events) is still sent: once
// the workload writes in flight have ended, until the queue has stayed
// empty for DrainIdle, for at most DrainFor after the stop, within a pod's
// default grace period of 30 s and longer than a rollout's writes may take
// (10 s). A rollout counts as a write until its alert and Event are
// queued, and the manager stops the controllers with the queues' runners,
// so a short idle spell with no write in flight means they are done; each
// stop of ripple waits at least that long.
const (
	DrainIdle = 200 * time.Millisecond
	DrainFor  = 15 * time.Second
)

// DrainContext returns a context for the sends of a queue stopped by ctx:
// it ends d (DrainFor) after ctx does, or when cancel is called.
func DrainContext(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	out, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() {
		t := time.AfterFunc(d, cancel)
		context.AfterFunc(out, func() { t.Stop() })
	})
	return out, func() {
		stop()
		cancel()
	}
}

// Settled returns a channel closed while no workload write is in flight;
// nil stands for one always closed.
type Settled func() <-chan struct{}

// Drain hands each item queued to send until, with no write in flight
// (settled), the queue stays empty for DrainIdle, or ctx, a DrainContext,
// ends.
func Drain[T any](ctx context.Context, queue <-chan T, settled Settled, send func(T)) {
	if settled == nil {
		settled = func() <-chan struct{} { return closed }
	}
	for {
		select {
		case <-ctx.Done():
			return
		case item := <-queue:
			send(item)
			continue
		case <-settled():
		}
		idle := time.NewTimer(DrainIdle)
		select {
		case <-ctx.Done():
			idle.Stop()
			return
		case item := <-queue:
			idle.Stop()
			send(item)
		case <-idle.C:
			select {
			case <-settled():
				return
			default:
			}
		}
	}
}

var closed = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()
