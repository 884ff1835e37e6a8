package controller

import (
	"bytes"
	"encoding/json"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ripple-controller/ripple/internal/options"
	"github.com/ripple-controller/ripple/internal/refs"
	"github.com/ripple-controller/ripple/internal/workload"
)

// CacheOptions returns the informer cache configuration: only the watched
// namespaces, workloads cut down to what ripple reads of them
// (workload.Type.Trim), managed fields dropped everywhere but for the time
// of a SecretProviderClassPodStatus's last write (stripManagedFields).
// ConfigMaps and Secrets have caches of their own (configcache.go). The
// informers' lists and watches are noted in refused.
func CacheOptions(o *options.Options, refused *Refusals) cache.Options {
	opts := cache.Options{
		DefaultTransform:         stripManagedFields,
		NewInformer:              refused.NewInformer,
		DefaultWatchErrorHandler: quietRefusals,
		ByObject:                 map[client.Object]cache.ByObject{},
	}
	if len(o.Namespaces) > 0 {
		opts.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range o.Namespaces {
			opts.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	for _, t := range workload.All {
		if t.Trim != nil {
			opts.ByObject[t.New()] = cache.ByObject{Transform: trimWorkload(t.Trim)}
		}
	}
	return opts
}

// stripManagedFields drops managed fields, but keeps of a
// SecretProviderClassPodStatus the time its status was last written
// (statusWrittenAt), in an entry of its own: set through the informer's
// type, which may be cached for a CRD the API server does not serve, it
// cannot be a transform by type. A manager that wrote only its metadata (a
// label, by kubectl or a policy engine) wrote no rotation.
func stripManagedFields(obj any) (any, error) {
	o, ok := obj.(client.Object)
	if !ok || o.GetManagedFields() == nil {
		// Setting none on an object that has none would add an empty
		// list to an unstructured one, as controller-runtime's own
		// transform knows.
		return obj, nil
	}
	var kept []metav1.ManagedFieldsEntry
	if o.GetObjectKind().GroupVersionKind() == statusGVK {
		var last *metav1.Time
		for _, mf := range o.GetManagedFields() {
			if mf.Time != nil && (last == nil || last.Before(mf.Time)) && ownsStatus(mf) {
				last = mf.Time
			}
		}
		if last != nil {
			kept = []metav1.ManagedFieldsEntry{{Time: last}}
		}
	}
	o.SetManagedFields(kept)
	return obj, nil
}

// ownsStatus reports whether the entry's manager wrote the status: its
// fields hold it at the top (a label named status is "f:status" too, under
// "f:metadata"), or it has none, as the entry this transform keeps, which
// an informer may transform again.
func ownsStatus(mf metav1.ManagedFieldsEntry) bool {
	return mf.FieldsV1 == nil || ownsTop(mf, "f:status")
}

// ownsTop reports whether the entry's fields hold one of keys at their
// top, where an object's own fields are ("f:data" under "f:metadata" is a
// label or an annotation named data); fields it cannot read count.
func ownsTop(mf metav1.ManagedFieldsEntry, keys ...string) bool {
	raw := mf.FieldsV1.GetRawBytes()
	if !slices.ContainsFunc(keys, func(k string) bool { return bytes.Contains(raw, []byte(`"`+k+`"`)) }) {
		// Not even nested: no need to decode (a label-only write).
		return false
	}
	var top map[string]struct{}
	if err := json.Unmarshal(raw, &top); err != nil {
		return true
	}
	for _, k := range keys {
		if _, ok := top[k]; ok {
			return true
		}
	}
	return false
}

// trimWorkload is the cache transform of a workload type that can be
// trimmed. A transform set for a type replaces the default one, so it
// drops managed fields too.
func trimWorkload(trim func(client.Object)) toolscache.TransformFunc {
	return func(obj any) (any, error) {
		if o, ok := obj.(client.Object); ok {
			trim(o)
		}
		return obj, nil
	}
}

// configObject is how ripple reads a ConfigMap's or Secret's metadata.
func configObject(kind refs.Kind) *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind(string(kind)))
	return m
}

func configList(kind refs.Kind) *metav1.PartialObjectMetadataList {
	l := &metav1.PartialObjectMetadataList{}
	l.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind(string(kind) + "List"))
	return l
}

func kindIgnored(o *options.Options, kind refs.Kind) bool {
	return (kind == refs.ConfigMap && o.IgnoreConfigMaps) || (kind == refs.Secret && o.IgnoreSecrets)
}
