package controller

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ripple-controller/ripple/internal/digest"
	"github.com/ripple-controller/ripple/internal/refs"
)

func configMapAt(version string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "app", UID: "uid-app", ResourceVersion: version},
		Data: map[string]string{"k": "value at " + version}}
}

// TestDigests_FromFeed checks when a reconcile takes a ConfigMap's digest
// from its feed: that of the version it asks for, hashed from the feed's
// event before or while it waits, or that of a newer version the feed saw
// or a GET read; never that of an older one, even when the feed's event of
// it comes after the GET; nothing, and no wait, for an object
// not tracked yet, a Secret, a version the feed's watch started past, or
// while no feed runs; nothing once the feed stops or the wait ends.
func TestDigests_FromFeed(t *testing.T) {
	observe := func(versions ...string) func(d *digests) {
		return func(d *digests) {
			for _, v := range versions {
				d.observe(configMapAt(v))
			}
		}
	}
	tests := []struct {
		name string
		// untracked leaves out the digest of version 1 that a GET at
		// start stores.
		untracked bool
		fed       string // the namespace a feed watches; "-" for none
		// from is the version the feed's watch started at; "1" if empty.
		from string
		kind refs.Kind
		// during runs while fromFeed waits for version 2.
		before, during func(d *digests)
		// wait is the longest wait for the feed.
		wait      time.Duration
		wantSumOf string // the version whose digest is returned; "" for none
	}{
		{name: "version seen before", before: observe("2"), wantSumOf: "2"},
		{name: "version seen while waiting", fed: "ns", during: observe("2"), wantSumOf: "2"},
		{name: "version and a newer one seen before", before: observe("2", "3"), wantSumOf: "3"},
		{name: "a newer version read by a GET outlives the feed's late event of the version", before: func(d *digests) {
			d.store(configMapAt("3"))
			d.observe(configMapAt("2"))
		}, wantSumOf: "3"},
		{name: "the version read by a GET outlives the feed's late event of an older one", before: func(d *digests) {
			d.store(configMapAt("2"))
			d.observe(configMapAt("1"))
		}, wantSumOf: "2"},
		{name: "the feed's newer version outlives an older one a late GET read", before: func(d *digests) {
			d.observe(configMapAt("3"))
			d.store(configMapAt("2"))
		}, wantSumOf: "3"},
		{name: "a version the cache has not caught up with, read by a GET", before: func(d *digests) {
			d.store(configMapAt("3"))
		}, wantSumOf: "3"},
		{name: "only an older version seen", before: observe("1"), wait: 10 * time.Millisecond},
		{name: "feed stops while waiting", during: func(d *digests) { d.feedStopped("") }},
		{name: "a version the feed's watch started at", from: "2"},
		{name: "a version the feed's watch started past", from: "3"},
		{name: "a version the feed of the namespace started past", fed: "ns", from: "3"},
		{name: "version never comes", wait: 10 * time.Millisecond},
		{name: "not tracked yet", untracked: true, before: observe("2")},
		{name: "another namespace's feed", fed: "other"},
		{name: "no feed", fed: "-"},
		{name: "a Secret", kind: refs.Secret},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDigests(nil, time.Now)
			d.wait = time.Minute
			if tt.wait > 0 {
				d.wait = tt.wait
			}
			if !tt.untracked {
				d.store(configMapAt("1"))
			}
			if tt.fed != "-" {
				from := tt.from
				if from == "" {
					from = "1"
				}
				d.feedStarted(tt.fed, from)
			}
			if tt.before != nil {
				tt.before(d)
			}
			kind := tt.kind
			if kind == "" {
				kind = refs.ConfigMap
			}
			meta := client.Object(&metav1.PartialObjectMetadata{ObjectMeta: configMapAt("2").ObjectMeta})
			done := make(chan struct{})
			var vs versionSum
			var found bool
			go func() {
				defer close(done)
				vs, found = d.fromFeed(context.Background(), kind, meta)
			}()
			if tt.during != nil {
				waitAwaited(t, d)
				tt.during(d)
			}
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("fromFeed still waits although its version came, the feed stopped, or nothing was to come")
			}
			switch {
			case found != (tt.wantSumOf != ""):
				t.Fatalf("found = %v, want the digest of version %q", found, tt.wantSumOf)
			case found && vs.sum != digest.ConfigMap(configMapAt(tt.wantSumOf)):
				t.Errorf("got the digest of version %s, want that of %s", vs.version, tt.wantSumOf)
			}
			if _, kept := d.lookup("uid-app"); kept == tt.untracked {
				t.Errorf("a digest is kept = %v: the feed keeps only tracked ConfigMaps", kept)
			}
		})
	}
}

// waitAwaited returns once a reconcile waits for a version.
func waitAwaited(t *testing.T, d *digests) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		d.mu.Lock()
		n := len(d.awaited)
		d.mu.Unlock()
		if n > 0 {
			return
		}
	}
	t.Fatal("fromFeed did not wait for the version")
}

// A digest read or fed after its object's deletion is not kept: no later
// event would drop it, and a ConfigMap updated then deleted while a
// reconcile read it stayed in memory for good.
func TestDigests_KeepNoDigestOfADeletedObject(t *testing.T) {
	tests := []struct {
		name  string
		after func(d *digests)
	}{
		{"a GET or a LIST page that answers after the deletion", func(d *digests) { d.store(configMapAt("2")) }},
		{"a feed event a reconcile awaits, that comes after it", func(d *digests) {
			d.awaited[versionKey(configMapAt("2"))] = make(chan struct{})
			d.observe(configMapAt("2"))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDigests(nil, time.Now)
			d.store(configMapAt("1"))
			d.forget("uid-app")
			tt.after(d)
			if _, kept := d.byUID["uid-app"]; kept {
				t.Errorf("the digest of a deleted object is kept")
			}
		})
	}
}
