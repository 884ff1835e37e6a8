package controller

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
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
	skipsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ripple_skips_total",
		Help: "Reconciles that did not roll the workload, by reason.",
	}, []string{"reason"})
)

func init() {
	metrics.Registry.MustRegister(reloadsTotal, reloadLatency, skipsTotal)
}
