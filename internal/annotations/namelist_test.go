package annotations

import (
	"fmt"
	"slices"
	"strings"
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
		{"alternation stays anchored", "a|b", []string{"a", "b"}, []string{"ab", "xa", "bx"}},
		{"dot in a name is a regex dot", "app.config", []string{"app.config", "appXconfig"}, []string{"app.config.old"}},
		{"empty entries are skipped", ",,app,, ,", []string{"app"}, []string{""}},
		{"literals and patterns together", "db, cache-[0-9]+, web", []string{"db", "web", "cache-12"}, []string{"cache-", "cache-1a", "dbx"}},
		{"duplicates are harmless", "app,app, app", []string{"app"}, []string{"app,app"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l, problems := ParseNameList(c.list)
			if len(problems) != 0 {
				t.Fatalf("problems = %v, want none", problems)
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

func TestParseNameList_InvalidRegexIsReportedAndSkipped(t *testing.T) {
	l, problems := ParseNameList("a(, app, b[, cache-.*")
	if len(problems) != 2 || problems[0].Value != "a(" || problems[1].Value != "b[" {
		t.Fatalf("problems = %v, want a( and b[", problems)
	}
	for _, p := range problems {
		if p.Annotation != "" {
			t.Errorf("ParseNameList set Annotation %q; the caller names it", p.Annotation)
		}
		if !strings.Contains(p.Reason, "not a valid regular expression") {
			t.Errorf("Reason %q does not say why", p.Reason)
		}
	}
	for _, n := range []string{"app", "cache-1"} {
		if !l.Match(n) {
			t.Errorf("valid entry for %q stopped working next to invalid ones", n)
		}
	}
	for _, n := range []string{"a(", "a", "b[", "b"} {
		if l.Match(n) {
			t.Errorf("skipped entry still matches %q", n)
		}
	}
}

func TestParseNameList_LiteralsAndPatterns(t *testing.T) {
	cases := []struct {
		list         string
		literals     []string
		hasPatterns  bool
		empty        bool
		problemCount int
	}{
		{"", nil, false, true, 0},
		{" , ,", nil, false, true, 0},
		{"b, a, b", []string{"a", "b"}, false, false, 0},
		{"app-.*", nil, true, false, 0},
		{"x, y+", []string{"x"}, true, false, 0},
		{"a(", nil, false, true, 1},
	}
	for _, c := range cases {
		t.Run(c.list, func(t *testing.T) {
			l, problems := ParseNameList(c.list)
			if !slices.Equal(l.Literals(), c.literals) || l.HasPatterns() != c.hasPatterns || l.Empty() != c.empty || len(problems) != c.problemCount {
				t.Errorf("Literals=%q HasPatterns=%v Empty=%v problems=%d, want %q %v %v %d",
					l.Literals(), l.HasPatterns(), l.Empty(), len(problems), c.literals, c.hasPatterns, c.empty, c.problemCount)
			}
		})
	}
}

func TestParseNameList_ThousandEntries(t *testing.T) {
	entries := make([]string, 1000)
	for i := range entries {
		if i%2 == 0 {
			entries[i] = fmt.Sprintf("cm-%d", i)
		} else {
			entries[i] = fmt.Sprintf("re-%d-[a-z]+", i)
		}
	}
	l, problems := ParseNameList(strings.Join(entries, ","))
	if len(problems) != 0 {
		t.Fatalf("problems = %v", problems)
	}
	if len(l.Literals()) != 500 {
		t.Errorf("%d literals, want 500", len(l.Literals()))
	}
	for _, n := range []string{"cm-0", "cm-998", "re-1-abc", "re-999-z"} {
		if !l.Match(n) {
			t.Errorf("%q does not match", n)
		}
	}
	for _, n := range []string{"cm-1", "cm-1000", "re-0-abc", "re-999-"} {
		if l.Match(n) {
			t.Errorf("%q matches", n)
		}
	}
}

// An entry must not be able to close the anchoring group that ParseNameList
// wraps it in: "app)|(.*" is not a valid regular expression on its own, yet
// wrapped as ^(?:app)|(.*)$ it compiles and matches every name.
func TestParseNameList_EntryCannotEscapeTheAnchors(t *testing.T) {
	l, problems := ParseNameList("app)|(.*")
	if l.Match("unrelated") {
		t.Errorf(`"app)|(.*" matches "unrelated"`)
	}
	if len(problems) != 1 {
		t.Errorf("problems = %v, want the entry reported as invalid", problems)
	}
}
