package controller

import (
	"slices"
	"testing"

	"github.com/ripple-controller/ripple/internal/digest"
)

func TestARecordedPreciseEntryTellsWhichKeysChangedAndComparesAcrossTheChoice(t *testing.T) {
	keyed := digest.NewKeyed([]byte("test-key"))
	at := func(data map[string]string, used []string, precise bool) tracked {
		return tracked{version: versionSum{sum: digest.Object("ConfigMap", "ns/cfg", data, nil),
			keys: digest.KeySums("ConfigMap", "ns/cfg", data, nil)}, used: used, precise: precise}
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
