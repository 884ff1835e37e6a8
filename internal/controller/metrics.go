package controller

import (
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/ripple-controller/ripple/internal/refs"
)

// Outcomes of a reconcile that did not roll, the "reason" label of skipsTotal.
const (
	skipUnchanged     = "unchanged"
	skipFirstSight    = "first-sight"
	skipKeyChanged    = "key-changed"
	skipAnnotations   = "annotations-changed"
	skipDeleteIgnored = "delete-without-reload-on-delete"
	skipCreateIgnored = "create-without-reload-on-create"
	skipNamespace     = "namespace-not-selected"
	skipCopiedRecord  = "record-copied"
	skipHeld          = "held"
	skipTemplateRef   = "template-ref-unsupported"
	skipWebhook       = "webhook-sent"
	skipMinInterval   = "min-rollout-interval"
)

var (
	reloadsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ripple_reloads_total",
		Help: "Rollouts ripple started, by workload kind and result (success or error).",
	}, []string{"kind", "result"})
	reloadLatency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "ripple_reload_latency_seconds",
		Help:    "Time from ripple seeing a config change to its patch of the workload, debounce included.",
		Buckets: prometheus.ExponentialBuckets(0.005, 2, 14),
	}, []string{"kind"})
	workloadsTracked = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "ripple_workloads_tracked",
		Help: "Workloads that opted in to rollouts, by kind, as their last reconcile found them; only the leader reconciles.",
	}, []string{"kind"})
	// eventsDroppedTotal counts the Events not written because eventQueue
	// were already waiting.
	eventsDroppedTotal = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "ripple_events_dropped_total",
		Help: "Events not written because too many were waiting to be written.",
	})
	// keyChangesTotal is labelled by key name, which users choose; count
	// through countKeys, which bounds its series (maxKeySeries).
	keyChangesTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ripple_key_changes_total",
		Help: "Keys whose change rolled a workload under key precision, by the object's kind and the key; past the first 100 keys, new ones count under key=\"(other)\".",
	}, []string{"kind", "key"})
	rolloutsInProgress = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "ripple_rollouts_in_progress",
		Help: "Paced rollouts started and not available yet (--max-rollouts-in-progress).",
	})
	rolloutsQueued = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "ripple_rollouts_queued",
		Help: "Workloads waiting for a slot of their change's wave to roll (--max-rollouts-in-progress).",
	})
	skipsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ripple_skips_total",
		Help: "Reconciles that did not roll the workload, by reason.",
	}, []string{"reason"})
	// Reloader's names for the same count as reloadsTotal, so that its
	// users' dashboards and alerts keep working.
	reloaderExecuted = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "reloader_reload_executed_total",
		Help: "Rollouts ripple started, by success (true or false): Reloader's name for ripple_reloads_total.",
	}, []string{"success"})
	reloaderExecutedByNamespace = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "reloader_reload_executed_total_by_namespace",
		Help: "Rollouts ripple started, by success and namespace; counted only with METRICS_COUNT_BY_NAMESPACE=enabled.",
	}, []string{"success", "namespace"})
	// Reloader 1.4.21's action metrics: the same rollouts and latency under
	// its names, labels and buckets.
	reloaderActions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "reloader_action_total",
		Help: "Rollouts ripple started, by workload kind and result (success or error): Reloader's name for ripple_reloads_total.",
	}, []string{"workload_kind", "result"})
	reloaderActionLatency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "reloader_action_latency_seconds",
		Help:    "Time from ripple seeing a config change to its patch of the workload: Reloader's name for ripple_reload_latency_seconds.",
		Buckets: []float64{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60},
	}, []string{"workload_kind"})
)

func init() {
	// Both outcomes show from the start, as in Reloader, so that a rate
	// over them is defined before the first rollout.
	reloaderExecuted.WithLabelValues("true")
	reloaderExecuted.WithLabelValues("false")
	// The per-namespace vector has no series until it counts, so without
	// METRICS_COUNT_BY_NAMESPACE it is absent from /metrics.
	metrics.Registry.MustRegister(eventsDroppedTotal, rolloutsInProgress, rolloutsQueued, keyChangesTotal, reloadsTotal, reloadLatency, workloadsTracked, skipsTotal, reloaderExecuted, reloaderExecutedByNamespace,
		reloaderActions, reloaderActionLatency)
}

// countReload counts one rollout's result, "success" or "error", under
// ripple's name and Reloader's.
func (r *Reconciler) countReload(obj client.Object, result string) {
	reloadsTotal.WithLabelValues(r.Type.Kind, result).Inc()
	reloaderActions.WithLabelValues(r.Type.Kind, result).Inc()
	success := strconv.FormatBool(result == "success")
	reloaderExecuted.WithLabelValues(success).Inc()
	if r.Opts.CountByNamespace {
		reloaderExecutedByNamespace.WithLabelValues(success, obj.GetNamespace()).Inc()
	}
}

// optedIn keeps the workloads of one kind that opted in, as each one's
// last reconcile found it, for ripple_workloads_tracked.
type optedIn struct {
	mu    sync.Mutex
	keys  map[types.NamespacedName]struct{}
	gauge prometheus.Gauge
}

func newOptedIn(kind string) *optedIn {
	g := workloadsTracked.WithLabelValues(kind)
	g.Set(0)
	return &optedIn{keys: map[types.NamespacedName]struct{}{}, gauge: g}
}

func (o *optedIn) has(key types.NamespacedName) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	_, ok := o.keys[key]
	return ok
}

func (o *optedIn) set(key types.NamespacedName, in bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if in {
		o.keys[key] = struct{}{}
	} else {
		delete(o.keys, key)
	}
	o.gauge.Set(float64(len(o.keys)))
}

// maxKeySeries bounds the (kind, key) series of ripple_key_changes_total.
// Key names are chosen by whoever edits a workload or its ConfigMaps and
// Secrets, so unbounded, one tenant listing many keys (or renaming them
// over and over) would add series that ripple keeps forever and Prometheus
// stores each. A precise workload reads a handful of keys, so 100 names
// cover a cluster's usual ones; past them, ripple's registry and a scrape
// stay at a few tens of KiB whatever tenants do. A key's first rolled
// change claims its series, so the 100 are the first ones seen.
const maxKeySeries = 100

// otherKey is the key label under which the keys past maxKeySeries count,
// one series per kind: no key can be named so, keys being made of
// alphanumerics, '-', '_' and '.'.
const otherKey = "(other)"

// kindKey is one series of ripple_key_changes_total.
type kindKey struct{ kind, key string }

// keySeries hands out the counters of ripple_key_changes_total, at most
// max of them for keys plus one otherKey counter per kind.
type keySeries struct {
	mu   sync.Mutex
	vec  *prometheus.CounterVec
	max  int
	seen map[kindKey]prometheus.Counter // at most max entries
}

var keyChanges = &keySeries{vec: keyChangesTotal, max: maxKeySeries, seen: map[kindKey]prometheus.Counter{}}

// count counts one rolled change of key in an object of kind. Only a
// rollout calls it, under one lock held for a map lookup, so concurrent
// reconciles barely contend.
func (s *keySeries) count(kind, key string) {
	s.mu.Lock()
	c, ok := s.seen[kindKey{kind, key}]
	if !ok {
		if len(s.seen) < s.max {
			c = s.vec.WithLabelValues(kind, key)
			s.seen[kindKey{kind, key}] = c
		} else {
			c = s.vec.WithLabelValues(kind, otherKey)
		}
	}
	s.mu.Unlock()
	c.Inc()
}

// countKeys counts the keys whose change rolled a precise workload.
func countKeys(keys map[refs.Ref][]string) {
	for ref, ks := range keys {
		for _, k := range ks {
			keyChanges.count(string(ref.Kind), k)
		}
	}
}

// observeLatency records how long a rollout took from the change seen,
// under ripple's name and Reloader's.
func (r *Reconciler) observeLatency(d time.Duration) {
	reloadLatency.WithLabelValues(r.Type.Kind).Observe(d.Seconds())
	reloaderActionLatency.WithLabelValues(r.Type.Kind).Observe(d.Seconds())
}
