package controller

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ripple-controller/ripple/internal/digest"
	"github.com/ripple-controller/ripple/internal/refs"
)

// digests holds the data digest of each tracked ConfigMap and Secret at one
// resourceVersion. The informer cache keeps their metadata only, so the data
// of a Secret no workload tracks never reaches ripple, and the data of a
// tracked object is in memory only while one GET, or for a ConfigMap one
// event of its feed, is decoded and hashed.
type digests struct {
	reader client.Reader // reads the API server, never a cache
	flight singleflight.Group
	// listing lets one LIST of ConfigMaps with their data run at a time,
	// and wanted holds, by namespace, the objects the reconciles that share
	// it want (prefetch).
	listing sync.Mutex
	wanted  map[string]map[types.UID]bool

	mu    sync.Mutex
	byUID map[types.UID]versionSum
	// gone holds the objects deleted lately, by when: a GET, a page of a
	// LIST or a feed event that answers after the deletion does not keep
	// a digest no later event would drop.
	gone       map[types.UID]time.Time
	lastPruned time.Time
	// lastWords holds the annotations for ripple that objects deleted
	// lately carried (configMeta's), by kind and name: an ignore annotation
	// written just before a deletion, both within one debounce, still says
	// the deletion is none of a tracked object's, as Reloader, which reads
	// the deleted object, has it.
	lastWords map[objectKey]lastWord
	born      births
	// now tells the API server's time, which births are seen in.
	now func() time.Time
	// fed holds the namespaces whose ConfigMaps a feed watches now, ""
	// for all, each with the version its watch started at; awaited the
	// ConfigMap versions a reconcile waits for.
	fed     map[string]string
	awaited map[string]chan struct{}
	// wait bounds a wait for the feed: feedWait but in tests.
	wait time.Duration
}

// feedWait bounds the wait for a feed's event of a ConfigMap version the
// cache already holds; the two watches see a change at about the same
// time, and a GET follows a wait in vain.
const feedWait = 500 * time.Millisecond

type versionSum struct {
	version string
	sum     digest.Sum
	// keys holds the digest of each key, for workloads that read only
	// some (tracked.sum), or, past maxKeySums keys, digest.Whole.
	keys map[string]digest.Sum
	// dataWrittenAt is the last second the object's data was written.
	dataWrittenAt int64
	// immutable is the object's immutable field: the kubelet stops
	// watching such an object, so a refresh in place cannot deliver it.
	immutable bool
}

func newDigests(reader client.Reader, now func() time.Time) *digests {
	return &digests{reader: reader, now: now, byUID: map[types.UID]versionSum{}, gone: map[types.UID]time.Time{}, lastWords: map[objectKey]lastWord{}, born: newBirths(),
		fed: map[string]string{}, awaited: map[string]chan struct{}{}, wait: feedWait, wanted: map[string]map[types.UID]bool{}}
}

// of returns the digest of the object whose cached metadata is meta; found
// is false when the object is gone from the API server. Workloads that share
// an object share one GET, or one wait for its feed, per version.
func (d *digests) of(ctx context.Context, kind refs.Kind, meta client.Object) (vs versionSum, found bool, err error) {
	if vs, ok := d.lookup(meta.GetUID()); ok && vs.holds(meta.GetResourceVersion()) {
		return vs, true, nil
	}
	v, err, _ := d.flight.Do(versionKey(meta), func() (any, error) {
		if vs, ok := d.fromFeed(ctx, kind, meta); ok {
			return &vs, nil
		}
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
	vs := d.store(obj)
	return &vs, nil
}

// store keeps the digest of a ConfigMap or Secret read from the API server
// and returns the newest it holds: two GETs, or a page of a LIST, may
// answer after the feed or a GET stored a newer version.
func (d *digests) store(obj client.Object) versionSum {
	vs := sumVersion(obj)
	d.mu.Lock()
	defer d.mu.Unlock()
	if prev, ok := d.byUID[obj.GetUID()]; ok && newerVersion(prev.version, vs.version) {
		return prev
	}
	if _, deleted := d.gone[obj.GetUID()]; !deleted {
		d.byUID[obj.GetUID()] = vs
	}
	return vs
}

// sumVersion hashes the data of one version of a ConfigMap or Secret.
// Past maxKeySums keys, it keeps no digest per key (keySumsOf).
func sumVersion(obj client.Object) versionSum {
	sum := sumOf(obj)
	return versionSum{version: obj.GetResourceVersion(), sum: sum, keys: keySumsOf(obj, sum), dataWrittenAt: dataWrittenAt(obj),
		immutable: isImmutable(obj)}
}

func isImmutable(obj client.Object) bool {
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		return o.Immutable != nil && *o.Immutable
	case *corev1.Secret:
		return o.Immutable != nil && *o.Immutable
	}
	return false
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

func versionKey(meta client.Object) string {
	return string(meta.GetUID()) + "/" + meta.GetResourceVersion()
}

// fromFeed waits, for at most feedWait, for the feed to hash the version of
// a tracked ConfigMap that the cache holds, and returns at once when the
// feed hashed that version and a newer one since. It does not wait for an
// object not tracked yet, whose current version may be older than the
// feed: at start, every object is read once. Nor for a version the feed's
// watch started past, which it will never send: after a watch started over
// (its version too old), each ConfigMap changed in the gap cost a reconcile
// a wait in vain, one after the other.
func (d *digests) fromFeed(ctx context.Context, kind refs.Kind, meta client.Object) (versionSum, bool) {
	if kind != refs.ConfigMap {
		return versionSum{}, false
	}
	key := versionKey(meta)
	d.mu.Lock()
	vs, tracked := d.byUID[meta.GetUID()]
	from, fed := d.feedStart(meta.GetNamespace())
	if !tracked || !fed {
		d.mu.Unlock()
		return versionSum{}, false
	}
	if vs.holds(meta.GetResourceVersion()) {
		d.mu.Unlock()
		return vs, true
	}
	if !newerVersion(meta.GetResourceVersion(), from) {
		d.mu.Unlock()
		return versionSum{}, false
	}
	ch, ok := d.awaited[key]
	if !ok {
		ch = make(chan struct{})
		d.awaited[key] = ch
	}
	d.mu.Unlock()
	t := time.NewTimer(d.wait)
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C:
	case <-ctx.Done():
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.awaited[key] == ch {
		delete(d.awaited, key)
	}
	vs = d.byUID[meta.GetUID()]
	return vs, vs.holds(meta.GetResourceVersion())
}

// holds reports whether vs is the digest of that version or of a newer
// one, which is what the API server would answer now.
func (vs versionSum) holds(version string) bool {
	return vs.version == version || newerVersion(vs.version, version)
}

// newerVersion reports whether resource version a is newer than b. The
// API server's resource versions of one resource compare as integers
// (resourceversion.CompareResourceVersion); one that is not well formed,
// from an API server that does not keep that rule, is newer than none.
func newerVersion(a, b string) bool {
	c, err := resourceversion.CompareResourceVersion(a, b)
	return err == nil && c > 0
}

// observe keeps the digest of a ConfigMap version its feed saw, when the
// ConfigMap is tracked or the version awaited, and wakes whoever awaits it.
// Any other ConfigMap is dropped unhashed. Whether to keep it is asked
// again once it is hashed: a delete may have come in between.
func (d *digests) observe(cm *corev1.ConfigMap) {
	key := versionKey(cm)
	d.mu.Lock()
	_, tracked := d.byUID[cm.UID]
	_, awaited := d.awaited[key]
	d.mu.Unlock()
	if !tracked && !awaited {
		return
	}
	vs := sumVersion(cm)
	d.mu.Lock()
	defer d.mu.Unlock()
	prev, tracked := d.byUID[cm.UID]
	ch, awaited := d.awaited[key]
	if !tracked && !awaited {
		return
	}
	// A GET may have read a newer version than this event's; keeping
	// the older one would roll the workloads back to it, and then on.
	if _, deleted := d.gone[cm.UID]; !deleted && (!tracked || !newerVersion(prev.version, vs.version)) {
		d.byUID[cm.UID] = vs
	}
	if awaited {
		delete(d.awaited, key)
		close(ch)
	}
}

// feedStart returns the version the watch of the feed of ns's ConfigMaps
// started at, and whether one watches them now. Callers hold d.mu.
func (d *digests) feedStart(ns string) (string, bool) {
	if from, ok := d.fed[""]; ok {
		return from, true
	}
	from, ok := d.fed[ns]
	return from, ok
}

// feedStarted records that a feed watches the ConfigMaps of ns from the
// version from on.
func (d *digests) feedStarted(ns, from string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.fed[ns] = from
}

// feedStopped records that the feed of ns's ConfigMaps stopped: whoever
// awaits its events reads with a GET at once.
func (d *digests) feedStopped(ns string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.fed, ns)
	for key, ch := range d.awaited {
		delete(d.awaited, key)
		close(ch)
	}
}

// forget drops the digest of a deleted object.
func (d *digests) forget(uid types.UID) {
	now := time.Now()
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.byUID, uid)
	d.gone[uid] = now
	if now.Sub(d.lastPruned) < goneKept {
		return
	}
	d.lastPruned = now
	for uid, at := range d.gone {
		if now.Sub(at) > goneKept {
			delete(d.gone, uid)
		}
	}
	for key, w := range d.lastWords {
		if now.Sub(w.at) > goneKept {
			delete(d.lastWords, key)
		}
	}
}

// objectKey names a ConfigMap or Secret by kind, namespace and name.
type objectKey struct {
	kind refs.Kind
	types.NamespacedName
}

type lastWord struct {
	annotations map[string]string
	at          time.Time
}

// deleted keeps the annotations a deleted object carried last, under its
// kind and namespaced name, for goneKept: forget, called first, prunes.
func (d *digests) deleted(kind refs.Kind, obj client.Object) {
	now := time.Now()
	d.mu.Lock()
	defer d.mu.Unlock()
	d.lastWords[objectKey{kind, client.ObjectKeyFromObject(obj)}] = lastWord{annotations: obj.GetAnnotations(), at: now}
}

// lastAnnotations returns the annotations the object of the kind and key
// carried when it was deleted lately.
func (d *digests) lastAnnotations(kind refs.Kind, key types.NamespacedName) (map[string]string, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	w, ok := d.lastWords[objectKey{kind, key}]
	return w.annotations, ok
}

// back drops a deletion of an object that came back into view: an object
// leaving --resource-label-selector is seen deleted.
func (d *digests) back(uid types.UID) {
	d.mu.Lock()
	delete(d.gone, uid)
	d.mu.Unlock()
}

// goneKept is how long a deletion is remembered: longer than a GET or a
// LIST page takes to answer, and UIDs are never used again.
const goneKept = 5 * time.Minute

// bulkMin is how many objects of one namespace must lack a digest before a
// paged LIST costs less than one GET each: a reload list that matches
// thousands of objects is recorded in seconds, not at the client's rate
// limit. A page holds every ConfigMap of the namespace in scope, with its
// data, wanted or not, and a ConfigMap may hold 1 MiB (Helm's releases
// stored as ConfigMaps are often hundreds of KiB, listed after a
// namespace's small ones): 100 of those to a page were 100 MiB before
// decoding, against the chart's 256 MiB limit. A page asks as many as fit
// bulkPageBytes at the size of the largest ConfigMap seen, from bulkMinPage
// to bulkPage: at most 25 MiB, and 10 MiB in a namespace of large ones.
const (
	bulkMin       = 32
	bulkMinPage   = 10
	bulkPage      = 25
	bulkPageBytes = 4 << 20
)

// pageLimit is the size of the LIST's next page, the largest ConfigMap
// seen holding largest bytes.
func pageLimit(largest int) int64 {
	return int64(min(max(bulkPageBytes/max(largest, 1), bulkMinPage), bulkPage))
}

// dataSize is about what a ConfigMap's data takes.
func dataSize(cm *corev1.ConfigMap) int {
	n := 0
	for k, v := range cm.Data {
		n += len(k) + len(v)
	}
	for k, v := range cm.BinaryData {
		n += len(k) + len(v)
	}
	return n
}

// prefetch reads, with one paged LIST of the namespace's ConfigMaps in
// ripple's scope (sel), the digests of those whose digest at their cached
// version is not known yet, when there are at least bulkMin of them.
// Secrets are read one GET each, so that the data of a Secret no workload
// uses never reaches ripple.
//
// One LIST runs at a time, and reconciles that want the same namespace's
// objects meanwhile share it, each adding what it wants: at start, every
// workload under a reload list wants the same objects, and each of
// ripple's workers holding pages of data at once could run it out of
// memory. A reconcile that still wants many after the shared LIST (it
// joined once the LIST had passed them) runs one more; it reads what is
// left one GET each.
func (d *digests) prefetch(ctx context.Context, kind refs.Kind, ns string, sel labels.Selector, metas []client.Object) error {
	if kind != refs.ConfigMap {
		return nil
	}
	for range 2 {
		want := d.unknown(metas)
		if len(want) < bulkMin {
			return nil
		}
		d.want(ns, want)
		if _, err, _ := d.flight.Do("list/"+ns, func() (any, error) { return nil, d.list(ctx, ns, sel) }); err != nil {
			return err
		}
	}
	return nil
}

// unknown returns the objects whose digest at their cached version is not
// known.
func (d *digests) unknown(metas []client.Object) map[types.UID]bool {
	want := map[types.UID]bool{}
	for _, m := range metas {
		if vs, ok := d.lookup(m.GetUID()); !ok || !vs.holds(m.GetResourceVersion()) {
			want[m.GetUID()] = true
		}
	}
	return want
}

func (d *digests) want(ns string, uids map[types.UID]bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.wanted[ns] == nil {
		d.wanted[ns] = map[types.UID]bool{}
	}
	maps.Copy(d.wanted[ns], uids)
}

// take reports whether the object is wanted, and no longer wants it; left
// is how many are still wanted in the namespace.
func (d *digests) take(ns string, uid types.UID) (wanted bool, left int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	wanted = d.wanted[ns][uid]
	delete(d.wanted[ns], uid)
	return wanted, len(d.wanted[ns])
}

// list pages through the namespace's ConfigMaps until it has stored the
// digest of each one wanted.
func (d *digests) list(ctx context.Context, ns string, sel labels.Selector) error {
	d.listing.Lock()
	defer d.listing.Unlock()
	// A reconcile may add its wants as a LIST ends and find them gone:
	// it runs another, which has nothing to do when a LIST served it.
	d.mu.Lock()
	idle := len(d.wanted[ns]) == 0
	d.mu.Unlock()
	if idle {
		return nil
	}
	defer func() {
		d.mu.Lock()
		delete(d.wanted, ns)
		d.mu.Unlock()
	}()
	opts := &client.ListOptions{Namespace: ns, LabelSelector: sel}
	var largest int
	for {
		opts.Limit = pageLimit(largest)
		list := &corev1.ConfigMapList{}
		if err := d.reader.List(ctx, list, opts); err != nil {
			return fmt.Errorf("listing ConfigMaps in %s: %w", ns, err)
		}
		left := 1
		for i := range list.Items {
			largest = max(largest, dataSize(&list.Items[i]))
			var wanted bool
			if wanted, left = d.take(ns, list.Items[i].UID); wanted {
				d.store(&list.Items[i])
			}
		}
		if opts.Continue = list.GetContinue(); opts.Continue == "" || left == 0 {
			return nil
		}
	}
}
