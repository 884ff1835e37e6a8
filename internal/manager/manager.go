// Package manager assembles ripple: a controller-runtime manager with the
// cache, the controllers, health checks, metrics and leader election that
// the options ask for. cmd/ripple and the test suites both start ripple
// through it, so the tests exercise the real wiring.
package manager

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/ripple-controller/ripple/internal/apiclock"
	"github.com/ripple-controller/ripple/internal/controller"
	"github.com/ripple-controller/ripple/internal/options"
	"github.com/ripple-controller/ripple/internal/workload"
)

// New builds ripple's manager; Start runs it. The manager logs with ctx's
// logger (controller-runtime's global one if ctx has none).
func New(ctx context.Context, cfg *rest.Config, opts *options.Options) (ctrl.Manager, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = opts.QPS, opts.Burst
	cfg.UserAgent = "ripple"
	clock := apiclock.New(nil)
	cfg.Wrap(clock.Wrap)
	c, err := client.New(cfg, client.Options{Scheme: clientgoscheme.Scheme})
	if err != nil {
		return nil, fmt.Errorf("creating a client: %w", err)
	}
	keyed, err := loadKey(ctx, c, opts.HMACKeySecret, opts.Kubeconfig)
	if err != nil {
		return nil, err
	}
	scheme, err := SchemeFor(opts.Workloads())
	if err != nil {
		return nil, err
	}
	log := logf.FromContext(ctx)
	refused := controller.NewRefusals(log)
	mgr, err := ctrl.NewManager(cfg, managerOptions(opts, scheme, log, refused))
	if err != nil {
		return nil, fmt.Errorf("creating the manager: %w", err)
	}
	logScope(mgr, opts)
	if err := controller.Setup(ctx, mgr, opts, keyed, clock.Now, refused); err != nil {
		return nil, err
	}
	if err := addProbes(mgr, refused); err != nil {
		return nil, err
	}
	if opts.EnableHA {
		if err := mgr.Add(leaderNotice{mgr: mgr}); err != nil {
			return nil, fmt.Errorf("adding the leader notice: %w", err)
		}
	}
	return stoppable{Manager: mgr}, nil
}

// stoppable is a manager that a stop before its caches sync ends at once.
// controller-runtime (v0.25.2) then waits for the caches forever, spinning
// a CPU (its runnable group loops on a done context), so a pod stopped
// during a slow first list would burn a core until it is killed. Nothing
// has reconciled yet, so there is nothing to end in order.
type stoppable struct{ ctrl.Manager }

func (m stoppable) Start(ctx context.Context) error {
	done := make(chan error, 1)
	go func() { done <- m.Manager.Start(ctx) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	if m.cachesSynced(ctx) {
		return <-done
	}
	m.GetLogger().Info("Stopped before the caches were in sync")
	return nil
}

// syncedLook bounds how long a stopped manager looks at its caches.
const syncedLook = 100 * time.Millisecond

// cachesSynced tells whether the manager's caches are in sync, asking
// them: a synced cache answers at once.
func (m stoppable) cachesSynced(ctx context.Context) bool {
	look, cancel := context.WithTimeout(context.WithoutCancel(ctx), syncedLook)
	defer cancel()
	return m.GetCache().WaitForCacheSync(look)
}

// logScope says which namespaces ripple watches, and which flags it ignores
// for that, as Reloader does in its scoped mode.
func logScope(mgr ctrl.Manager, opts *options.Options) {
	log := mgr.GetLogger()
	if len(opts.Namespaces) == 0 {
		log.Info("Watching all namespaces", "ignored", opts.NamespacesToIgnore)
		return
	}
	log.Info("Watching only the listed namespaces", "namespaces", opts.Namespaces)
	for _, flag := range opts.Dropped {
		log.Info("Ignoring a flag that only applies when all namespaces are watched", "flag", "--"+flag)
	}
}

// managerOptions maps ripple's options onto controller-runtime's. A Lease
// namespace left empty, by the flag and by POD_NAMESPACE, makes
// controller-runtime read the in-cluster one.
func managerOptions(opts *options.Options, scheme *runtime.Scheme, log logr.Logger, refused *controller.Refusals) ctrl.Options {
	lease, renew, retry := opts.LeaseDuration, opts.RenewDeadline, opts.RetryPeriod
	probe := opts.ProbeAddr
	if probe == "0" {
		probe = ""
	}
	return ctrl.Options{
		Scheme:                        scheme,
		Logger:                        log,
		Cache:                         controller.CacheOptions(opts, refused),
		MapperProvider:                newMapper,
		Metrics:                       metricsOptions(opts),
		HealthProbeBindAddress:        probe,
		PprofBindAddress:              opts.PprofBindAddress(),
		LeaderElection:                opts.EnableHA,
		LeaderElectionID:              opts.LeaderElectionID,
		LeaderElectionNamespace:       opts.LeaderElectionNamespace,
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 &lease,
		RenewDeadline:                 &renew,
		RetryPeriod:                   &retry,
		// Controller names are fixed, so the global uniqueness check only
		// gets in the way of running several ripple instances in one
		// process, as the test suites do.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	}
}

// SchemeFor returns client-go's scheme when it knows every workload type
// ripple rolls, as it does the built-in kinds. A type a CRD brings (Argo
// Rollouts, turned on) goes in a scheme of this manager's own: registering
// it in client-go's global one would leak it to every other manager in the
// process, as the test suites run several.
func SchemeFor(types []workload.Type) (*runtime.Scheme, error) {
	var missing []workload.Type
	for _, t := range types {
		if !clientgoscheme.Scheme.Recognizes(t.GroupVersion.WithKind(t.Kind)) {
			missing = append(missing, t)
		}
	}
	if len(missing) == 0 {
		return clientgoscheme.Scheme, nil
	}
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, fmt.Errorf("building the scheme: %w", err)
	}
	for _, t := range missing {
		s.AddKnownTypeWithName(t.GroupVersion.WithKind(t.Kind), t.New())
		s.AddKnownTypeWithName(t.GroupVersion.WithKind(t.Kind+"List"), t.NewList())
		metav1.AddToGroupVersion(s, t.GroupVersion)
	}
	return s, nil
}

// metricsOptions serves /metrics uncompressed: the page is a few KiB, and a
// gzip writer costs about a MiB of heap per scrape, more than all the
// metadata of a thousand cached ConfigMaps.
func metricsOptions(opts *options.Options) metricsserver.Options {
	return metricsserver.Options{
		BindAddress: opts.MetricsAddr,
		HandlerOpts: []func(*promhttp.HandlerOpts){func(h *promhttp.HandlerOpts) { h.DisableCompression = true }},
	}
}

// addProbes serves /healthz as soon as ripple runs and /readyz once its
// caches are in sync, so a rollout of ripple itself waits for a warm cache,
// and while none of its informers is refused.
func addProbes(mgr ctrl.Manager, refused *controller.Refusals) error {
	var ready atomic.Bool
	if err := mgr.Add(syncWatcher{mgr: mgr, ready: &ready}); err != nil {
		return fmt.Errorf("adding the cache sync watcher: %w", err)
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return fmt.Errorf("adding the health check: %w", err)
	}
	err := mgr.AddReadyzCheck("cache-synced", func(*http.Request) error {
		if !ready.Load() {
			return errors.New("informer caches are not in sync yet")
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("adding the readiness check: %w", err)
	}
	if err := mgr.AddReadyzCheck("rights", refused.Check); err != nil {
		return fmt.Errorf("adding the rights check: %w", err)
	}
	return nil
}

// syncWatcher runs on every replica, leader or not.
type syncWatcher struct {
	mgr   ctrl.Manager
	ready *atomic.Bool
}

func (s syncWatcher) NeedLeaderElection() bool { return false }

func (s syncWatcher) Start(ctx context.Context) error {
	if s.mgr.GetCache().WaitForCacheSync(ctx) {
		s.ready.Store(true)
	}
	<-ctx.Done()
	return nil
}

// leaderNotice logs when this replica becomes the leader, so that whoever
// reads the logs of an HA installation knows which replica acts.
type leaderNotice struct{ mgr ctrl.Manager }

func (leaderNotice) NeedLeaderElection() bool { return true }

func (n leaderNotice) Start(ctx context.Context) error {
	n.mgr.GetLogger().Info("Elected leader; rolling workloads from now on")
	<-ctx.Done()
	return nil
}
