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

func configMapAt(version, value string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "app", UID: "uid-app", ResourceVersion: version},
		Data: map[string]string{"k": value}}
}

// TestDigests_FromFeed checks when a reconcile takes a ConfigMap's digest
// from its feed: the version it asks for, hashed from the feed's event,
// before or while it waits; nothing, and no wait, for an object not tracked
// yet, a Secret, or while no feed runs; and nothing once the feed stops.
func TestDigests_FromFeed(t *testing.T) {
	tests := []struct {
		name string
		// tracked stores version 1 first, as a GET at start does.
		tracked bool
		fed     string // the namespace a feed watches; "-" for none
		kind    refs.Kind
		// during runs while fromFeed waits for version 2.
		before, during func(d *digests)
		wantFound      bool
		wantWait       bool
	}{
		{name: "version seen before", tracked: true, fed: "", kind: refs.ConfigMap,
			before: func(d *digests) { d.observe(configMapAt("2", "new")) }, wantFound: true},
		{name: "version seen while waiting", tracked: true, fed: "ns", kind: refs.ConfigMap,
			during: func(d *digests) { d.observe(configMapAt("2", "new")) }, wantFound: true, wantWait: true},
		{name: "feed stops while waiting", tracked: true, fed: "", kind: refs.ConfigMap,
			during: func(d *digests) { d.setFed("", false) }, wantWait: true},
		{name: "not tracked yet", fed: "", kind: refs.ConfigMap,
			before: func(d *digests) { d.observe(configMapAt("2", "new")) }},
		{name: "another namespace's feed", tracked: true, fed: "other", kind: refs.ConfigMap},
		{name: "no feed", tracked: true, fed: "-", kind: refs.ConfigMap},
		{name: "a Secret", tracked: true, fed: "", kind: refs.Secret},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDigests(nil)
			if tt.tracked {
				d.store(configMapAt("1", "old"))
			}
			if tt.fed != "-" {
				d.setFed(tt.fed, true)
			}
			if tt.before != nil {
				tt.before(d)
			}
			meta := client.Object(&metav1.PartialObjectMetadata{ObjectMeta: configMapAt("2", "").ObjectMeta})
			done := make(chan struct{})
			var vs versionSum
			var found bool
			go func() {
				defer close(done)
				vs, found = d.fromFeed(context.Background(), tt.kind, meta)
			}()
			if tt.wantWait {
				waitAwaited(t, d)
				tt.during(d)
			}
			select {
			case <-done:
			case <-time.After(feedWait / 2):
				t.Fatal("fromFeed waited although its version came, the feed stopped, or nothing was to come")
			}
			if found != tt.wantFound {
				t.Fatalf("found = %v, want %v", found, tt.wantFound)
			}
			if found && vs.sum != digest.ConfigMap(configMapAt("2", "new")) {
				t.Errorf("the digest is not that of the version asked for")
			}
			if _, stored := d.lookup("uid-app"); stored != tt.tracked {
				t.Errorf("a digest is kept = %v, want %v: the feed keeps only tracked ConfigMaps", stored, tt.tracked)
			}
		})
	}
}

// waitAwaited returns once a reconcile waits for a version.
func waitAwaited(t *testing.T, d *digests) {
	t.Helper()
	for deadline := time.Now().Add(feedWait / 2); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		d.mu.Lock()
		n := len(d.awaited)
		d.mu.Unlock()
		if n > 0 {
			return
		}
	}
	t.Fatal("fromFeed did not wait for the version")
}
