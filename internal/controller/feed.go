package controller

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ripple-controller/ripple/internal/options"
	"github.com/ripple-controller/ripple/internal/refs"
)

// A feed whose watch failed, or ended at once, watches again after
// feedRetry, doubled on each failure in a row up to feedRetryMax; until
// then, changes are read with a GET. Like client-go's reflector, it asks
// the API server to end each watch after 5 to 10 minutes, so that a watch
// stalled without an error does not last.
const (
	feedRetry        = time.Second
	feedRetryMax     = time.Minute
	feedWatchTimeout = 5 * time.Minute
)

// feed watches ConfigMaps with their data, so that the new version of a
// ConfigMap ripple tracks is hashed from its watch event rather than read
// again: a change reaches its workloads one round trip sooner. It starts at
// the current version, with no initial list, and keeps nothing of an event
// but the digest of a ConfigMap already tracked or awaited
// (digests.observe); the informer cache still holds metadata only. Secrets
// have no feed, so that the data of a Secret no workload uses never reaches
// ripple.
type feed struct {
	client    corev1client.ConfigMapsGetter
	namespace string // "" for every namespace
	selector  string
	sums      *digests
	log       logr.Logger
	// up and down say whether the last watch opened or failed, so that
	// each change, not each retry, is logged.
	up, down bool
}

// addFeeds starts one feed per watched namespace, or one for the cluster,
// unless ConfigMaps are ignored.
func addFeeds(mgr ctrl.Manager, opts *options.Options, sums *digests) error {
	if kindIgnored(opts, refs.ConfigMap) {
		return nil
	}
	cl, err := corev1client.NewForConfigAndClient(protobufConfig(mgr), mgr.GetHTTPClient())
	if err != nil {
		return fmt.Errorf("creating the ConfigMap client: %w", err)
	}
	selector, namespaces := configScope(opts)
	for _, ns := range namespaces {
		f := &feed{client: cl, namespace: ns, selector: selector, sums: sums, log: mgr.GetLogger().WithName("feed").WithValues("namespace", ns)}
		if err := mgr.Add(f); err != nil {
			return fmt.Errorf("adding the ConfigMap feed: %w", err)
		}
	}
	return nil
}

// NeedLeaderElection is true: only the leader reconciles, so only the
// leader reads digests.
func (f *feed) NeedLeaderElection() bool { return true }

// Start follows the ConfigMaps until ctx ends, resuming where a watch ended
// and starting over at the current version when that is too old.
func (f *feed) Start(ctx context.Context) error {
	var version string
	retry := feedRetry
	for ctx.Err() == nil {
		began := time.Now()
		var err error
		if version == "" {
			version, err = f.currentVersion(ctx)
		}
		if err == nil {
			version, err = f.follow(ctx, version)
		}
		if err != nil && ctx.Err() == nil && !f.down {
			f.up, f.down = false, true
			f.log.Info("Watching ConfigMaps with their data failed; their changes are read with a GET until it resumes", "error", err.Error())
		}
		if err == nil && time.Since(began) >= feedRetry {
			retry = feedRetry
			continue
		}
		select {
		case <-ctx.Done():
		case <-time.After(wait.Jitter(retry, 0.5)):
		}
		retry = min(2*retry, feedRetryMax)
	}
	return nil
}

// currentVersion is the version of the collection, from a list of one.
func (f *feed) currentVersion(ctx context.Context) (string, error) {
	list, err := f.client.ConfigMaps(f.namespace).List(ctx, metav1.ListOptions{LabelSelector: f.selector, Limit: 1})
	if err != nil {
		return "", fmt.Errorf("listing ConfigMaps: %w", err)
	}
	return list.ResourceVersion, nil
}

// follow watches from version until the watch ends and returns the version
// to resume at: "" when the watch failed.
func (f *feed) follow(ctx context.Context, version string) (string, error) {
	timeout := int64(wait.Jitter(feedWatchTimeout, 1).Seconds())
	w, err := f.client.ConfigMaps(f.namespace).Watch(ctx, metav1.ListOptions{LabelSelector: f.selector,
		ResourceVersion: version, AllowWatchBookmarks: true, TimeoutSeconds: &timeout})
	if err != nil {
		return "", fmt.Errorf("watching ConfigMaps: %w", err)
	}
	defer w.Stop()
	if !f.up {
		f.up, f.down = true, false
		f.log.Info("Watching ConfigMaps with their data, to hash the changes of tracked ones without reading them")
	}
	f.sums.feedStarted(f.namespace, version)
	defer f.sums.feedStopped(f.namespace)
	for ev := range w.ResultChan() {
		if ev.Type == watch.Error {
			return "", fmt.Errorf("watching ConfigMaps: %w", apierrors.FromObject(ev.Object))
		}
		obj, ok := ev.Object.(client.Object)
		if !ok {
			continue
		}
		version = obj.GetResourceVersion()
		if cm, ok := obj.(*corev1.ConfigMap); ok && (ev.Type == watch.Added || ev.Type == watch.Modified) {
			f.sums.observe(cm)
		}
	}
	return version, nil
}
