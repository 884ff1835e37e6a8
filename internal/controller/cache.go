package controller

import (
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ripple-controller/ripple/internal/annotations"
	"github.com/ripple-controller/ripple/internal/digest"
	"github.com/ripple-controller/ripple/internal/options"
)

// CacheOptions returns the informer cache configuration: only the watched
// namespaces, ConfigMaps and Secrets filtered by the API server and reduced
// to a digest, managed fields dropped everywhere.
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
	sel := o.ResourceSelector
	if !o.IgnoreConfigMaps {
		opts.ByObject[&corev1.ConfigMap{}] = cache.ByObject{Label: sel, Transform: reduceToDigest}
	}
	if !o.IgnoreSecrets {
		opts.ByObject[&corev1.Secret{}] = cache.ByObject{Label: sel, Transform: reduceToDigest}
	}
	return opts
}

// reduceToDigest replaces the data of a ConfigMap or Secret with its digest,
// so that the cache never holds a Secret's values and stays small however
// large the objects are.
func reduceToDigest(obj any) (any, error) {
	var sum digest.Sum
	var meta client.Object
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		if reduced(o, o.Data == nil && o.BinaryData == nil) {
			return o, nil
		}
		sum, meta = digest.ConfigMap(o), o
		o.Data, o.BinaryData = nil, nil
	case *corev1.Secret:
		if reduced(o, o.Data == nil && o.StringData == nil) {
			return o, nil
		}
		sum, meta = digest.Secret(o), o
		o.Data, o.StringData = nil, nil
	default:
		return obj, nil
	}
	ann := meta.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	// kubectl apply keeps the whole object, data included, in this
	// annotation: keeping it would keep every applied Secret's values.
	delete(ann, lastApplied)
	ann[annotations.DataDigest] = sum.String()
	meta.SetAnnotations(ann)
	meta.SetManagedFields(nil)
	return obj, nil
}

const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// reduced tells an object the transform already handled: client-go may hand
// the same object to the transform twice.
func reduced(o client.Object, empty bool) bool {
	_, ok := o.GetAnnotations()[annotations.DataDigest]
	return ok && empty
}

// dataDigest reads the digest that reduceToDigest left on a cached object.
func dataDigest(o client.Object) (digest.Sum, bool) {
	return digest.ParseSum(o.GetAnnotations()[annotations.DataDigest])
}
