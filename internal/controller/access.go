package controller

import (
	"context"
	"fmt"
	"slices"
	"strings"

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
	cl, err := authorizationv1client.NewForConfigAndClient(protobufConfig(mgr), mgr.GetHTTPClient())
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
	reviews := cl.SelfSubjectAccessReviews()
	var missing []string
	for _, gr := range resources {
		for _, ns := range namespaces {
			for _, verb := range watchVerbs {
				ok, err := allowed(ctx, reviews, gr, ns, verb)
				if apierrors.IsForbidden(err) {
					// A cluster may deny the reviews themselves: ripple then
					// starts as it would without the check.
					mgr.GetLogger().Info("Not checking ripple's rights at start: it may not review them", "error", err.Error())
					return nil
				}
				if err != nil {
					return err
				}
				if !ok {
					missing = append(missing, verb+" "+gr.String()+where(ns))
				}
			}
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("ripple may not %s: it reads what it watches through informers, which list and watch, and without these would roll no workload at all; "+
			"grant them (the chart's and config/'s rights do), or leave a kind out with --ignored-workload-types or --resources-to-ignore",
			strings.Join(missing, ", "))
	}
	return nil
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

// allowed asks the API server whether ripple may verb gr in ns.
func allowed(ctx context.Context, reviews authorizationv1client.SelfSubjectAccessReviewInterface, gr schema.GroupResource, ns, verb string) (bool, error) {
	review, err := reviews.Create(ctx, &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
		ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: verb, Group: gr.Group, Resource: gr.Resource},
	}}, metav1.CreateOptions{})
	if err != nil {
		return false, fmt.Errorf("asking whether ripple may %s %s%s: %w", verb, gr, where(ns), err)
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
