package annotations

import (
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"unicode/utf8"
)

// Limits on one reload list. A Kubernetes name has at most 253 characters,
// so no sensible entry comes near them; they exist so that one careless or
// hostile annotation value of up to 256 KiB costs ripple little memory and
// CPU, once.
const (
	// maxEntryBytes is the longest entry that is compiled.
	maxEntryBytes = 512
	// maxEntries is how many non-empty entries of a list are read.
	maxEntries = 256
	// maxParseBytes bounds the text of the regular expressions of one list
	// that is parsed at all, where each Unicode class counts as
	// unicodeClassBytes: parsing one expands it to hundreds of ranges.
	maxParseBytes     = 8192
	unicodeClassBytes = 256
	// maxListCost bounds the compiled size of all the regular expressions of
	// one list together, in units of costOf. A compiled expression takes up
	// to about 200 bytes per unit (measured), and matching a name takes time
	// in proportion to it.
	maxListCost = 4096
)

// NameList is a parsed reload list: each comma-separated entry, trimmed, is
// a regular expression over object names, between "^" and "$". Entries
// without regex metacharacters are kept as literal names so that they can
// be looked up in an index instead of matched against every object. A NameList is shared
// through the cache of parsed lists and never changes once built.
type NameList struct {
	literals []string
	// dotted are entries whose only metacharacter is ".", a name's dots
	// most often: matched without compiling them, they cost a list's
	// budget for regular expressions nothing.
	dotted   []string
	patterns []*regexp.Regexp
	// memo numbers a list whose patterns cost more than memoCost in memos;
	// 0 for a list that matches without remembering.
	memo uint64
}

// ParseNameList parses a reload list. Entries that cannot be used are
// skipped and summed up in at most one Problem (without its annotation
// name); the others still work. Lists are parsed once per distinct value
// and shared (see listCache).
func ParseNameList(list string) (NameList, *Problem) {
	parsed := lists.get(list)
	if parsed.problem == nil {
		return parsed.list, nil
	}
	pr := *parsed.problem
	return parsed.list, &pr
}

// skip is why an entry of a list is not used.
type skip int

const (
	skipInvalid skip = iota
	skipTooLong
	skipTooComplex
	skipBeyondCap
	skipKinds
)

// parsedList is a compiled list with what was skipped, as the cache holds it.
type parsedList struct {
	list    NameList
	problem *Problem
	skipped [skipKinds]int
	// size estimates the bytes the cache holds for this list.
	size int
}

// listBuilder compiles the entries of one list in order.
type listBuilder struct {
	parsedList
	entries int
	parsed  int
	cost    int
	// first is the first skipped entry and why, quoted in the Problem.
	first       string
	firstReason string
}

func compileList(list string) parsedList {
	var b listBuilder
	for entry := range strings.SplitSeq(list, ",") {
		if entry = strings.TrimSpace(entry); entry != "" {
			b.add(entry)
		}
	}
	return b.done(list)
}

func (b *listBuilder) add(entry string) {
	b.entries++
	switch {
	case b.entries > maxEntries:
		b.skip(entry, skipBeyondCap, fmt.Sprintf("is beyond the first %d entries", maxEntries))
	case len(entry) > maxEntryBytes:
		b.skip(entry, skipTooLong, fmt.Sprintf("is longer than %d bytes", maxEntryBytes))
	case regexp.QuoteMeta(entry) == entry:
		// A copy, so that the list does not keep the whole value alive.
		b.list.literals = append(b.list.literals, strings.Clone(entry))
		b.size += len(entry) + 16
	case onlyDots(entry):
		b.list.dotted = append(b.list.dotted, strings.Clone(entry))
		b.size += len(entry) + 16
	default:
		b.pattern(entry)
	}
}

func (b *listBuilder) pattern(entry string) {
	tooComplex := "is too complex for what one list's regular expressions may cost together"
	parse := len(entry) + unicodeClassBytes*(strings.Count(entry, `\p`)+strings.Count(entry, `\P`))
	if b.parsed+parse > maxParseBytes {
		b.skip(entry, skipTooComplex, tooComplex)
		return
	}
	b.parsed += parse
	// Parsed between the anchors, as it is compiled: Reloader reads "*-config"
	// as "^*-config$", the names that end in "-config", where the entry
	// alone is no valid expression.
	tree, err := syntax.Parse("^"+entry+"$", syntax.Perl)
	if err != nil {
		b.skip(entry, skipInvalid, "is not a valid regular expression ("+reason(err)+")")
		return
	}
	cost := costOf(tree, maxListCost-b.cost+1)
	if b.cost+cost > maxListCost {
		b.skip(entry, skipTooComplex, tooComplex)
		return
	}
	re, err := anchored(entry)
	if err != nil {
		b.skip(entry, skipInvalid, "is not a valid regular expression ("+reason(err)+")")
		return
	}
	b.cost += cost
	b.list.patterns = append(b.list.patterns, re)
	b.size += 512 + 200*cost
}

// reason is the short part of a regexp error, without the expression that
// the Problem quotes anyway.
func reason(err error) string {
	var se *syntax.Error
	if errors.As(err, &se) {
		return string(se.Code)
	}
	return Shorten(err.Error(), maxQuoted)
}

func (b *listBuilder) skip(entry string, why skip, reason string) {
	if b.first == "" {
		b.first, b.firstReason = Shorten(entry, maxQuoted), reason
	}
	b.skipped[why]++
}

// skipLabels name the kinds of skip in a Problem's summary.
var skipLabels = [skipKinds]string{
	skipInvalid:    "invalid",
	skipTooLong:    fmt.Sprintf("longer than %d bytes", maxEntryBytes),
	skipTooComplex: "too complex",
	skipBeyondCap:  fmt.Sprintf("beyond the first %d", maxEntries),
}

func (b *listBuilder) done(list string) parsedList {
	if b.cost > memoCost {
		b.list.memo = memoIDs.Add(1)
	}
	slices.Sort(b.list.literals)
	b.list.literals = slices.Compact(b.list.literals)
	b.size += len(list) + 256
	if b.first == "" {
		return b.parsedList
	}
	total := 0
	var parts []string
	for why, n := range b.skipped {
		total += n
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, skipLabels[why]))
		}
	}
	summary := fmt.Sprintf("; %d of %d entries skipped", total, b.entries)
	if total > 1 {
		summary += " (" + strings.Join(parts, ", ") + ")"
	}
	b.problem = &Problem{Value: b.first, Reason: b.firstReason + summary}
	return b.parsedList
}

// anchored compiles the entry between "^" and "$", from its own text, as
// Reloader does: "a|b" is "^a|b$", the names that start with a or end with
// b, and "(a|b)" the two names alone. The parser would fold "a|b" into
// "[a-b]", anchored at both ends. Text like "a)|(.*" cannot escape the
// anchors: between them it is not valid, and the parse refused it.
func anchored(entry string) (*regexp.Regexp, error) {
	return regexp.Compile("^" + entry + "$")
}

// costOf estimates the size of the compiled expression: one unit per
// instruction, and one per rune range of a character class, since the
// one-pass matcher that anchored expressions get builds a table per range.
// Repetitions are expanded as the compiler expands them. It stops counting
// past limit.
func costOf(re *syntax.Regexp, limit int) int {
	n := 1
	switch re.Op {
	case syntax.OpLiteral:
		n += len(re.Rune)
	case syntax.OpCharClass:
		n += len(re.Rune) / 2
	case syntax.OpRepeat:
		copies := re.Max
		if copies < 0 {
			copies = re.Min + 1
		}
		return min(n+max(copies, 1)*costOf(re.Sub[0], limit), limit)
	}
	for _, sub := range re.Sub {
		if n += costOf(sub, limit); n >= limit {
			return limit
		}
	}
	return n
}

// onlyDots reports whether the entry's only regex metacharacter is ".",
// in valid UTF-8, which the parser refuses otherwise.
func onlyDots(entry string) bool {
	plain := strings.ReplaceAll(entry, ".", "")
	return plain != entry && regexp.QuoteMeta(plain) == plain && utf8.ValidString(entry)
}

// matchDotted matches name against an entry whose only metacharacter is
// ".", as "^entry$" would: rune by rune, "." any rune but a newline.
func matchDotted(entry, name string) bool {
	e, n := []rune(entry), []rune(name)
	if len(e) != len(n) {
		return false
	}
	for i := range e {
		if e[i] == '.' && n[i] == '\n' || e[i] != '.' && e[i] != n[i] {
			return false
		}
	}
	return true
}

// Match reports whether name is on the list.
func (l NameList) Match(name string) bool {
	if _, found := slices.BinarySearch(l.literals, name); found {
		return true
	}
	for _, entry := range l.dotted {
		if matchDotted(entry, name) {
			return true
		}
	}
	if l.memo != 0 {
		return memos.match(l.memo, name, l.matchPatterns)
	}
	return l.matchPatterns(name)
}

func (l NameList) matchPatterns(name string) bool {
	for _, re := range l.patterns {
		if re.MatchString(name) {
			return true
		}
	}
	return false
}

// Literals returns the entries that are plain names, sorted. The slice is
// shared: do not change it.
func (l NameList) Literals() []string { return l.literals }

// HasPatterns reports whether any entry is a real regular expression.
func (l NameList) HasPatterns() bool { return len(l.patterns) > 0 || len(l.dotted) > 0 }

// Empty reports whether the list has no valid entry.
func (l NameList) Empty() bool {
	return len(l.literals) == 0 && len(l.dotted) == 0 && len(l.patterns) == 0
}
