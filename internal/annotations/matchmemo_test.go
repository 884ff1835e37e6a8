package annotations

import (
	"fmt"
	"strings"
	"testing"
)

// costlyList is within the budget of one list, and matching one long name
// against it takes a few milliseconds.
var costlyList = strings.TrimSuffix(strings.Repeat(".*a.*a.*a.*a.*a.*a.*a.*a.*c,", 100), ",")

func TestNameList_CostlyListAnswersFromMemory(t *testing.T) {
	costly, problem := ParseNameList(costlyList + ",db-.*-x")
	if costly.memo == 0 {
		t.Fatalf("a list of cost above %d does not remember (Problem %v)", memoCost, problem)
	}
	cases := []struct {
		name string
		want bool
	}{
		{"db-1-x", true},
		{"aaaaaaaac", true},
		{strings.Repeat("a", 253), false},
		{"db-1", false},
	}
	for _, c := range cases {
		for i := range 2 {
			if got := costly.Match(c.name); got != c.want {
				t.Errorf("Match(%.20q) call %d = %v, want %v", c.name, i+1, got, c.want)
			}
		}
		if _, ok := memos.answers[memoKey{costly.memo, c.name}]; !ok {
			t.Errorf("the answer for %.20q is not remembered", c.name)
		}
	}
	if cheap, _ := ParseNameList("app-.*, db"); cheap.memo != 0 {
		t.Errorf("a list of one short pattern remembers its answers; it matches as fast as it looks them up")
	}
}

func TestMatchMemo_MatchesEachNameOncePerList(t *testing.T) {
	m := newMatchMemo(1 << 20)
	calls := map[string]int{}
	match := func(name string) bool { calls[name]++; return name == "yes" }
	for range 3 {
		for _, list := range []uint64{1, 2} {
			if !m.match(list, "yes", match) || m.match(list, "no", match) {
				t.Fatalf("list %d answers wrongly", list)
			}
		}
	}
	if calls["yes"] != 2 || calls["no"] != 2 {
		t.Errorf("matched %v, want each name once for each of the 2 lists", calls)
	}
}

func TestMatchMemo_BoundedInBytes(t *testing.T) {
	const maxBytes = 10 * (memoEntryBytes + 8)
	m := newMatchMemo(maxBytes)
	for i := range 1000 {
		m.match(1, fmt.Sprintf("name-%03d", i), func(string) bool { return true })
		if m.bytes > maxBytes || len(m.answers)*(memoEntryBytes+8) > maxBytes {
			t.Fatalf("after %d names the memo holds %d names in %d bytes, want at most %d bytes", i+1, len(m.answers), m.bytes, maxBytes)
		}
	}
	if len(m.answers) == 0 {
		t.Errorf("the memo forgot everything, the last name too")
	}
}

// BenchmarkNameList_ScanOfACostlyList is what a reconcile of a workload with
// costlyList pays for its namespace's objects: 1,000 names of the longest
// length, matched by the list's patterns each time, or answered from the
// memory a previous reconcile left.
func BenchmarkNameList_ScanOfACostlyList(b *testing.B) {
	costly, _ := ParseNameList(costlyList)
	names := make([]string, 1000)
	for i := range names {
		names[i] = fmt.Sprintf("%s%04d", strings.Repeat("a", 249), i)
	}
	for _, c := range []struct {
		name  string
		match func(string) bool
	}{{"matched", costly.matchPatterns}, {"remembered", costly.Match}} {
		b.Run(c.name, func(b *testing.B) {
			for _, n := range names {
				c.match(n)
			}
			for b.Loop() {
				for _, n := range names {
					c.match(n)
				}
			}
		})
	}
}
