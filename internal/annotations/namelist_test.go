package annotations

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestParseNameList_Matching(t *testing.T) {
	cases := []struct {
		name    string
		list    string
		match   []string
		noMatch []string
	}{
		{"empty list matches nothing", "", nil, []string{"", "app"}},
		{"literal matches only itself", "app", []string{"app"}, []string{"app-2", "my-app", "ap", "App", ""}},
		{"entries are trimmed", "  app ,\tdb\n", []string{"app", "db"}, []string{" app", "app ", "db\n"}},
		{"regex is anchored at both ends", "app-.*", []string{"app-2", "app-"}, []string{"my-app-2", "app"}},
		// Reloader reads an entry as "^" + entry + "$": a top-level
		// alternation is anchored at one end each, and a drop-in must roll
		// for every name Reloader rolls for.
		{"alternation is anchored as Reloader anchors it", "a|b", []string{"a", "b", "ab", "apple", "crab"}, []string{"xa", "bx"}},
		{"alternatives with a common prefix are not folded together", "app-a|app-b", []string{"app-a", "app-a-x", "x-app-b"}, []string{"x-app-a"}},
		{"a group alternates whole names", "(foo|bar)", []string{"foo", "bar"}, []string{"foo-v2", "old-bar"}},
		{"dot in a name is a regex dot", "app.config", []string{"app.config", "appXconfig"}, []string{"app.config.old"}},
		{"empty entries are skipped", ",,app,, ,", []string{"app"}, []string{""}},
		{"literals and patterns together", "db, cache-[0-9]+, web", []string{"db", "web", "cache-12"}, []string{"cache-", "cache-1a", "dbx"}},
		{"duplicates are harmless", "app,app, app", []string{"app"}, []string{"app,app"}},
		// Reloader compiles "^*-config$": "^*" is any number of starts of
		// text, so the entry matches what ends in "-config".
		{"a leading * reads as Reloader reads it", "*-config", []string{"app-config", "-config"}, []string{"app-config-2", "other"}},
		{"a lone * matches every name, as in Reloader", "*", []string{"app", "x.y", ""}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l, problem := ParseNameList(c.list)
			if problem != nil {
				t.Fatalf("Problem = %v, want none", problem)
			}
			for _, n := range c.match {
				if !l.Match(n) {
					t.Errorf("%q does not match %q", c.list, n)
				}
			}
			for _, n := range c.noMatch {
				if l.Match(n) {
					t.Errorf("%q matches %q", c.list, n)
				}
			}
		})
	}
}

func TestParseNameList_SkippedEntriesAreSummedUpInOneProblem(t *testing.T) {
	long := "x" + strings.Repeat("y", maxEntryBytes)
	cases := []struct {
		name       string
		list       string
		wantValue  string
		wantReason string
		works      []string
	}{
		{"one invalid entry", "a(, app",
			"a(", "is not a valid regular expression (missing closing )); 1 of 2 entries skipped", []string{"app"}},
		{"two invalid entries", "a(, app, b[, cache-.*",
			"a(", "is not a valid regular expression (missing closing )); 2 of 4 entries skipped (2 invalid)", []string{"app", "cache-1"}},
		{"an entry that would escape its anchors", "app)|(.*",
			"app)|(.*", "is not a valid regular expression (unexpected )); 1 of 1 entries skipped", nil},
		{"an over-long entry", long + ",app",
			long[:maxQuoted-3] + "...", fmt.Sprintf("is longer than %d bytes; 1 of 2 entries skipped", maxEntryBytes), []string{"app"}},
		{"an entry of exactly the longest length is used", strings.Repeat("z", maxEntryBytes), "", "", []string{strings.Repeat("z", maxEntryBytes)}},
		{"entries beyond the cap", strings.Repeat("app,", maxEntries) + "late,later",
			"late", fmt.Sprintf("is beyond the first %d entries; 2 of %d entries skipped (2 beyond the first %d)", maxEntries, maxEntries+2, maxEntries), []string{"app"}},
		{"a mix", "a(," + long + ",ok",
			"a(", fmt.Sprintf("is not a valid regular expression (missing closing )); 2 of 3 entries skipped (1 invalid, 1 longer than %d bytes)", maxEntryBytes), []string{"ok"}},
		{"a too complex entry", `(?:(?:\pL|\pN|x){30}){30},db-.*`,
			`(?:(?:\pL|\pN|x){30}){30}`, "is too complex for what one list's regular expressions may cost together; 1 of 2 entries skipped", []string{"db-1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l, problem := ParseNameList(c.list)
			switch {
			case c.wantReason == "" && problem != nil:
				t.Errorf("Problem = %v, want none", problem)
			case c.wantReason != "" && problem == nil:
				t.Errorf("no Problem, want %q", c.wantReason)
			case problem != nil:
				if problem.Value != c.wantValue || problem.Reason != c.wantReason || problem.Annotation != "" {
					t.Errorf("Problem = %+v,\nwant Value %q Reason %q and no annotation; the caller names it", problem, c.wantValue, c.wantReason)
				}
			}
			for _, n := range c.works {
				if !l.Match(n) {
					t.Errorf("valid entry for %q stopped working next to skipped ones", n)
				}
			}
			for _, n := range []string{"a(", "a", "b[", "late", "later", "unrelated", long} {
				if l.Match(n) {
					t.Errorf("a skipped entry matches %q", n)
				}
			}
		})
	}
}

func TestParseNameList_ProblemIsTheCallersToChange(t *testing.T) {
	_, first := ParseNameList("a(")
	first.Annotation = "changed"
	_, second := ParseNameList("a(")
	if second.Annotation != "" {
		t.Errorf("a change to one caller's Problem reached the next caller: %+v", second)
	}
}

// A pathological value of 15 KB, of entries each cheap to write and costly
// to compile, or long: ripple reads it in bounded time and memory, and the
// entries that fit the budget still work.
func TestParseNameList_PathologicalValueIsBounded(t *testing.T) {
	values := map[string]string{
		"nested repetitions of Unicode classes": "db-.*," + repeatTo(`(?:(?:\pL|\pN|x|y|z){30}){30},`, 15000),
		"Unicode classes to parse":              "db-.*," + repeatTo(strings.Repeat(`\pL`, 170)+",", 15000),
		"long alternations":                     "db-.*," + repeatTo(strings.Repeat("(a|b)", 100)+",", 15000),
		"one long entry":                        "db-.*," + strings.Repeat("(a|b)*", 2500),
		"many tiny expressions":                 "db-.*," + repeatTo("[a-z]{1000},", 15000),
	}
	for name, value := range values {
		t.Run(name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			parsed := compileList(value)
			runtime.ReadMemStats(&after)
			if allocated := after.TotalAlloc - before.TotalAlloc; allocated > 8<<20 {
				t.Errorf("parsing allocated %d bytes, want at most 8 MiB", allocated)
			}
			if parsed.size > 1<<20 {
				t.Errorf("estimated size %d bytes, want at most 1 MiB", parsed.size)
			}
			if !parsed.list.Match("db-1") {
				t.Errorf("the entry before the pathological ones stopped working")
			}
			if parsed.problem == nil || len(parsed.problem.String()) > 512 {
				t.Errorf("Problem = %v, want one, at most 512 bytes long", parsed.problem)
			}
		})
	}
}

func repeatTo(s string, n int) string {
	return strings.Repeat(s, n/len(s)+1)[:n]
}

func TestCostOf_BoundsWhatIsCompiled(t *testing.T) {
	cases := []struct {
		expr     string
		accepted bool
	}{
		{"app-.*", true},
		// A comma ends an entry, so a bounded repetition has one count.
		{"[a-z0-9.-]{253}", true},
		{"(?i)app-[a-z]+", true},
		{`\pL+`, true},
		{`\pL{1000}`, false},
		{`(?:(?:\pL|\pN|x|y|z){30}){30}`, false},
		{"(?:[a-z]{30}){30}", true},
		{"(?:[a-z]{100}){30}", false},
	}
	for _, c := range cases {
		t.Run(c.expr, func(t *testing.T) {
			_, problem := ParseNameList(c.expr)
			if (problem == nil) != c.accepted {
				t.Errorf("Problem = %v, want accepted %v", problem, c.accepted)
			}
		})
	}
}

func TestListCache_CompilesEachValueOnce(t *testing.T) {
	c := newListCache(10, 1<<20)
	first := c.get("app-.*, db")
	second := c.get("app-.*, db")
	if first.list.patterns[0] != second.list.patterns[0] {
		t.Errorf("the same value was compiled twice")
	}
	if other := c.get("app-.* , db"); other.list.patterns[0] == first.list.patterns[0] {
		t.Errorf("a different value shared the compiled list")
	}
}

func TestListCache_EvictsTheLeastRecentlyUsed(t *testing.T) {
	c := newListCache(2, 1<<20)
	a := c.get("a-.*")
	c.get("b-.*")
	c.get("a-.*") // a is now the most recently used
	c.get("c-.*")
	if len(c.byValue) != 2 || c.order.Len() != 2 {
		t.Fatalf("%d lists cached, want 2", len(c.byValue))
	}
	if _, ok := c.byValue["b-.*"]; ok {
		t.Errorf("b-.* is still cached; it was the least recently used")
	}
	if again := c.get("a-.*"); again.list.patterns[0] != a.list.patterns[0] {
		t.Errorf("a-.* was evicted; it was used recently")
	}
}

func TestListCache_BoundedInBytes(t *testing.T) {
	small := compileList("a-.*").size
	c := newListCache(1000, 3*small)
	for i := range 10 {
		c.get(fmt.Sprintf("%c-.*", 'a'+i))
	}
	if c.bytes > 3*small || len(c.byValue) != 3 {
		t.Errorf("%d lists of %d bytes cached, want 3 of at most %d", len(c.byValue), c.bytes, 3*small)
	}
	huge := strings.Repeat("x,", 2*small)
	if got := c.get(huge); got.list.Empty() || len(c.byValue) != 3 {
		t.Errorf("a list larger than the cache was cached, or not parsed")
	}
	if c.bytes > 3*small {
		t.Errorf("cache holds %d bytes, want at most %d", c.bytes, 3*small)
	}
}

func TestListCache_SharedSafely(t *testing.T) {
	c := newListCache(8, 1<<20)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				v := fmt.Sprintf("app-%d-.*", (g+i)%16)
				if !c.get(v).list.Match(fmt.Sprintf("app-%d-x", (g+i)%16)) {
					t.Errorf("%s does not match", v)
				}
			}
		})
	}
	wg.Wait()
	if len(c.byValue) != c.order.Len() || len(c.byValue) > 8 {
		t.Errorf("map %d and list %d disagree or exceed 8", len(c.byValue), c.order.Len())
	}
}

func TestParseNameList_LiteralsAndPatterns(t *testing.T) {
	cases := []struct {
		list        string
		literals    []string
		hasPatterns bool
		empty       bool
		problem     bool
	}{
		{"", nil, false, true, false},
		{" , ,", nil, false, true, false},
		{"b, a, b", []string{"a", "b"}, false, false, false},
		{"app-.*", nil, true, false, false},
		{"x, y+", []string{"x"}, true, false, false},
		{"a(", nil, false, true, true},
	}
	for _, c := range cases {
		t.Run(c.list, func(t *testing.T) {
			l, problem := ParseNameList(c.list)
			if !slices.Equal(l.Literals(), c.literals) || l.HasPatterns() != c.hasPatterns || l.Empty() != c.empty || (problem != nil) != c.problem {
				t.Errorf("Literals=%q HasPatterns=%v Empty=%v Problem=%v, want %q %v %v %v",
					l.Literals(), l.HasPatterns(), l.Empty(), problem, c.literals, c.hasPatterns, c.empty, c.problem)
			}
		})
	}
}

func TestParseNameList_EntriesUpToTheCap(t *testing.T) {
	entries := make([]string, maxEntries)
	for i := range entries {
		if i%2 == 0 {
			entries[i] = fmt.Sprintf("cm-%d", i)
		} else {
			entries[i] = fmt.Sprintf("re-%d-[a-z]+", i)
		}
	}
	l, problem := ParseNameList(strings.Join(entries, ","))
	if problem != nil {
		t.Fatalf("Problem = %v", problem)
	}
	if len(l.Literals()) != maxEntries/2 {
		t.Errorf("%d literals, want %d", len(l.Literals()), maxEntries/2)
	}
	for _, n := range []string{"cm-0", fmt.Sprintf("cm-%d", maxEntries-2), "re-1-abc", fmt.Sprintf("re-%d-z", maxEntries-1)} {
		if !l.Match(n) {
			t.Errorf("%q does not match", n)
		}
	}
	for _, n := range []string{"cm-1", fmt.Sprintf("cm-%d", maxEntries), "re-0-abc", "re-1-"} {
		if l.Match(n) {
			t.Errorf("%q matches", n)
		}
	}
}

// An entry must not be able to close the anchoring group that ParseNameList
// wraps it in: "app)|(.*" is not a valid regular expression on its own, yet
// wrapped as ^(?:app)|(.*)$ it compiles and matches every name.
func TestParseNameList_EntryCannotEscapeTheAnchors(t *testing.T) {
	l, problem := ParseNameList("app)|(.*")
	if l.Match("unrelated") {
		t.Errorf(`"app)|(.*" matches "unrelated"`)
	}
	if problem == nil {
		t.Errorf("the entry was not reported as invalid")
	}
}

func TestNameList_DottedNamesMatchAsRegularExpressionsAndCostNothing(t *testing.T) {
	var names []string
	for i := range 200 {
		names = append(names, fmt.Sprintf("svc-%d.prod.example-config", i))
	}
	l, problem := ParseNameList(strings.Join(names, ","))
	if problem != nil {
		t.Fatalf("200 dotted names: %v", problem)
	}
	tests := []struct {
		list, name string
		want       bool
	}{
		{strings.Join(names, ","), "svc-199.prod.example-config", true},
		{"a.b", "aXb", true},
		{"a.b", "a.b", true},
		{"a.b", "ab", false},
		{"a.b", "aXXb", false},
		{"a.b", "a\nb", false},
		{"a.b", "aéb", true},
		{"..", "é", false},
	}
	for _, tt := range tests {
		list := l
		if tt.list != strings.Join(names, ",") {
			list, _ = ParseNameList(tt.list)
		}
		if got := list.Match(tt.name); got != tt.want {
			t.Errorf("%q matches %q = %v, want %v", shortList(tt.list), tt.name, got, tt.want)
		}
		if !list.HasPatterns() || list.Empty() {
			t.Errorf("%q: a dotted entry is a pattern", shortList(tt.list))
		}
	}
}

func shortList(s string) string { return Shorten(s, 40) }
