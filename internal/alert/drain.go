package alert

import (
	"context"
	"time"
)

// What is queued when ripple stops (alerts, Events) is still sent: once
// the workload writes in flight have ended, until the queue has stayed
// empty for DrainIdle, for at most DrainFor after the stop, well within a
// pod's default grace period of 30 s. A reconcile queues its alert and
// Event as soon as its rollout's write returns, and the manager stops the
// controllers with the queues' runners, so a short idle spell with no write
// in flight means they are done; each stop of ripple waits that long.
const (
	DrainIdle = 200 * time.Millisecond
	DrainFor  = 5 * time.Second
)

// DrainContext returns a context for the sends of a queue stopped by ctx:
// it ends DrainFor after ctx does, or when cancel is called.
func DrainContext(ctx context.Context) (context.Context, context.CancelFunc) {
	out, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() {
		t := time.AfterFunc(DrainFor, cancel)
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
