package controller

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/ripple-controller/ripple/internal/digest"
	"github.com/ripple-controller/ripple/internal/options"
	"github.com/ripple-controller/ripple/internal/refs"
)

// With --enable-csi-integration, ripple tracks SecretProviderClasses as it
// tracks ConfigMaps. The class itself does not change when its secrets
// rotate: the secrets store CSI driver writes, for each pod and each class
// it mounts, a SecretProviderClassPodStatus whose status lists the version
// of every object it mounted. ripple watches those, as Reloader does, and
// maps each event to the class it reports on, then to the workloads that
// may track that class, through refIndex like any config event.
//
// The data digest of a SecretProviderClass (namespace/name) is the digest
// of the (id, version) pairs reported by the status of that class in the
// namespace written last: the greatest resourceVersion, compared as
// numbers. A rotation updates the pods' statuses: the newest reports the
// new versions and the workload rolls. Its rollout creates statuses for
// the new pods, reporting the same versions, and deletes the old pods'
// ones: the newest still reports the new versions, so nothing rolls again.
// A digest of the union of every reported version would roll twice: once
// for old and new mixed, once for new only. With no status at all, while
// no pod mounts the class, the class is absent: what pods mount when they
// start is current, so its appearance or disappearance rolls nothing,
// whatever --reload-on-create and --reload-on-delete say.

var statusGVK = schema.GroupVersionKind{Group: "secrets-store.csi.x-k8s.io", Version: "v1", Kind: "SecretProviderClassPodStatus"}

// statusObject is the cached form of a SecretProviderClassPodStatus: the
// whole object, unstructured, as ripple reads its status and needs no
// dependency on the driver's module. They are small.
func statusObject() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(statusGVK)
	return u
}

// watchCSI registers the fanout of SecretProviderClassPodStatus events and
// returns it with the reader of the cached statuses, or nils when the flag
// is off or the API server does not serve the CRD: ripple then runs as
// without the flag, as Reloader does, and says so once.
func watchCSI(ctx context.Context, mgr ctrl.Manager, opts *options.Options, sums *digests) (*fanout, client.Reader, error) {
	if !opts.EnableCSIIntegration {
		return nil, nil, nil
	}
	f := &fanout{kind: refs.SecretProviderClass, name: className, reader: mgr.GetClient(), debounce: opts.Debounce,
		inScope: inScope(opts), digests: sums, log: mgr.GetLogger().WithName("config").WithValues("kind", string(refs.SecretProviderClass))}
	inf, err := mgr.GetCache().GetInformer(ctx, statusObject())
	if meta.IsNoMatchError(err) {
		logf.FromContext(ctx).Info("CSI integration is off: the API server does not serve SecretProviderClassPodStatus",
			"group", statusGVK.Group, "version", statusGVK.Version)
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("watching SecretProviderClassPodStatus: %w", err)
	}
	if _, err := inf.AddEventHandler(f.handlers()); err != nil {
		return nil, nil, fmt.Errorf("watching SecretProviderClassPodStatus: %w", err)
	}
	return f, mgr.GetCache(), nil
}

// className is the SecretProviderClass a status reports on.
func className(o client.Object) string {
	u, ok := o.(*unstructured.Unstructured)
	if !ok {
		return ""
	}
	name, _, _ := unstructured.NestedString(u.Object, "status", "secretProviderClassName")
	return name
}

// newestStatuses returns, by SecretProviderClass, the cached status of
// that class in the namespace written last.
func newestStatuses(ctx context.Context, reader client.Reader, ns string) (map[string]*unstructured.Unstructured, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(statusGVK.GroupVersion().WithKind(statusGVK.Kind + "List"))
	if err := reader.List(ctx, list, client.InNamespace(ns)); err != nil {
		return nil, fmt.Errorf("listing cached SecretProviderClassPodStatuses in %s: %w", ns, err)
	}
	return newestByClass(list.Items), nil
}

// newestByClass picks, by SecretProviderClass, the status written last.
func newestByClass(items []unstructured.Unstructured) map[string]*unstructured.Unstructured {
	out := map[string]*unstructured.Unstructured{}
	for i := range items {
		st := &items[i]
		class := className(st)
		if cur, ok := out[class]; class != "" && (!ok || newer(st, cur)) {
			out[class] = st
		}
	}
	return out
}

// newer reports whether a was written after b; of two versions that do
// not compare, the greater string, so that the choice is stable.
func newer(a, b client.Object) bool {
	av, bv := a.GetResourceVersion(), b.GetResourceVersion()
	if c, err := resourceversion.CompareResourceVersion(av, bv); err == nil {
		return c > 0
	}
	return av > bv
}

// reportedSum is the digest of the (id, version) pairs a status reports.
// The versions are the provider's, never secret data.
func reportedSum(st *unstructured.Unstructured, class string) digest.Sum {
	objects, _, _ := unstructured.NestedSlice(st.Object, "status", "objects")
	versions := make(map[string]string, len(objects))
	for _, o := range objects {
		if m, ok := o.(map[string]any); ok {
			id, _ := m["id"].(string)
			version, _ := m["version"].(string)
			versions[id] = version
		}
	}
	return digest.Object(string(refs.SecretProviderClass), digest.Qualified(st.GetNamespace(), class), versions, nil)
}

// trackClasses adds to current the SecretProviderClasses that the policy
// tracks and that some pod's status reports on, with their digests.
// Creation time and data writes stay zero: a class appears when its first
// pod mounts it, which is no change to roll for (see above).
func (r *Reconciler) trackClasses(ctx context.Context, ns string, v *view, current map[refs.Ref]tracked) error {
	kp := v.policy.For(refs.SecretProviderClass)
	if r.statuses == nil || (!kp.Auto && kp.Reload.Empty()) {
		return nil
	}
	newest, err := newestStatuses(ctx, r.statuses, ns)
	if err != nil {
		return err
	}
	for class, st := range newest {
		ref := refs.Ref{Kind: refs.SecretProviderClass, Name: class}
		if ok, _ := v.policy.Tracks(ref.Kind, class, nil, v.referenced[ref]); ok {
			current[ref] = tracked{meta: st, version: versionSum{version: st.GetResourceVersion(), sum: reportedSum(st, class)}}
		}
	}
	return nil
}
