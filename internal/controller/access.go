package controller

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"golang.org/x/sync/errgroup"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	authorizationv1client "k8s.io/client-go/kubernetes/typed/authorization/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/ripple-controller/ripple/internal/options"
	"github.com/ripple-controller/ripple/internal/refs"
	"github.com/ripple-controller/ripple/internal/workload"
)

// watchVerbs are what an informer needs of each resource it caches.
var watchVerbs = []string{"list", "watch"}

// checkAccess refuses to start ripple without the right to list and watch
// a resource it caches, in every namespace it watches. An informer that
// may not list never syncs, and controller-runtime then waits for it
// forever: ripple would be unready and roll no workload of any kind, with
// only a repeated error line to say why. Reloader's ClusterRole, for one,
// grants no watch on workloads. It looks once, at start, and asks the API
// server, so whatever authorizes requests (RBAC or a webhook) answers.
func checkAccess(ctx context.Context, mgr ctrl.Manager, opts *options.Options, types []workload.Type) error {
	// A handful of reviews per namespace, once, before the probes are
	// served: sent at once, past the client-side rate limit, so that a
	// low --kube-api-qps does not keep ripple unstarted until its liveness
	// probe kills it.
	cfg := protobufConfig(mgr)
	cfg.QPS, cfg.Burst, cfg.RateLimiter = -1, 0, nil
	cl, err := authorizationv1client.NewForConfigAndClient(cfg, mgr.GetHTTPClient())
	if err != nil {
		return fmt.Errorf("creating the access review client: %w", err)
	}
	resources, err := cachedResources(mgr.GetRESTMapper(), opts, types)
	if err != nil {
		return err
	}
	namespaces := opts.Namespaces
	if len(namespaces) == 0 {
		namespaces = []string{metav1.NamespaceAll}
	}
	var asks []access
	for _, gr := range resources {
		for _, ns := range namespaces {
			for _, verb := range watchVerbs {
				asks = append(asks, access{resource: gr, namespace: ns, verb: verb})
			}
		}
	}
	missing, err := denied(ctx, cl.SelfSubjectAccessReviews(), asks)
	if apierrors.IsForbidden(err) {
		// A cluster may deny the reviews themselves: ripple then starts as
		// it would without the check.
		mgr.GetLogger().Info("Not checking ripple's rights at start: it may not review them", "error", err.Error())
		return nil
	}
	if err != nil {
		return err
	}
	if len(missing) > 0 {
		return fmt.Errorf("ripple may not %s: it reads what it watches through informers, which list and watch, and without these would roll no workload at all; "+
			"grant them (the chart's and config/'s rights do), or turn off what needs them: a workload kind with --ignored-workload-types, "+
			"ConfigMaps or Secrets with --resources-to-ignore, namespaces with --namespace-selector, secretproviderclasspodstatuses with --enable-csi-integration",
			strings.Join(missing, ", "))
	}
	return nil
}

// access is one right an informer needs.
type access struct {
	resource  schema.GroupResource
	namespace string
	verb      string
}

func (a access) String() string { return a.verb + " " + a.resource.String() + where(a.namespace) }

// reviewsAtOnce bounds the access reviews in flight.
const reviewsAtOnce = 16

// denied asks the API server about each right, reviewsAtOnce at a time,
// and returns those it denies, in the order asked.
func denied(ctx context.Context, reviews authorizationv1client.SelfSubjectAccessReviewInterface, asks []access) ([]string, error) {
	ok := make([]bool, len(asks))
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(reviewsAtOnce)
	for i, a := range asks {
		g.Go(func() error {
			var err error
			ok[i], err = allowed(ctx, reviews, a)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	var out []string
	for i, a := range asks {
		if !ok[i] {
			out = append(out, a.String())
		}
	}
	return out, nil
}

// cachedResources are the resources ripple's informers list and watch
// (setup.go): each workload type it rolls and the one it borrows pod
// templates from, ConfigMaps and Secrets unless ignored, Namespaces under
// --namespace-selector, and SecretProviderClassPodStatuses with the CSI
// integration, where the cluster serves them.
func cachedResources(mapper meta.RESTMapper, opts *options.Options, types []workload.Type) ([]schema.GroupResource, error) {
	var kinds []schema.GroupVersionKind
	for _, t := range types {
		kinds = append(kinds, t.GroupVersion.WithKind(t.Kind))
		if t.TemplateSource != nil {
			kinds = append(kinds, t.TemplateSource.GroupVersion.WithKind(t.TemplateSource.Kind))
		}
	}
	for _, k := range refs.Kinds {
		if !kindIgnored(opts, k) {
			kinds = append(kinds, corev1.SchemeGroupVersion.WithKind(string(k)))
		}
	}
	if opts.NamespaceSelector != nil {
		kinds = append(kinds, corev1.SchemeGroupVersion.WithKind("Namespace"))
	}
	if opts.EnableCSIIntegration {
		kinds = append(kinds, statusGVK)
	}
	var out []schema.GroupResource
	for _, k := range kinds {
		m, err := mapper.RESTMapping(k.GroupKind(), k.Version)
		if meta.IsNoMatchError(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("looking up the API of %s: %w", k.Kind, err)
		}
		if gr := m.Resource.GroupResource(); !slices.Contains(out, gr) {
			out = append(out, gr)
		}
	}
	return out, nil
}

// allowed asks the API server whether ripple has the right a.
func allowed(ctx context.Context, reviews authorizationv1client.SelfSubjectAccessReviewInterface, a access) (bool, error) {
	review, err := reviews.Create(ctx, &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
		ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: a.namespace, Verb: a.verb, Group: a.resource.Group, Resource: a.resource.Resource},
	}}, metav1.CreateOptions{})
	if err != nil {
		return false, fmt.Errorf("asking whether ripple may %s: %w", a, err)
	}
	return review.Status.Allowed, nil
}

// where says in which namespace, "" being all of them.
func where(ns string) string {
	if ns == metav1.NamespaceAll {
		return " cluster-wide"
	}
	return " in namespace " + ns
}
