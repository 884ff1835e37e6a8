package gcpace

import (
	"context"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

const (
	smallPercent = 25
	largePercent = 100
	smallHeap    = 8 << 20
	fullHeap     = 16 << 20
	largeHeap    = 24 << 20
)

const liveHeap = "/gc/heap/live:bytes"

// Percent is the GOGC ripple uses for a live heap of this many bytes.
func Percent(live uint64) int {
	switch {
	case live <= smallHeap:
		return smallPercent
	case live < fullHeap:
		return smallPercent + int((live-smallHeap)*(largePercent-smallPercent)/(fullHeap-smallHeap))
	case live < largeHeap:
		return largePercent
	}
	return max(smallPercent, int(largePercent*largeHeap/live))
}

// Start paces the collector until ctx ends, unless GOGC is set. It returns
// at once; the pacing runs after each collection.
func Start(ctx context.Context) {
	if _, set := os.LookupEnv("GOGC"); set {
		return
	}
	p := &pacer{ctx: ctx, current: -1, sample: []metrics.Sample{{Name: liveHeap}}}
	p.arm()
}

// pacer rides on a finalizer because the runtime runs finalizers right
// after a collection, when the live heap has just been measured.
type pacer struct {
	ctx     context.Context
	current int
	sample  []metrics.Sample
}

// sentinel is a heap object whose only use is to be collected; at 32
// bytes it is too big for the tiny allocator, which may keep it alive.
type sentinel struct{ _ [32]byte }

func (p *pacer) arm() {
	runtime.SetFinalizer(&sentinel{}, func(*sentinel) {
		if p.ctx.Err() != nil {
			return
		}
		p.pace()
		p.arm()
	})
}

func (p *pacer) pace() {
	metrics.Read(p.sample)
	if p.sample[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	if want := Percent(p.sample[0].Value.Uint64()); want != p.current {
		debug.SetGCPercent(want)
		p.current = want
	}
}
