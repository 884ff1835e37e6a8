package controller

import (
	"fmt"
	"maps"
	"testing"

	"github.com/ripple-controller/ripple/internal/refs"
)

func manyObjects(n int, short string) map[refs.Ref]string {
	out := make(map[refs.Ref]string, n)
	for i := range n {
		out[cmRef(fmt.Sprintf("app-config-%05d", i))] = short
	}
	return out
}

func TestFold_KeepsTheRecordSmallWhateverTheListMatches(t *testing.T) {
	for _, n := range []int{1000, 5000, 50000} {
		objects := manyObjects(n, "0123456789abcdef")
		if recordSize(objects) <= recordBudget {
			t.Fatalf("%d objects fit the budget unfolded; the test needs more", n)
		}
		folded := fold(objects)
		if size := len(record{keyID: "abcd1234", at: 1700000000, objects: folded}.encode()); size > 4<<10 {
			t.Errorf("%d objects fold into a %d-byte record", n, size)
		}
		if !isFolded(folded) || isFolded(objects) {
			t.Errorf("isFolded cannot tell folded from unfolded objects")
		}
		if !maps.Equal(fold(objects), folded) {
			t.Errorf("fold is not deterministic")
		}
	}
}

func TestFoldedDiff(t *testing.T) {
	const at = 1000
	base := manyObjects(2000, "aa")
	rec := record{keyID: "k", at: at, objects: fold(base)}
	observe := func(objects map[refs.Ref]string, createdAt int64) map[refs.Ref]tracked {
		out := map[refs.Ref]tracked{}
		for ref, short := range objects {
			out[ref] = obs(short, createdAt)
		}
		return out
	}
	edited := maps.Clone(base)
	edited[cmRef("app-config-00042")] = "bb"
	gone := maps.Clone(base)
	delete(gone, cmRef("app-config-00042"))
	editedBucket := bucketRef(refs.ConfigMap, "app-config-00042")

	tests := []struct {
		name string
		now  map[refs.Ref]tracked
		want map[refs.Ref]change
	}{
		{"nothing changed", observe(base, at-100), map[refs.Ref]change{}},
		{"one member's data changed rolls its bucket", observe(edited, at-100), map[refs.Ref]change{editedBucket: changedData}},
		{"a deleted member cannot be told from a change", observe(gone, at-100), map[refs.Ref]change{editedBucket: changedData}},
		{"an object created after the record is a creation", func() map[refs.Ref]tracked {
			now := observe(base, at-100)
			now[cmRef("late")] = obs("cc", at+5)
			return now
		}(), map[refs.Ref]change{cmRef("late"): created}},
		{"objects created around the record and in it are no change", observe(base, at), map[refs.Ref]change{}},
		{"an object created around the record and not in it is a creation", func() map[refs.Ref]tracked {
			now := observe(base, at-100)
			now[cmRef("borderline")] = obs("cc", at)
			return now
		}(), map[refs.Ref]change{cmRef("borderline"): created}},
		{"an object created around the record, not in it, whose ignore annotation changed since, is newly tracked", func() map[refs.Ref]tracked {
			now := observe(base, at-100)
			now[cmRef("borderline")] = marked(obs("cc", at), at+9)
			return now
		}(), map[refs.Ref]change{cmRef("borderline"): newlyTracked}},
		{"an old object whose ignore annotation was removed after the record is newly tracked", func() map[refs.Ref]tracked {
			now := observe(base, at-100)
			now[cmRef("unignored")] = marked(obs("cc", at-100), at+9)
			return now
		}(), map[refs.Ref]change{cmRef("unignored"): newlyTracked}},
		{"an old object whose ignore annotation was removed in the second of the record, not in it, is newly tracked", func() map[refs.Ref]tracked {
			now := observe(base, at-100)
			now[cmRef("unignored")] = marked(obs("cc", at-100), at)
			return now
		}(), map[refs.Ref]change{cmRef("unignored"): newlyTracked}},
		{"objects whose ignore annotation was removed long before the record, and in it, are no change", func() map[refs.Ref]tracked {
			now := observe(base, at-100)
			for ref, cur := range now {
				now[ref] = marked(cur, at-50)
			}
			return now
		}(), map[refs.Ref]change{}},
		{"an object created after the record whose ignore annotation changed since is newly tracked", func() map[refs.Ref]tracked {
			now := observe(base, at-100)
			now[cmRef("late")] = marked(seen(obs("cc", at+5), at+5), at+9)
			return now
		}(), map[refs.Ref]change{cmRef("late"): newlyTracked}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := foldedDiff(rec, tt.now, testShort); !maps.Equal(got, tt.want) {
				t.Fatalf("foldedDiff = %v, want %v", got, tt.want)
			}
		})
	}
}

// Objects that became tracked on their own side after a folded record are
// not in it, however many share a bucket with one created in the second of
// the record and in it: a bulk removal of ignore rolls nothing.
func TestFoldedDiff_ManyObjectsUnignoredAfterTheRecordAreNewlyTracked(t *testing.T) {
	const at = 1000
	base := manyObjects(2000, "aa")
	bucket := bucketRef(refs.ConfigMap, "unignored-0")
	base[cmRef("unignored-0")] = "cc"
	now := map[refs.Ref]tracked{cmRef("unignored-0"): obs("cc", at)}
	for ref, short := range base {
		if _, ok := now[ref]; !ok {
			now[ref] = obs(short, at-100)
		}
	}
	want := map[refs.Ref]change{}
	for i := 1; len(want) <= maxBorderline+3; i++ {
		if n := fmt.Sprintf("unignored-%d", i); bucketRef(refs.ConfigMap, n) == bucket {
			now[cmRef(n)] = marked(obs("cc", at-100), at+9)
			want[cmRef(n)] = newlyTracked
		}
	}
	if got := foldedDiff(record{keyID: "k", at: at, objects: fold(base)}, now, testShort); !maps.Equal(got, want) {
		t.Fatalf("foldedDiff = %v, want %v", got, want)
	}
}

// A member of a folded record whose ignore annotation was added and removed
// since is in the record: its bucket matches, and nothing rolls.
func TestFoldedDiff_AMemberIgnoredAndBackSinceTheRecordIsNoChange(t *testing.T) {
	const at = 1000
	base := manyObjects(2000, "aa")
	now := map[refs.Ref]tracked{}
	for ref, short := range base {
		now[ref] = obs(short, at-100)
	}
	toggled := now[cmRef("app-config-00042")]
	toggled.marks = []mark{{at: at + 5}, {at: at + 6, began: true}}
	now[cmRef("app-config-00042")] = toggled
	if got := foldedDiff(record{keyID: "k", at: at, objects: fold(base)}, now, testShort); len(got) != 0 {
		t.Fatalf("foldedDiff = %v, want no change", got)
	}
}

// Members a workload began to track long before a folded record are old
// members, however many share a bucket with an object created in the
// second of the record and not in it, which is a creation.
func TestFoldedDiff_MembersMarkedLongBeforeTheRecordAreOld(t *testing.T) {
	const at = 1000
	base := manyObjects(2000, "aa")
	now := map[refs.Ref]tracked{}
	for ref, short := range base {
		now[ref] = marked(obs(short, at-100), at-50)
	}
	now[cmRef("late-0")] = obs("cc", at)
	want := map[refs.Ref]change{cmRef("late-0"): created}
	if got := foldedDiff(record{keyID: "k", at: at, objects: fold(base)}, now, testShort); !maps.Equal(got, want) {
		t.Fatalf("foldedDiff = %v, want %v", got, want)
	}
}

// Objects created in the seconds around a folded record share its buckets,
// some in the record and some not (a bulk creation while ripple records
// it): those it holds are no change, the others are creations, and nothing
// rolls for data no object changed.
func TestFoldedDiff_TellsBorderlineMembersOfOneBucketInAndOutOfTheRecord(t *testing.T) {
	const at = 1000
	base := manyObjects(2000, "aa")
	var same []string
	bucket := bucketRef(refs.ConfigMap, "new-0")
	for i := 0; len(same) <= maxBorderline+3; i++ {
		if n := fmt.Sprintf("new-%d", i); bucketRef(refs.ConfigMap, n) == bucket {
			same = append(same, n)
		}
	}
	now := func(names ...string) map[refs.Ref]tracked {
		out := map[refs.Ref]tracked{}
		for ref, short := range base {
			out[ref] = obs(short, at-100)
		}
		for _, n := range names {
			out[cmRef(n)] = obs("cc", at)
		}
		return out
	}
	recorded := func(names ...string) record {
		objects := maps.Clone(base)
		for _, n := range names {
			objects[cmRef(n)] = "cc"
		}
		return record{keyID: "k", at: at, objects: fold(objects)}
	}
	createdAll := func(names ...string) map[refs.Ref]change {
		out := map[refs.Ref]change{}
		for _, n := range names {
			out[cmRef(n)] = created
		}
		return out
	}
	tests := []struct {
		name string
		rec  record
		now  map[refs.Ref]tracked
		want map[refs.Ref]change
	}{
		{"one in the record, one created after it was written", recorded(same[0]), now(same[0], same[1]), createdAll(same[1])},
		{"two of four in the record", recorded(same[0], same[2]), now(same[:4]...), createdAll(same[1], same[3])},
		{"more than are tried one by one, all in the record", recorded(same...), now(same...), createdAll()},
		{"more than are tried one by one, none in the record", recorded(), now(same...), createdAll(same...)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := foldedDiff(tt.rec, tt.now, testShort); !maps.Equal(got, tt.want) {
				t.Fatalf("foldedDiff = %v, want %v", got, tt.want)
			}
		})
	}
}
