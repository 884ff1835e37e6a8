package controller

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ripple-controller/ripple/internal/digest"
	"github.com/ripple-controller/ripple/internal/refs"
)

// Without --reload-on-create, creating a tracked object rolls nothing, but
// changing its data afterwards does, as in Reloader, even when both happen
// within one debounce window or while ripple is down. A reconcile sees only
// the object as it is now, so it asks for evidence of a change since
// creation: the version ripple saw it created at, read back exactly from
// the API server, or else the object's managed fields.

// birthsKept is how long the version an object was created at is kept: the
// API server can serve an old version only until it compacts etcd, every
// five minutes by default.
const birthsKept = 15 * time.Minute

// births remembers the version at which ripple saw objects created, and
// the last few at which an object may have become tracked on its own side:
// its ignore or match annotation changed, or it came into
// --resource-label-selector's view by a label written after its creation
// (markWatch). As in
// Reloader, a data change after that rolls, and one before it not.
type births struct {
	mu       sync.Mutex
	byUID    map[types.UID]birth
	tracking map[types.UID][]birth
	lastPrun time.Time
}

// marksKept bounds the marks kept of one object: the first, which tells
// whether a workload tracked it before, and the last ones, among which the
// last at which a workload began to track it may be followed by others
// that changed nothing for that workload (match added under auto, say).
// More than that within one debounce is a script, not an edit.
const marksKept = 16

type birth struct {
	version string
	// seen is when ripple saw the creation, by the API server's clock.
	seen time.Time
	// Of births.tracking only: entered says the object came into view;
	// else before holds its ignore and match annotations before they
	// changed, which tell whether a workload tracked it then.
	entered bool
	before  map[string]string
}

func newBirths() births {
	return births{byUID: map[types.UID]birth{}, tracking: map[types.UID][]birth{}}
}

func (b *births) add(obj client.Object, now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.byUID[obj.GetUID()] = birth{version: obj.GetResourceVersion(), seen: now}
	b.prune(now)
}

// entered remembers the version at which the object came into view by a
// label: neither a creation nor a change of its data.
func (b *births) entered(obj client.Object, now time.Time) {
	b.mark(obj, birth{seen: now, entered: true})
}

// marked remembers the version at which the object's ignore or match
// annotation changed from before: neither a creation nor a change of its
// data.
func (b *births) marked(obj client.Object, before map[string]string, now time.Time) {
	b.mark(obj, birth{seen: now, before: before})
}

func (b *births) mark(obj client.Object, m birth) {
	b.mu.Lock()
	defer b.mu.Unlock()
	m.version = obj.GetResourceVersion()
	marks := append(b.tracking[obj.GetUID()], m)
	if len(marks) > marksKept {
		marks = slices.Delete(marks, 1, 2)
	}
	b.tracking[obj.GetUID()] = marks
	b.prune(m.seen)
}

func (b *births) prune(now time.Time) {
	if now.Sub(b.lastPrun) < time.Minute {
		return
	}
	b.lastPrun = now
	for uid, v := range b.byUID {
		if now.Sub(v.seen) > birthsKept {
			delete(b.byUID, uid)
		}
	}
	for uid, marks := range b.tracking {
		if now.Sub(marks[len(marks)-1].seen) > birthsKept {
			delete(b.tracking, uid)
		}
	}
}

func (b *births) forget(uid types.UID) {
	b.mu.Lock()
	delete(b.byUID, uid)
	delete(b.tracking, uid)
	b.mu.Unlock()
}

// forgetThrough forgets what is kept of the object up to its version
// deleted: a mark noted at a later version, where the informer received
// it before its handlers heard of the deletion, is the object back in
// --resource-label-selector's view and stays. Its creation goes: the
// handlers, which note creations, run in order, so it is older.
func (b *births) forgetThrough(uid types.UID, deleted string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.byUID, uid)
	later := slices.DeleteFunc(b.tracking[uid], func(m birth) bool { return !past(m.version, deleted) })
	if len(later) == 0 {
		delete(b.tracking, uid)
		return
	}
	b.tracking[uid] = later
}

// marksOf returns the object's marks kept, oldest first.
func (b *births) marksOf(uid types.UID) []birth {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.tracking[uid])
}

// seenAt returns the API server second ripple saw the object created at,
// 0 if it did not (created before ripple started, or long ago).
func (b *births) seenAt(uid types.UID) int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	if v, ok := b.byUID[uid]; ok {
		return v.seen.Unix()
	}
	return 0
}

func (b *births) version(uid types.UID) (string, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	v, ok := b.byUID[uid]
	return v.version, ok
}

// changedSinceCreation reports whether the data of a tracked object, whose
// cached metadata is meta and whose digest now is cur, differs from its
// data when it was created.
func (d *digests) changedSinceCreation(ctx context.Context, kind refs.Kind, meta client.Object, cur versionSum) (bool, error) {
	createdAt, ok := d.born.version(meta.GetUID())
	if !ok {
		return cur.rewritten(meta), nil
	}
	if createdAt == cur.version {
		// Seen first at this version, which may not be its creation: a
		// relist after a watch gap adds an object at its version then.
		// Its managed fields tell; at its creation, they show no later write.
		return cur.rewritten(meta), nil
	}
	first, found, err := d.versionAt(ctx, kind, meta, createdAt)
	if err != nil || !found {
		// Compacted away or unreadable: the managed fields still tell.
		return cur.rewritten(meta), nil //nolint:nilerr // the fallback is the answer
	}
	// The version seen first may be a relist's, after a data write made
	// during the watch gap: its own managed fields tell.
	return first.sum != cur.sum || first.rewritten(meta), nil
}

// changedSinceTrackable reports whether the data of an object that began
// to be tracked on its own side at the mark then (Reconciler.marks)
// differs from its data then. Compacted away or unreadable, its managed
// fields tell whether it was written in a later second.
func (d *digests) changedSinceTrackable(ctx context.Context, kind refs.Kind, meta client.Object, cur versionSum, then mark) (bool, error) {
	if then.version == "" || then.version == cur.version {
		return false, nil
	}
	first, found, err := d.versionAt(ctx, kind, meta, then.version)
	if err != nil || !found {
		return cur.dataWrittenAt > then.at, nil //nolint:nilerr // the fallback is the answer
	}
	return first.sum != cur.sum, nil
}

// rewritten reports whether the object's managed fields show its data
// written after the second it was created. A change within that second is
// seen only through births.
func (vs versionSum) rewritten(meta client.Object) bool {
	return vs.dataWrittenAt > meta.GetCreationTimestamp().Unix()
}

// versionAt reads the object at exactly one past version, which the API
// server serves from etcd until it compacts it.
func (d *digests) versionAt(ctx context.Context, kind refs.Kind, meta client.Object, version string) (versionSum, bool, error) {
	opts := []client.ListOption{
		client.InNamespace(meta.GetNamespace()),
		client.MatchingFields{"metadata.name": meta.GetName()},
		&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: version, ResourceVersionMatch: metav1.ResourceVersionMatchExact}},
	}
	var list client.ObjectList = &corev1.ConfigMapList{}
	if kind == refs.Secret {
		list = &corev1.SecretList{}
	}
	if err := d.reader.List(ctx, list, opts...); err != nil {
		return versionSum{}, false, fmt.Errorf("reading %s %s at version %s: %w", kind, meta.GetName(), version, err)
	}
	var (
		vs    versionSum
		found bool
	)
	err := apimeta.EachListItem(list, func(o runtime.Object) error {
		if obj, ok := o.(client.Object); ok && obj.GetUID() == meta.GetUID() {
			vs = versionSum{version: version, sum: sumOf(obj), dataWrittenAt: dataWrittenAt(obj)}
			found = true
		}
		return nil
	})
	return vs, found, err
}

// sumOf hashes a ConfigMap's or a Secret's data.
func sumOf(obj client.Object) digest.Sum {
	if s, ok := obj.(*corev1.Secret); ok {
		return digest.Secret(s)
	}
	cm, _ := obj.(*corev1.ConfigMap)
	return digest.ConfigMap(cm)
}

// maxKeySums caps the keys of one object whose digests are kept, for key
// precision (tracked.sum), while it is tracked. A digest per key costs
// about 80 bytes, and only values count towards an object's 1 MiB, so a
// ConfigMap of ~150,000 short keys with empty values would cost 12 MB,
// and twenty of them the chart's memory limit. The keys a pod spec reads
// are a handful, and config files take one key each: 1024 keys is far
// past what a workload reads some keys of, and costs at most ~80 KiB.
const maxKeySums = 1024

// keySumsOf returns the digest of each key of an object whose data has
// the digest whole, or, past maxKeySums keys, digest.Whole: a workload
// that reads some keys of it then rolls when any of its keys changes.
func keySumsOf(obj client.Object, whole digest.Sum) map[string]digest.Sum {
	name := digest.Qualified(obj.GetNamespace(), obj.GetName())
	if s, ok := obj.(*corev1.Secret); ok {
		if len(s.Data) > maxKeySums {
			return digest.Whole(whole)
		}
		return digest.KeySums("Secret", name, nil, s.Data)
	}
	cm, _ := obj.(*corev1.ConfigMap)
	if len(cm.Data)+len(cm.BinaryData) > maxKeySums {
		return digest.Whole(whole)
	}
	return digest.KeySums("ConfigMap", name, cm.Data, cm.BinaryData)
}

// dataWrittenAt returns the last second a manager that owns the object's
// data wrote it, by its managed fields, and at least its creation. A
// server-side apply of a Secret's stringData is recorded under stringData,
// not the data it is stored as.
func dataWrittenAt(obj client.Object) int64 {
	last := obj.GetCreationTimestamp().Unix()
	for _, mf := range obj.GetManagedFields() {
		if mf.Time == nil || mf.Time.Unix() <= last || mf.FieldsV1 == nil {
			continue
		}
		if ownsTop(mf, "f:data", "f:binaryData", "f:stringData") {
			last = mf.Time.Unix()
		}
	}
	return last
}
