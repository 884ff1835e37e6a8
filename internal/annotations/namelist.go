package annotations

import (
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
)

// NameList is a parsed reload list: each comma-separated entry, trimmed, is
// an anchored regular expression over object names. Entries without regex
// metacharacters are kept as literal names so that they can be looked up in
// an index instead of matched against every object.
type NameList struct {
	literals []string
	patterns []*regexp.Regexp
}

// ParseNameList parses a reload list. An invalid entry is returned as a
// Problem (without its annotation name) and skipped.
func ParseNameList(list string) (NameList, []Problem) {
	var l NameList
	var problems []Problem
	for _, entry := range strings.Split(list, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		if regexp.QuoteMeta(entry) == entry {
			l.literals = append(l.literals, entry)
			continue
		}
		re, err := anchored(entry)
		if err != nil {
			problems = append(problems, Problem{Value: entry, Reason: "is not a valid regular expression (" + err.Error() + "); skipped"})
			continue
		}
		l.patterns = append(l.patterns, re)
	}
	slices.Sort(l.literals)
	l.literals = slices.Compact(l.literals)
	return l, problems
}

// anchored compiles the entry to match whole names only. The entry is parsed
// on its own first and anchored in its canonical form, so that text like
// "a)|(.*" cannot break out of the anchors.
func anchored(entry string) (*regexp.Regexp, error) {
	tree, err := syntax.Parse(entry, syntax.Perl)
	if err != nil {
		return nil, err
	}
	return regexp.Compile("^(?:" + tree.String() + ")$")
}

// Match reports whether name is on the list.
func (l NameList) Match(name string) bool {
	if _, found := slices.BinarySearch(l.literals, name); found {
		return true
	}
	for _, re := range l.patterns {
		if re.MatchString(name) {
			return true
		}
	}
	return false
}

// Literals returns the entries that are plain names, sorted.
func (l NameList) Literals() []string { return l.literals }

// HasPatterns reports whether any entry is a real regular expression.
func (l NameList) HasPatterns() bool { return len(l.patterns) > 0 }

// Empty reports whether the list has no valid entry.
func (l NameList) Empty() bool { return len(l.literals) == 0 && len(l.patterns) == 0 }
