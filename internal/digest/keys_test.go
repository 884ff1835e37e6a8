package digest

import "testing"

func TestSubsetChangesExactlyWhenAKeyItCoversChanges(t *testing.T) {
	sums := func(data map[string]string) map[string]Sum { return KeySums("ConfigMap", "ns/cfg", data, nil) }
	base := sums(map[string]string{"a": "1", "b": "2"})
	tests := []struct {
		name    string
		keys    []string
		after   map[string]Sum
		changes bool
	}{
		{"another key changed", []string{"a"}, sums(map[string]string{"a": "1", "b": "3"}), false},
		{"another key added", []string{"a"}, sums(map[string]string{"a": "1", "b": "2", "c": "4"}), false},
		{"a covered key changed", []string{"a"}, sums(map[string]string{"a": "9", "b": "2"}), true},
		{"a covered key removed", []string{"a", "b"}, sums(map[string]string{"a": "1"}), true},
		{"a covered key appears", []string{"a", "z"}, sums(map[string]string{"a": "1", "b": "2", "z": "0"}), true},
		{"a value moved to another covered key", []string{"a", "b"}, sums(map[string]string{"a": "2", "b": "1"}), true},
		{"a covered key moved to binaryData", []string{"a"}, KeySums("ConfigMap", "ns/cfg", nil, map[string][]byte{"a": []byte("1")}), true},
		{"the same data in another namespace differs", []string{"a"}, KeySums("ConfigMap", "other/cfg", map[string]string{"a": "1", "b": "2"}, nil), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Subset(base, tt.keys) != Subset(tt.after, tt.keys); got != tt.changes {
				t.Errorf("changed = %v, want %v", got, tt.changes)
			}
		})
	}
}

func TestSubsetOfWholeChangesWhenTheObjectChangesAndDiffersFromAnySubsetOfKeySums(t *testing.T) {
	a := Object("ConfigMap", "ns/cfg", map[string]string{"a": "1"}, nil)
	b := Object("ConfigMap", "ns/cfg", map[string]string{"a": "2"}, nil)
	keys := []string{"a"}
	if Subset(Whole(a), keys) == Subset(Whole(b), keys) {
		t.Error("Subset of Whole did not change with the object")
	}
	if Subset(Whole(a), keys) == Subset(KeySums("ConfigMap", "ns/cfg", map[string]string{"a": "1"}, nil), keys) {
		t.Error("Subset of Whole equals Subset of KeySums")
	}
	if Subset(Whole(a), keys) == Subset(map[string]Sum{"a": a}, keys) {
		t.Error("Subset of Whole equals Subset of a key whose digest is the whole object's")
	}
}

func TestScopeIDTellsKeySetsApart(t *testing.T) {
	ids := map[string]bool{}
	sets := [][]string{nil, {"a"}, {"b"}, {"a", "b"}, {"ab"}}
	for _, keys := range sets {
		ids[ScopeID(keys)] = true
	}
	if len(ids) != len(sets) {
		t.Errorf("got %d distinct IDs for %d key sets", len(ids), len(sets))
	}
}
