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
// namespace that a rotation wrote last: the driver updates a pod's status
// in place when it rotates its secrets (the status has no subresource, so
// metadata.generation moves past 1), and creates it when the pod mounts
// the class. As in Reloader, only a rotation is a change. A pod that
// starts mounts what is current, and some providers report a version per
// mount (Vault's, for dynamic secrets): were a new pod's status a change,
// each rollout's pods would set off the next. So while no status of the
// class was rotated since the record (rotatedSince), the class keeps its
// recorded entry, and only a class
// not recorded yet takes the newest status, at first sight, which rolls
// nothing. Among rotated statuses the newest wins, by resourceVersion
// compared as numbers: a rotation updates the pods' statuses one by one,
// the first rolls the workload, the others report the same versions. With
// no status at all, while no pod mounts the class, the class is absent:
// its appearance or disappearance rolls nothing, whatever
// --reload-on-create and --reload-on-delete say.

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
	f.synced = inf.HasSynced
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

// classStatus is the status that speaks for a SecretProviderClass in a
// namespace, and whether a rotation wrote it.
type classStatus struct {
	*unstructured.Unstructured
	rotated bool
}

// newestStatuses returns, by SecretProviderClass, the cached status that
// speaks for that class in the namespace.
func newestStatuses(ctx context.Context, reader client.Reader, ns string) (map[string]classStatus, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(statusGVK.GroupVersion().WithKind(statusGVK.Kind + "List"))
	if err := reader.List(ctx, list, client.InNamespace(ns)); err != nil {
		return nil, fmt.Errorf("listing cached SecretProviderClassPodStatuses in %s: %w", ns, err)
	}
	return newestByClass(list.Items), nil
}

// newestByClass picks, by SecretProviderClass, the status a rotation wrote
// last, or the status written last when none was rotated.
func newestByClass(items []unstructured.Unstructured) map[string]classStatus {
	out := map[string]classStatus{}
	for i := range items {
		st := classStatus{Unstructured: &items[i], rotated: items[i].GetGeneration() > 1}
		class := className(st.Unstructured)
		if class == "" {
			continue
		}
		cur, ok := out[class]
		if !ok || st.rotated && !cur.rotated || st.rotated == cur.rotated && newer(st.Unstructured, cur.Unstructured) {
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

// rotatedSince reports whether a rotation wrote the status at or after the
// second at, when a record was, less rotationSlack: an older rotation was
// there for the record to see. When a rollout replaces the pods whose
// statuses the last rotation wrote, the newest rotated status left may be
// one of an earlier rotation, on a pod of a workload ripple does not roll;
// taken as current, it rolled the workload back to that version, then
// forward again when its pod's turn to rotate came. A status whose write
// time is unknown counts, as before.
func rotatedSince(st classStatus, at int64) bool {
	if !st.rotated {
		return false
	}
	written := statusWrittenAt(st.Unstructured)
	return written == 0 || written >= at-rotationSlack
}

// rotationSlack is how much older than a record a rotation may be and
// still count: a record written while ripple's cache lagged the rotation,
// by up to this, did not see it. The driver polls for rotations every two
// minutes by default, so an earlier rotation is much older.
const rotationSlack = 5

// statusWrittenAt is the second the status was last written, kept by the
// cache's transform (stripManagedFields), or 0.
func statusWrittenAt(st client.Object) int64 {
	var last int64
	for _, mf := range st.GetManagedFields() {
		if mf.Time != nil {
			last = max(last, mf.Time.Unix())
		}
	}
	return last
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
		if ok, _ := v.policy.Tracks(ref.Kind, class, nil, v.referenced[ref]); !ok {
			continue
		}
		if _, recorded := v.record.objects[ref]; recorded && r.keepsRecord(v.record) && !rotatedSince(st, v.record.at) {
			continue // kept as recorded (missing)
		}
		current[ref] = tracked{meta: st, version: versionSum{version: st.GetResourceVersion(), sum: reportedSum(st.Unstructured, class)}}
	}
	return nil
}

// classMounted reports whether some pod in the namespace mounts the class:
// the driver wrote a status for it.
func (r *Reconciler) classMounted(ctx context.Context, ns, class string) (bool, error) {
	if r.statuses == nil {
		return false, nil
	}
	newest, err := newestStatuses(ctx, r.statuses, ns)
	_, ok := newest[class]
	return ok, err
}
