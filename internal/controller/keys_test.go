package controller

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ripple-controller/ripple/internal/digest"
	"github.com/ripple-controller/ripple/internal/refs"
)

func TestARecordedPreciseEntryTellsWhichKeysChangedAndComparesAcrossTheChoice(t *testing.T) {
	keyed := digest.NewKeyed([]byte("test-key"))
	at := func(data map[string]string, used []string, precise bool) tracked {
		return tracked{version: versionSum{sum: digest.Object("ConfigMap", "ns/cfg", data, nil),
			keys: digest.KeySums("ConfigMap", "ns/cfg", data, nil)}, used: used, precise: precise}
	}
	whole := func(data map[string]string, used []string) tracked {
		sum := digest.Object("ConfigMap", "ns/cfg", data, nil)
		return tracked{version: versionSum{sum: sum, keys: digest.Whole(sum)}, used: used, precise: true}
	}
	before := map[string]string{"a": "1", "b": "1", "c": "1"}
	recorded := at(before, []string{"a", "b"}, true).recordValue(keyed.Short)
	tests := []struct {
		name       string
		now        tracked
		recorded   string
		changed    []string
		sameAsRec  bool
		comparable bool
	}{
		{"a key it does not read", at(map[string]string{"a": "1", "b": "1", "c": "2"}, []string{"a", "b"}, true), recorded, nil, true, true},
		{"a key it reads", at(map[string]string{"a": "1", "b": "2", "c": "1"}, []string{"a", "b"}, true), recorded, []string{"b"}, false, true},
		{"a key it reads removed", at(map[string]string{"b": "1"}, []string{"a", "b"}, true), recorded, []string{"a"}, false, true},
		{"precision turned off compares under the recorded keys", at(map[string]string{"a": "1", "b": "1", "c": "2"}, []string{"a", "b"}, false), recorded, nil, true, true},
		{"precision turned on compares the whole object", at(before, []string{"a", "b"}, true), at(before, []string{"a", "b"}, false).recordValue(keyed.Short), nil, true, true},
		{"other keys read now: not comparable", at(before, []string{"a"}, true), recorded, nil, false, false},
		{"past the key cap now: no key named", whole(map[string]string{"a": "1", "b": "1", "c": "2"}, []string{"a", "b"}), recorded, nil, false, true},
		{"past the key cap before: no key named", at(before, []string{"a", "b"}, true), whole(before, []string{"a", "b"}).recordValue(keyed.Short), nil, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.now.changedKeys(tt.recorded, keyed.Short); !slices.Equal(got, tt.changed) {
				t.Errorf("changedKeys = %q, want %q", got, tt.changed)
			}
			entry, ok := tt.now.asRecorded(tt.recorded, keyed.Short)
			if ok != tt.comparable || (ok && (entry == tt.recorded) != tt.sameAsRec) {
				t.Errorf("asRecorded = %q, %v; recorded %q, want comparable %v and same %v", entry, ok, tt.recorded, tt.comparable, tt.sameAsRec)
			}
		})
	}
}

func TestAnObjectPastTheKeyCapKeepsNoPerKeyDigestsAndAPreciseWorkloadRollsOnAnyOfItsKeys(t *testing.T) {
	data := func(n int) map[string]string {
		d := make(map[string]string, n)
		for i := range n {
			d[fmt.Sprintf("k%d", i)] = ""
		}
		return d
	}
	bin := func(n int) map[string][]byte {
		d := make(map[string][]byte, n)
		for i := range n {
			d[fmt.Sprintf("b%d", i)] = nil
		}
		return d
	}
	cm := func(d map[string]string, b map[string][]byte) client.Object {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cfg"}, Data: d, BinaryData: b}
	}
	secret := func(b map[string][]byte) client.Object {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "s"}, Data: b}
	}
	tests := []struct {
		name   string
		obj    client.Object
		perKey int // per-key digests kept
	}{
		{"a ConfigMap at the cap keeps one per key", cm(data(maxKeySums), nil), maxKeySums},
		{"a ConfigMap past the cap keeps none", cm(data(maxKeySums+1), nil), 0},
		{"a ConfigMap past the cap through binaryData keeps none", cm(data(maxKeySums), bin(1)), 0},
		{"a ConfigMap of 150,000 keys keeps none", cm(data(150_000), nil), 0},
		{"a Secret at the cap keeps one per key", secret(bin(maxKeySums)), maxKeySums},
		{"a Secret past the cap keeps none", secret(bin(maxKeySums + 1)), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vs := sumVersion(tt.obj)
			kept := 0
			for k := range vs.keys {
				if k != "" { // digest.Whole's entry, no key's
					kept++
				}
			}
			if kept != tt.perKey || (tt.perKey == 0 && len(vs.keys) != 1) {
				t.Errorf("kept %d per-key digests (%d entries), want %d", kept, len(vs.keys), tt.perKey)
			}
		})
	}

	// Past the cap, a precise workload compares the whole object: a change
	// of a key it reads, or of any other, rolls it; no change rolls nothing.
	over := data(maxKeySums + 1)
	at := func(d map[string]string) tracked {
		return tracked{version: sumVersion(cm(d, nil)), used: []string{"k0", "missing"}, precise: true}
	}
	with := func(k, v string) map[string]string {
		d := maps.Clone(over)
		d[k] = v
		return d
	}
	without := maps.Clone(over)
	delete(without, "k0")
	keyed := digest.NewKeyed([]byte("test-key"))
	recorded := at(over).recordValue(keyed.Short)
	rolls := []struct {
		name  string
		now   tracked
		rolls bool
	}{
		{"the same data", at(maps.Clone(over)), false},
		{"a key it reads changed", at(with("k0", "x")), true},
		{"a key it reads removed", at(without), true},
		{"a key it reads appears", at(with("missing", "x")), true},
		{"a key it does not read changed", at(with("k1", "x")), true},
		{"a key it does not read removed, under the cap again", at(data(maxKeySums)), true},
	}
	for _, tt := range rolls {
		t.Run(tt.name, func(t *testing.T) {
			entry, sameKeys := tt.now.asRecorded(recorded, keyed.Short)
			if !sameKeys {
				t.Fatalf("asRecorded(%q) is not comparable", recorded)
			}
			if got := entry != recorded; got != tt.rolls {
				t.Errorf("changed = %v, want %v (recorded %q, now %q)", got, tt.rolls, recorded, entry)
			}
		})
	}
}

func TestChangedKeys_ReadsTheRecordWithTheKeyItWasWrittenWith(t *testing.T) {
	previous := digest.NewKeyed([]byte("previous-key"))
	ref := refs.Ref{Kind: refs.ConfigMap, Name: "cfg"}
	at := func(data map[string]string) tracked {
		return tracked{version: versionSum{sum: digest.Object("ConfigMap", "ns/cfg", data, nil),
			keys: digest.KeySums("ConfigMap", "ns/cfg", data, nil)}, used: []string{"a", "b"}, precise: true}
	}
	rec := record{objects: map[refs.Ref]string{ref: at(map[string]string{"a": "1", "b": "1"}).recordValue(previous.Short)}}
	now := map[refs.Ref]tracked{ref: at(map[string]string{"a": "2", "b": "1"})}
	got := changedKeys(rec, now, []refs.Ref{ref}, previous)
	if !slices.Equal(got[ref], []string{"a"}) {
		t.Fatalf("keys changed since a record under the previous key = %q, want [a]", got[ref])
	}
}
