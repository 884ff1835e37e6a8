package alert

import (
	"context"
	"errors"
	"net/url"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	sentTotal = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "ripple_alerts_sent_total",
		Help: "Rollout alerts the alert webhook accepted.",
	})
	failedTotal = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "ripple_alerts_failed_total",
		Help: "Rollout alerts given up on after their last attempt, or refused by the alert webhook.",
	})
	droppedTotal = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "ripple_alerts_dropped_total",
		Help: "Rollout alerts dropped unsent because the queue was full.",
	})
)

func init() {
	metrics.Registry.MustRegister(sentTotal, failedTotal, droppedTotal)
}

// Config is the alerts' configuration: Reloader's ALERT_* variables.
type Config struct {
	Sink Sink
	URL  *url.URL
	// AdditionalInfo goes first in every alert (ALERT_ADDITIONAL_INFO).
	AdditionalInfo string
	// Proxy, if not nil, carries the alerts (ALERT_WEBHOOK_PROXY).
	Proxy *url.URL
}

// Defaults of a Sender. A queue of 100 absorbs a burst of rollouts (one
// edit of a ConfigMap many workloads use) while the webhook answers; four
// attempts 0.5s, 1s and 2s apart ride out a webhook's restart.
const (
	QueueSize    = 100
	Attempts     = 4
	FirstBackoff = 500 * time.Millisecond
	// logEvery bounds the log lines of a dead webhook or a full queue.
	logEvery = time.Minute
)

// Sender sends alerts from a queue, on one goroutine. Start it as a
// controller-runtime Runnable; Notify never blocks.
type Sender struct {
	cfg    Config
	poster *Poster
	queue  chan Message
	log    logr.Logger
	// Settled, when set, tells when no rollout write is in flight: at a
	// stop, the alerts of those still being written are waited for.
	Settled Settled

	attempts int
	backoff  time.Duration

	drops, failures limiter
}

// NewSender returns a Sender of cfg's alerts that logs to log: the context
// a manager starts its Runnables with carries no logger.
func NewSender(cfg Config, log logr.Logger) *Sender {
	return &Sender{cfg: cfg, poster: NewPoster(cfg.URL, cfg.Proxy), queue: make(chan Message, QueueSize), log: log,
		attempts: Attempts, backoff: FirstBackoff}
}

// Redacted names the alert webhook for logs: scheme and host only.
func (s *Sender) Redacted() string { return s.poster.Redacted() }

// Notify queues m's alert, or drops it when the queue is full: a rollout
// never waits for an alert.
func (s *Sender) Notify(ctx context.Context, m Message) {
	select {
	case s.queue <- m:
	default:
		droppedTotal.Inc()
		if ok, suppressed := s.drops.allow(time.Now()); ok {
			logf.FromContext(ctx).Info("Dropping a rollout alert: the queue of alerts is full",
				"webhook", s.Redacted(), "queue", QueueSize, "droppedUnlogged", suppressed)
		}
	}
}

// NeedLeaderElection is true: only the leader rolls, so only the leader
// has alerts to send. It also makes the manager stop the Sender with the
// controllers, not before them, so that the alerts of their last
// reconciles are sent (Start).
func (s *Sender) NeedLeaderElection() bool { return true }

// Start sends queued alerts until ctx ends, then those queued until the
// queue stays empty for DrainIdle, for at most DrainFor: the rollouts of
// reconciles that finish as ripple stops are alerted, and an alert being
// retried then is still sent.
func (s *Sender) Start(ctx context.Context) error {
	log := s.log
	log.Info("Sending an alert for each rollout", "sink", string(s.cfg.Sink), "webhook", s.Redacted())
	sendCtx, cancel := DrainContext(ctx, DrainFor)
	defer cancel()
	for {
		select {
		case <-ctx.Done():
			Drain(sendCtx, s.queue, s.Settled, func(m Message) { s.send(sendCtx, log, m) })
			return nil
		case m := <-s.queue:
			s.send(sendCtx, log, m)
		}
	}
}

func (s *Sender) send(ctx context.Context, log logr.Logger, m Message) {
	body, err := Format(s.cfg.Sink, s.cfg.AdditionalInfo, m)
	if err != nil {
		failedTotal.Inc()
		log.Error(err, "Cannot format a rollout alert")
		return
	}
	wait := s.backoff
	for attempt := 1; ; attempt++ {
		err = s.poster.Post(ctx, body)
		if err == nil {
			sentTotal.Inc()
			log.V(1).Info("Sent a rollout alert", "kind", m.Kind, "namespace", m.Namespace, "name", m.Name, "attempts", attempt)
			return
		}
		if errors.Is(err, context.Canceled) || ctx.Err() != nil {
			return
		}
		if !retryable(err) || attempt >= s.attempts {
			break
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait *= 2
	}
	failedTotal.Inc()
	if ok, suppressed := s.failures.allow(time.Now()); ok {
		log.Info("Cannot send a rollout alert; giving it up", "kind", m.Kind, "namespace", m.Namespace, "name", m.Name,
			"reason", err.Error(), "failedUnlogged", suppressed)
	}
}

// limiter passes one event per logEvery and counts those it held back, so
// that a dead webhook or a flood of rollouts logs a line a minute, not one
// per alert.
type limiter struct {
	mu         sync.Mutex
	last       time.Time
	suppressed int
}

func (l *limiter) allow(now time.Time) (bool, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.last.IsZero() && now.Sub(l.last) < logEvery {
		l.suppressed++
		return false, 0
	}
	n := l.suppressed
	l.last, l.suppressed = now, 0
	return true, n
}
