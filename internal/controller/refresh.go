package controller

import (
	"context"
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/ripple-controller/ripple/internal/annotations"
	"github.com/ripple-controller/ripple/internal/refs"
)

// Event reasons of the refresh strategy: a change refreshed in place, and
// one rolled because it could not be.
const (
	ReasonRefreshed    = "Refreshed"
	ReasonNotRefreshed = "NotRefreshed"
)

// refresh applies a change to a workload under the refresh strategy: when
// every changed object reaches its pods only through volumes mounted
// whole, it stamps each running pod instead of rolling, which makes the
// kubelet sync the pod and rewrite those volumes at once. fallback says
// why it cannot, and then the caller rolls.
func (r *Reconciler) refresh(ctx context.Context, v state, next record, changed []refs.Ref, names string) (out outcome, fallback string, err error) {
	if r.Type.Selector == nil {
		return outcome{}, "a " + r.Type.Kind + " has no pods of its own to refresh", nil
	}
	for _, ref := range changed {
		if isBucket(ref) {
			return outcome{}, fmt.Sprintf("%s changed in a record folded into buckets, which does not say which object", ref.Kind), nil
		}
		cur, ok := v.current[ref]
		if !ok {
			// --reload-on-delete: the kubelet keeps the last files of a
			// deleted object a pod mounts, unless the mount is optional.
			return outcome{}, fmt.Sprintf("%s was deleted, and running pods keep its files", ref), nil
		}
		if cur.version.immutable {
			// Changed only by its recreation, which a kubelet that has it
			// does not see: it stops watching an immutable object.
			return outcome{}, fmt.Sprintf("%s is immutable, and the kubelet does not update it in running pods", ref), nil
		}
		if why := refs.NotRefreshable(&v.tmpl.Spec, ref); why != "" {
			return outcome{}, why, nil
		}
	}
	pods, err := r.podsOf(ctx, v.obj)
	switch {
	case apierrors.IsForbidden(err):
		// Without the right (RBAC without podRefresh's rule), trying
		// again would leave the change in no pod, and say nothing.
		return outcome{}, "listing its pods was refused: " + annotations.Shorten(err.Error(), 256), nil
	case err != nil:
		return outcome{}, "", err
	}
	if ref, ok := createdSincePods(changed, v.current, pods); ok {
		// The object it replaced may have been immutable, and a kubelet
		// that read it so never reads the name again while a pod of its
		// node mounts it.
		return outcome{}, fmt.Sprintf("%s was created again since a running pod started, and the kubelet does not update a name it read as immutable", ref), nil
	}
	st := stamp{keyID: r.Keyed.KeyID(), at: next.at, digest: workloadDigest(r.Keyed, v.current)}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{annotations.Refreshed: st.encode()}}})
	if err != nil {
		return outcome{}, "", fmt.Errorf("encoding the pod patch: %w", err)
	}
	for i := range pods {
		pods[i].SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Pod"))
		err := r.Patch(ctx, &pods[i], client.RawPatch(types.MergePatchType, patch))
		switch {
		case apierrors.IsForbidden(err), apierrors.IsInvalid(err):
			// Refused for good (an admission policy on pods, say): trying
			// again would leave the change in no pod, and say nothing.
			return outcome{}, fmt.Sprintf("stamping pod %s was refused: %s", pods[i].Name, annotations.Shorten(err.Error(), 256)), nil
		case client.IgnoreNotFound(err) != nil:
			return outcome{}, "", fmt.Errorf("stamping pod %s: %w", pods[i].Name, err)
		}
	}
	v.podsConfig = st.encode()
	if _, err := r.recordAfter(ctx, v, next); err != nil {
		return outcome{}, "", err
	}
	log := logf.FromContext(ctx)
	if r.Opts.DryRun {
		r.event(v.obj, corev1.EventTypeNormal, ReasonWouldReload, "Refresh", "Would refresh %d pods in place because %s changed; --dry-run changed nothing", len(pods), names)
		log.Info("Would refresh pods in place", "changed", names, "pods", len(pods))
		return outcome{}, "", nil
	}
	r.countReload(v.obj, "success")
	r.notify(ctx, v.obj, names)
	r.event(v.obj, corev1.EventTypeNormal, ReasonRefreshed, "Refresh", "Refreshed %d pods in place because %s changed", len(pods), names)
	log.Info("Refreshed pods in place", "changed", names, "pods", len(pods))
	return outcome{rolled: true}, "", nil
}

// podsOf lists the metadata of the workload's pods that are not being
// deleted, by its selector read from the API server: the cache keeps no
// selectors.
func (r *Reconciler) podsOf(ctx context.Context, obj client.Object) ([]metav1.PartialObjectMetadata, error) {
	live := r.Type.New()
	if err := r.digests.reader.Get(ctx, client.ObjectKeyFromObject(obj), live); err != nil {
		return nil, fmt.Errorf("reading the selector: %w", err)
	}
	sel, err := metav1.LabelSelectorAsSelector(r.Type.Selector(live))
	if err != nil {
		return nil, fmt.Errorf("reading the selector: %w", err)
	}
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("PodList"))
	if err := r.digests.reader.List(ctx, list, client.InNamespace(obj.GetNamespace()), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return nil, fmt.Errorf("listing pods: %w", err)
	}
	out := list.Items[:0]
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil && made(obj, &p) {
			out = append(out, p)
		}
	}
	return out, nil
}

// createdSincePods returns a changed object created more than a second
// after the oldest of the pods: whatever any record says, since a record
// is written again by any later change, those pods may mount the object
// it replaced.
func createdSincePods(changed []refs.Ref, current map[refs.Ref]tracked, pods []metav1.PartialObjectMetadata) (refs.Ref, bool) {
	if len(pods) == 0 {
		return refs.Ref{}, false
	}
	oldest := pods[0].CreationTimestamp.Unix()
	for _, p := range pods[1:] {
		oldest = min(oldest, p.CreationTimestamp.Unix())
	}
	for _, ref := range changed {
		if cur, ok := current[ref]; ok && cur.createdAt > oldest+clockSlack {
			return ref, true
		}
	}
	return refs.Ref{}, false
}

// made reports whether the workload's controller made the pod, which its
// selector alone does not tell (another workload's pods, a canary, may
// carry the same labels): a StatefulSet's or DaemonSet's pods name it as
// their controller, a Deployment's name a ReplicaSet named after it and
// their pod-template-hash, as the Deployment controller names them.
func made(obj client.Object, pod *metav1.PartialObjectMetadata) bool {
	owner := metav1.GetControllerOfNoCopy(pod)
	switch {
	case owner == nil:
		return false
	case owner.UID == obj.GetUID():
		return true
	case owner.Kind != "ReplicaSet":
		return false
	}
	hash := pod.Labels[appsv1.DefaultDeploymentUniqueLabelKey]
	_, isDeployment := obj.(*appsv1.Deployment)
	return isDeployment && hash != "" && owner.Name == obj.GetName()+"-"+hash
}
