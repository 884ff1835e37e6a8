package controller

import (
	"context"
	"fmt"
	"sync"

	"golang.org/x/sync/singleflight"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ripple-controller/ripple/internal/digest"
	"github.com/ripple-controller/ripple/internal/refs"
)

// digests holds the data digest of each tracked ConfigMap and Secret at one
// resourceVersion. The informer cache keeps their metadata only, so the data
// of objects no workload tracks never reaches ripple, and the data of a
// tracked one is in memory only while one GET is decoded and hashed.
type digests struct {
	reader client.Reader // reads the API server, never a cache
	flight singleflight.Group

	mu    sync.Mutex
	byUID map[types.UID]versionSum
	born  births
}

type versionSum struct {
	version string
	sum     digest.Sum
	// rewritten says the object's managed fields show its data written
	// after it was created.
	rewritten bool
}

func newDigests(reader client.Reader) *digests {
	return &digests{reader: reader, byUID: map[types.UID]versionSum{}, born: births{byUID: map[types.UID]birth{}}}
}

// of returns the digest of the object whose cached metadata is meta; found
// is false when the object is gone from the API server. Workloads that share
// an object share one GET per version.
func (d *digests) of(ctx context.Context, kind refs.Kind, meta client.Object) (vs versionSum, found bool, err error) {
	if vs, ok := d.lookup(meta.GetUID()); ok && vs.version == meta.GetResourceVersion() {
		return vs, true, nil
	}
	key := string(meta.GetUID()) + "/" + meta.GetResourceVersion()
	v, err, _ := d.flight.Do(key, func() (any, error) {
		return d.fetch(ctx, kind, client.ObjectKeyFromObject(meta))
	})
	if err != nil {
		return versionSum{}, false, err
	}
	got, ok := v.(*versionSum)
	if !ok || got == nil {
		return versionSum{}, false, nil
	}
	return *got, true, nil
}

// fetch reads the object from the API server, which holds at least the
// version the cache saw, and keeps only its digest.
func (d *digests) fetch(ctx context.Context, kind refs.Kind, key types.NamespacedName) (*versionSum, error) {
	var obj client.Object = &corev1.ConfigMap{}
	if kind == refs.Secret {
		obj = &corev1.Secret{}
	}
	if err := d.reader.Get(ctx, key, obj); err != nil {
		return nil, ignoreGone(kind, key, err)
	}
	sum := sumOf(obj)
	vs := versionSum{version: obj.GetResourceVersion(), sum: sum, rewritten: dataRewritten(obj)}
	d.mu.Lock()
	d.byUID[obj.GetUID()] = vs
	d.mu.Unlock()
	return &vs, nil
}

func ignoreGone(kind refs.Kind, key types.NamespacedName, err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return fmt.Errorf("reading %s %s: %w", kind, key, err)
}

func (d *digests) lookup(uid types.UID) (versionSum, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	vs, ok := d.byUID[uid]
	return vs, ok
}

// forget drops the digest of a deleted object.
func (d *digests) forget(uid types.UID) {
	d.mu.Lock()
	delete(d.byUID, uid)
	d.mu.Unlock()
}
