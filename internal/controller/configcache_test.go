package controller

import (
	"context"
	"errors"
	"maps"
	"reflect"
	"slices"
	"testing"
	"time"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ripple-controller/ripple/internal/annotations"
	"github.com/ripple-controller/ripple/internal/refs"
)

// cachedSecrets is a Secret cache of one namespace whose informer never
// runs: its indexer holds what the test adds.
func cachedSecrets(t *testing.T, ns string, metas ...*metav1.PartialObjectMetadata) configReads {
	t.Helper()
	inf := toolscache.NewSharedIndexInformerWithOptions(&toolscache.ListWatch{}, &metav1.PartialObjectMetadata{},
		toolscache.SharedIndexInformerOptions{Indexers: toolscache.Indexers{toolscache.NamespaceIndex: namespaceOf}})
	compact := compactConfig(annotations.DefaultKeys(), nil)
	for _, m := range metas {
		obj, _ := compact(m)
		if err := inf.GetIndexer().Add(obj); err != nil {
			t.Fatal(err)
		}
	}
	return configReads{caches: configCaches{refs.Secret: {kind: refs.Secret, informers: map[string]toolscache.SharedIndexInformer{ns: inf}}}}
}

func secretMeta(ns, name string) *metav1.PartialObjectMetadata {
	m := configObject(refs.Secret)
	m.Namespace, m.Name, m.ResourceVersion = ns, name, "7"
	return m
}

func TestConfigReads_GetsCachedMetadata(t *testing.T) {
	c := cachedSecrets(t, "team", secretMeta("team", "db"))
	tests := []struct {
		name     string
		key      types.NamespacedName
		version  string
		notFound bool
		fails    bool
	}{
		{name: "a cached Secret is read with its version", key: types.NamespacedName{Namespace: "team", Name: "db"}, version: "7"},
		{name: "a Secret not cached is not found", key: types.NamespacedName{Namespace: "team", Name: "gone"}, notFound: true},
		{name: "a namespace not watched is an error, not a deletion", key: types.NamespacedName{Namespace: "other", Name: "db"}, fails: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := configObject(refs.Secret)
			err := c.Get(context.Background(), tt.key, got)
			switch {
			case tt.notFound:
				if !apierrors.IsNotFound(err) {
					t.Errorf("err = %v, want not found", err)
				}
			case tt.fails:
				if err == nil || apierrors.IsNotFound(err) {
					t.Errorf("err = %v, want an error other than not found", err)
				}
			case err != nil || got.ResourceVersion != tt.version || got.Kind != "Secret":
				t.Errorf("got %+v, %v", got, err)
			}
		})
	}
}

func TestConfigReads_ListsANamespace(t *testing.T) {
	c := cachedSecrets(t, metav1.NamespaceAll, secretMeta("team", "a"), secretMeta("team", "b"), secretMeta("other", "c"))
	list := configList(refs.Secret)
	if err := c.List(context.Background(), list, client.InNamespace("team")); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range list.Items {
		names = append(names, m.Namespace+"/"+m.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"team/a", "team/b"}) {
		t.Errorf("listed %v, want team/a and team/b", names)
	}
	if err := c.List(context.Background(), configList(refs.Secret)); err == nil {
		t.Error("a list of every namespace was served; the caches index by namespace only")
	}
}

func TestCompactConfig_SharesANamespaceString(t *testing.T) {
	compact := compactConfig(annotations.DefaultKeys(), nil)
	a, _ := compact(secretMeta(string([]byte("team")), "a"))
	b, _ := compact(secretMeta(string([]byte("team")), "b"))
	if unsafe.StringData(a.(*configMeta).namespace) != unsafe.StringData(b.(*configMeta).namespace) {
		t.Error("two objects of one namespace hold two copies of its name")
	}
}

func TestCompactConfig_KeepsOnlyWhatRippleReads(t *testing.T) {
	created := metav1.Unix(1700000000, 0)
	deleted := metav1.Unix(1700000100, 0)
	full := func() *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
			Name: "app", Namespace: "team", UID: "u-1", ResourceVersion: "42", Generation: 3,
			CreationTimestamp: created, DeletionTimestamp: &deleted,
			Labels: map[string]string{"app": "web"},
			Annotations: map[string]string{
				annotations.Ignore: "true",
				annotations.Match:  "true",
				"kubectl.kubernetes.io/last-applied-configuration": `{"data":{"password":"hunter2"}}`,
				"team.example/owner": "web",
			},
			OwnerReferences: []metav1.OwnerReference{{Name: "owner"}},
			Finalizers:      []string{"example/finalizer"},
			ManagedFields:   []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
		}}
	}
	keptAnnotations := map[string]string{annotations.Ignore: "true", annotations.Match: "true"}
	want := metav1.ObjectMeta{
		Name: "app", Namespace: "team", UID: "u-1", ResourceVersion: "42",
		CreationTimestamp: created, Annotations: keptAnnotations,
	}
	bare := full()
	bare.Annotations = map[string]string{"team.example/owner": "web"}
	wantBare := want
	wantBare.Annotations = nil

	compact := compactConfig(annotations.DefaultKeys(), nil)
	tests := []struct {
		name string
		in   *metav1.PartialObjectMetadata
		want metav1.ObjectMeta
	}{
		{name: "labels, owners, finalizers, managed fields and other annotations go", in: full(), want: want},
		{name: "no annotation of ripple's leaves no annotation map", in: bare, want: wantBare},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := compact(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			got := out.(*configMeta).object(refs.Secret)
			if !reflect.DeepEqual(got.ObjectMeta, tt.want) || got.Kind != "Secret" || got.APIVersion != "v1" {
				t.Errorf("compacted = %+v\nwant        %+v", got, tt.want)
			}
			again, _ := compact(out)
			if again != out {
				t.Error("compacting twice changed the object: client-go may transform an object twice")
			}
		})
	}
}

func TestCompactConfig_LeavesOtherObjectsAlone(t *testing.T) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app", Labels: map[string]string{"a": "b"}}}
	out, err := compactConfig(annotations.DefaultKeys(), nil)(cm)
	if err != nil || out != cm || cm.Labels["a"] != "b" {
		t.Errorf("a typed object was changed: %v, %v", out, err)
	}
}

// TestFanout_ForgetsAnObjectReplacedWithinARelist: a relist reports an
// object deleted and created again under its name as one update, with a
// new UID; the digest kept for the old UID would stay for good.
func TestFanout_ForgetsAnObjectReplacedWithinARelist(t *testing.T) {
	sums := newDigests(nil, time.Now)
	f := &fanout{kind: refs.ConfigMap, name: client.Object.GetName, digests: sums, inScope: func(client.Object) bool { return true }}
	old := &configMeta{namespace: "team", name: "cfg", uid: "u-1", version: "5"}
	replaced := &configMeta{namespace: "team", name: "cfg", uid: "u-2", version: "9"}
	sums.byUID["u-1"] = versionSum{version: "5"}
	sums.born.add(old.object(refs.ConfigMap), time.Now())

	f.handlers().OnUpdate(old, replaced)

	if _, kept := sums.lookup("u-1"); kept {
		t.Error("the digest of the object replaced is kept")
	}
	if _, kept := sums.born.version("u-1"); kept {
		t.Error("the creation of the object replaced is kept")
	}
}

// TestMarkWatch_NotedBeforeTheStoreHoldsTheVersion: a change of the
// ignore or match annotation, or under --resource-label-selector an entry
// into view by a label written after the creation, is where a data change
// starts to roll (changedSinceTrackable). It is noted as the informer
// receives the version, compared with the last version received, which
// the store may not hold yet; other writes, creations seen late and the
// initial list are not.
func TestMarkWatch_NotedBeforeTheStoreHoldsTheVersion(t *testing.T) {
	ignored := map[string]string{annotations.Ignore: "true"}
	created := time.Unix(1000, 0)
	at := func(uid types.UID, version string, ann map[string]string) *configMeta {
		return &configMeta{namespace: "ns", name: "cfg", uid: uid, version: version, created: created.Unix(), annotations: ann}
	}
	labelled := func(after time.Duration) *metav1.PartialObjectMetadata {
		written := metav1.NewTime(created.Add(after))
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(created),
			ManagedFields: []metav1.ManagedFieldsEntry{{Time: &written, FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:labels":{"f:reload":{}}}}`)}}}}
	}
	unlabelled := &metav1.PartialObjectMetadata{}
	dataKeyLabels := labelled(time.Minute)
	dataKeyLabels.ManagedFields[0].FieldsV1 = metav1.NewFieldsV1(`{"f:data":{"f:labels":{}}}`)

	type noted struct {
		version string
		entered bool
		before  map[string]string
	}
	tests := []struct {
		name     string
		stored   *configMeta
		selector bool
		synced   bool
		run      func(observe func(*configMeta, *metav1.PartialObjectMetadata))
		want     []noted
	}{
		{"ignore removed", at("u", "5", ignored), false, true, func(observe func(*configMeta, *metav1.PartialObjectMetadata)) { observe(at("u", "6", nil), unlabelled) },
			[]noted{{"6", false, ignored}}},
		{"a data or label write", at("u", "5", ignored), false, true, func(observe func(*configMeta, *metav1.PartialObjectMetadata)) {
			observe(at("u", "6", ignored), unlabelled)
		}, nil},
		{"first sight", nil, false, true, func(observe func(*configMeta, *metav1.PartialObjectMetadata)) {
			observe(at("u", "6", nil), labelled(time.Minute))
		}, nil},
		{"the same version again, in a relist", at("u", "5", ignored), false, true, func(observe func(*configMeta, *metav1.PartialObjectMetadata)) { observe(at("u", "5", nil), unlabelled) }, nil},
		{"another object under the same name", at("old", "5", ignored), false, true, func(observe func(*configMeta, *metav1.PartialObjectMetadata)) { observe(at("u", "6", nil), unlabelled) }, nil},
		{"a data write after ignore removed, before the store holds the removal", at("u", "5", ignored), false, true, func(observe func(*configMeta, *metav1.PartialObjectMetadata)) {
			observe(at("u", "6", nil), unlabelled)
			observe(at("u", "7", nil), unlabelled)
		}, []noted{{"6", false, ignored}}},
		{"ignore put back before the store holds its removal", at("u", "5", ignored), false, true, func(observe func(*configMeta, *metav1.PartialObjectMetadata)) {
			observe(at("u", "6", nil), unlabelled)
			observe(at("u", "7", ignored), unlabelled)
		}, []noted{{"6", false, ignored}, {"7", false, nil}}},
		{"into view by a label written after the creation", nil, true, true, func(observe func(*configMeta, *metav1.PartialObjectMetadata)) {
			observe(at("u", "6", nil), labelled(time.Minute))
		},
			[]noted{{"6", true, nil}}},
		{"into view by a label, then its data written before the store holds it", nil, true, true, func(observe func(*configMeta, *metav1.PartialObjectMetadata)) {
			observe(at("u", "6", nil), labelled(time.Minute))
			observe(at("u", "7", nil), labelled(time.Minute))
		}, []noted{{"6", true, nil}}},
		{"created labelled, a data key named labels written later, seen late", nil, true, true, func(observe func(*configMeta, *metav1.PartialObjectMetadata)) {
			observe(at("u", "6", nil), dataKeyLabels)
		}, nil},
		{"created labelled and seen late", nil, true, true, func(observe func(*configMeta, *metav1.PartialObjectMetadata)) {
			observe(at("u", "6", nil), labelled(0))
		}, nil},
		{"in the initial list", nil, true, false, func(observe func(*configMeta, *metav1.PartialObjectMetadata)) {
			observe(at("u", "6", nil), labelled(time.Minute))
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			born := newBirths()
			k := &markWatch{kind: refs.ConfigMap, born: &born, now: time.Now, selector: tt.selector, pending: map[types.UID]pendingVersion{},
				cached: func(types.NamespacedName) (*configMeta, error) {
					if tt.stored == nil {
						return nil, apierrors.NewNotFound(corev1.Resource("configmaps"), "cfg")
					}
					return tt.stored, nil
				}}
			tt.run(func(m *configMeta, obj *metav1.PartialObjectMetadata) {
				k.observe(m, obj, func() bool { return tt.synced })
			})
			var got []noted
			for _, b := range born.marksOf("u") {
				got = append(got, noted{b.version, b.entered, b.before})
			}
			if !slices.EqualFunc(got, tt.want, func(a, b noted) bool {
				return a.version == b.version && a.entered == b.entered && maps.Equal(a.before, b.before)
			}) {
				t.Errorf("noted %v, want %v", got, tt.want)
			}
		})
	}
}

// TestMarkWatch_ThePendingVersionIsDroppedOnceHandled: once the handlers
// have a version, the store holds it, and the next version compares with
// it; a deleted object is dropped.
func TestMarkWatch_ThePendingVersionIsDroppedOnceHandled(t *testing.T) {
	stored := &configMeta{namespace: "ns", name: "cfg", uid: "u", version: "5", annotations: map[string]string{annotations.Ignore: "true"}}
	born := newBirths()
	k := &markWatch{kind: refs.ConfigMap, born: &born, now: time.Now, pending: map[types.UID]pendingVersion{},
		cached: func(types.NamespacedName) (*configMeta, error) { return stored, nil }}
	unignored := &configMeta{namespace: "ns", name: "cfg", uid: "u", version: "6"}
	synced := func() bool { return true }
	k.observe(unignored, &metav1.PartialObjectMetadata{}, synced)
	k.handled(&configMeta{uid: "u", version: "5"}, false)
	if len(k.pending) != 1 {
		t.Fatal("an older version handled dropped the pending one")
	}
	k.handled(unignored, false)
	if len(k.pending) != 0 {
		t.Fatal("the pending version stays once handled")
	}
	k.observe(&configMeta{namespace: "ns", name: "cfg", uid: "u", version: "7"}, &metav1.PartialObjectMetadata{}, synced)
	k.handled(toolscache.DeletedFinalStateUnknown{Obj: &configMeta{uid: "u", version: "6"}}, true)
	if len(k.pending) != 0 {
		t.Fatal("a deleted object stays pending")
	}
}

// TestFanout_KeepsTheDigestOfAnObjectBackInView: an object that leaves
// --resource-label-selector is seen deleted, and comes back as an add; its
// digest is kept again, or each reconcile read it anew, a GET or a LIST.
func TestFanout_KeepsTheDigestOfAnObjectBackInView(t *testing.T) {
	sums := newDigests(nil, time.Now)
	f := &fanout{kind: refs.ConfigMap, name: client.Object.GetName, digests: sums, inScope: func(client.Object) bool { return true }}
	cfg := &configMeta{namespace: "team", name: "cfg", uid: "uid-app", version: "5"}

	f.handlers().OnDelete(cfg)
	f.handlers().OnAdd(cfg, false)
	sums.store(configMapAt("6"))

	if _, kept := sums.lookup("uid-app"); !kept {
		t.Error("the digest of an object back in view is not kept")
	}
}

// TestFanout_ForgetsADeletedObjectHoweverItsDeletionIsSeen: a deletion the
// informer learns of only by relisting arrives as a tombstone, which is
// the same deletion (and rolls under --reload-on-delete).
func TestFanout_ForgetsADeletedObjectHoweverItsDeletionIsSeen(t *testing.T) {
	cfg := &configMeta{namespace: "team", name: "cfg", uid: "uid-app", version: "5"}
	for name, seen := range map[string]any{
		"as the object":  cfg,
		"as a tombstone": toolscache.DeletedFinalStateUnknown{Key: "team/cfg", Obj: cfg},
	} {
		t.Run(name, func(t *testing.T) {
			sums := newDigests(nil, time.Now)
			f := &fanout{kind: refs.ConfigMap, name: client.Object.GetName, digests: sums, inScope: func(client.Object) bool { return true }}
			sums.byUID["uid-app"] = versionSum{version: "5"}

			f.handlers().OnDelete(seen)

			if _, kept := sums.lookup("uid-app"); kept {
				t.Error("the digest of the deleted object is kept")
			}
		})
	}
}

func TestConfigReads_AnIgnoredKindIsAnErrorNotAnInformer(t *testing.T) {
	c := cachedSecrets(t, "team")
	err := c.Get(context.Background(), types.NamespacedName{Namespace: "team", Name: "cfg"}, configObject(refs.ConfigMap))
	if err == nil || apierrors.IsNotFound(err) {
		t.Errorf("reading a ConfigMap when ConfigMaps are ignored: %v, want an error that is not a deletion", err)
	}
}

// TestFanoutSource_WaitsPastTheSyncTimeoutUntilStopped: the controller's
// sync timeout, which the context WaitForSync is given carries, does not
// end the wait; the controller's stop does, with an error that says so.
func TestFanoutSource_WaitsPastTheSyncTimeoutUntilStopped(t *testing.T) {
	run, stop := context.WithCancel(context.Background())
	s := &fanoutSource{f: &fanout{kind: refs.Secret, synced: func() bool { return false }}}
	if err := s.Start(run, nil); err != nil {
		t.Fatal(err)
	}
	timeout, cancel := context.WithCancel(context.Background())
	cancel()
	done := make(chan error)
	go func() { done <- s.WaitForSync(timeout) }()
	select {
	case err := <-done:
		t.Fatalf("WaitForSync ended with its own context: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	stop()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("WaitForSync = %v, want context.Canceled wrapped", err)
	}
}

// A status is written when a manager writes its status, not only its
// metadata, even a label named status.
func TestOwnsStatus_TellsAStatusWriteFromAMetadataOne(t *testing.T) {
	tests := []struct {
		name, fields string
		owns         bool
	}{
		{"the driver's write of the status", `{"f:status":{"f:objects":{}}}`, true},
		{"a label", `{"f:metadata":{"f:labels":{"f:audited":{}}}}`, false},
		{"a label named status", `{"f:metadata":{"f:labels":{"f:status":{}}}}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fields := &metav1.FieldsV1{}
			fields.SetRawBytes([]byte(tt.fields))
			mf := metav1.ManagedFieldsEntry{FieldsV1: fields}
			if got := ownsStatus(mf); got != tt.owns {
				t.Errorf("ownsStatus = %v, want %v", got, tt.owns)
			}
		})
	}
}

// TestMarkWatch_AnObjectBackInViewBeforeTheStoreHeardItLeave: under
// --resource-label-selector a label taken off and put back reaches the
// informer as a deletion and an add. The deletion carries the content from
// before, and the store may still hold that when the add arrives, which
// then looked like a plain update: no entry into view was noted, and a
// data change made while the object was out of view rolled.
func TestMarkWatch_AnObjectBackInViewBeforeTheStoreHeardItLeave(t *testing.T) {
	stored, _ := relabelledAt("5")
	born := newBirths()
	k := selectorMarks(&born, stored)
	at := relabelledAt
	synced := func() bool { return true }

	leftMeta, left := at("6")
	k.leaving(watch.Event{Type: watch.Deleted, Object: left})
	k.observe(leftMeta, left, synced)
	back, backObj := at("7")
	k.leaving(watch.Event{Type: watch.Added, Object: backObj})
	k.observe(back, backObj, synced)

	marks := born.marksOf("u")
	if len(marks) != 1 || marks[0].version != "7" || !marks[0].entered {
		t.Fatalf("marks %+v, want the entry into view at version 7", marks)
	}
	k.handled(leftMeta, true)
	if p, ok := k.pending["u"]; !ok || p.version != "7" {
		t.Fatal("the handlers' deletion dropped the later version back in view")
	}
	k.handled(toolscache.DeletedFinalStateUnknown{Obj: leftMeta}, true)
	if len(k.pending) != 0 {
		t.Fatal("a relist that found the object gone left a version pending")
	}
}

// TestFanout_ADeletionKeepsTheMarksOfTheObjectBackInView: the handlers
// hear of a deletion after the informer noted the object's return into
// view; only a relist's tombstone forgets it all.
func TestFanout_ADeletionKeepsTheMarksOfTheObjectBackInView(t *testing.T) {
	left := &configMeta{namespace: "team", name: "cfg", uid: "u", version: "6"}
	for name, tc := range map[string]struct {
		seen     any
		wantKept bool
	}{
		"reported by the watch":  {left, true},
		"found gone by a relist": {toolscache.DeletedFinalStateUnknown{Key: "team/cfg", Obj: left}, false},
	} {
		t.Run(name, func(t *testing.T) {
			sums := newDigests(nil, time.Now)
			f := &fanout{kind: refs.ConfigMap, name: client.Object.GetName, digests: sums, inScope: func(client.Object) bool { return true }}
			sums.born.entered((&configMeta{namespace: "team", name: "cfg", uid: "u", version: "4"}).object(refs.ConfigMap), time.Now())
			sums.born.entered((&configMeta{namespace: "team", name: "cfg", uid: "u", version: "7"}).object(refs.ConfigMap), time.Now())

			f.handlers().OnDelete(tc.seen)

			var kept []string
			for _, m := range sums.born.marksOf("u") {
				kept = append(kept, m.version)
			}
			want := []string(nil)
			if tc.wantKept {
				want = []string{"7"}
			}
			if !slices.Equal(kept, want) {
				t.Errorf("marks kept at versions %v, want %v", kept, want)
			}
		})
	}
}

// TestMarkWatch_ADeletionNotedAheadOfTheVersionBeforeIt: noting's
// goroutine notes the deletion while the reflector still hands over the
// version before it, a write just before the label was taken off. That
// version is no return into view, and must not hide the real one (a
// review's case).
func TestMarkWatch_ADeletionNotedAheadOfTheVersionBeforeIt(t *testing.T) {
	stored, _ := relabelledAt("4")
	born := newBirths()
	k := selectorMarks(&born, stored)
	at := relabelledAt
	synced := func() bool { return true }
	written, writtenObj := at("5")
	left, leftObj := at("6")
	back, backObj := at("7")

	k.leaving(watch.Event{Type: watch.Modified, Object: writtenObj})
	k.leaving(watch.Event{Type: watch.Deleted, Object: leftObj})
	k.observe(written, writtenObj, synced)
	k.observe(left, leftObj, synced)
	k.leaving(watch.Event{Type: watch.Added, Object: backObj})
	k.observe(back, backObj, synced)

	var got []string
	for _, m := range born.marksOf("u") {
		got = append(got, m.version)
	}
	if !slices.Equal(got, []string{"7"}) {
		t.Fatalf("marks at %v, want only the entry into view at 7", got)
	}
}

// relabelledAt is a version of a ConfigMap created at second 1000 whose
// label was written a minute later: one that comes into view by it.
func relabelledAt(version string) (*configMeta, *metav1.PartialObjectMetadata) {
	created := time.Unix(1000, 0)
	relabelled := metav1.NewTime(created.Add(time.Minute))
	obj := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cfg", UID: "u", ResourceVersion: version,
		CreationTimestamp: metav1.NewTime(created),
		ManagedFields:     []metav1.ManagedFieldsEntry{{Time: &relabelled, FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:labels":{"f:reload":{}}}}`)}}}}
	return &configMeta{namespace: "ns", name: "cfg", uid: "u", version: version, created: created.Unix()}, obj
}

// selectorMarks is the markWatch of a --resource-label-selector whose
// store holds stored.
func selectorMarks(born *births, stored *configMeta) *markWatch {
	return &markWatch{kind: refs.ConfigMap, born: born, now: time.Now, selector: true, pending: map[types.UID]pendingVersion{},
		cached: func(types.NamespacedName) (*configMeta, error) { return stored, nil }}
}

// TestNoting_EndsWhenStoppedWithAnEventTheReaderNeverTakes: a reflector
// that stops its watch reads no more of it. The goroutine passing events
// on must end all the same, the event in its hand dropped.
func TestNoting_EndsWhenStoppedWithAnEventTheReaderNeverTakes(t *testing.T) {
	src := watch.NewFakeWithChanSize(1, false)
	n := &noting{Interface: src, result: make(chan watch.Event), stopped: make(chan struct{})}
	src.Delete(&metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "gone", UID: "u", ResourceVersion: "6"}})
	n.Stop()
	ended := make(chan struct{})
	go func() {
		n.pass(func(watch.Event) {})
		close(ended)
	}()
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the goroutine passing events on still holds one, 10 s after the watch was stopped")
	}
	if _, open := <-n.ResultChan(); open {
		t.Error("the results of the stopped watch are still open")
	}
}
