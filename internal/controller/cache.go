package controller

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ripple-controller/ripple/internal/annotations"
	"github.com/ripple-controller/ripple/internal/options"
	"github.com/ripple-controller/ripple/internal/refs"
	"github.com/ripple-controller/ripple/internal/workload"
)

// CacheOptions returns the informer cache configuration: only the watched
// namespaces, ConfigMaps and Secrets filtered by the API server and cached
// as trimmed metadata, workloads cut down to what ripple reads of them
// (workload.Type.Trim), managed fields dropped everywhere.
func CacheOptions(o *options.Options) cache.Options {
	opts := cache.Options{
		DefaultTransform: cache.TransformStripManagedFields(),
		ByObject:         map[client.Object]cache.ByObject{},
	}
	if len(o.Namespaces) > 0 {
		opts.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range o.Namespaces {
			opts.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	trim := trimConfigMetadata(o.Keys)
	for _, kind := range refs.Kinds {
		if !kindIgnored(o, kind) {
			opts.ByObject[configObject(kind)] = cache.ByObject{Label: o.ResourceSelector, Transform: trim}
		}
	}
	for _, t := range workload.All {
		if t.Trim != nil {
			opts.ByObject[t.New()] = cache.ByObject{Transform: trimWorkload(t.Trim)}
		}
	}
	return opts
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

// trimConfigMetadata keeps of a ConfigMap's or Secret's metadata only what
// ripple reads: identity, version, creation time and the two annotations an
// object may carry for ripple. Labels and other annotations, kubectl's
// last-applied copy of the data above all, would only cost memory.
func trimConfigMetadata(keys annotations.Keys) toolscache.TransformFunc {
	keep := []string{keys.Ignore, keys.Match}
	return func(obj any) (any, error) {
		m, ok := obj.(*metav1.PartialObjectMetadata)
		if !ok {
			return obj, nil
		}
		var ann map[string]string
		for _, k := range keep {
			if v, ok := m.Annotations[k]; ok {
				if ann == nil {
					ann = make(map[string]string, len(keep))
				}
				ann[k] = v
			}
		}
		m.ObjectMeta = metav1.ObjectMeta{
			Name:              m.Name,
			Namespace:         m.Namespace,
			UID:               m.UID,
			ResourceVersion:   m.ResourceVersion,
			CreationTimestamp: m.CreationTimestamp,
			DeletionTimestamp: m.DeletionTimestamp,
			Annotations:       ann,
		}
		return m, nil
	}
}

// configObject is the cached form of a ConfigMap or Secret: its metadata.
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
