package annotations

import (
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ripple-controller/ripple/internal/refs"
)

// FuzzParse feeds arbitrary values to every workload annotation, on the
// workload's metadata, its pod template or both, and checks that parsing
// and Tracks never panic, that every Problem names an annotation that is
// read and quotes a bounded part of its value, and that Tracks decides as
// Reloader's rules do (reloaderTracks).
func FuzzParse(f *testing.F) {
	f.Add("true", "", "false", "yes", "app, a(", "db-.*", "x", "", "app", "true", "true", true, false, uint16(0))
	f.Add("false", "true", "", "true", "", "", "", "", "cm", "", "true", false, true, uint16(0))
	f.Add("TRUE ", "1", "True", "", ",,", " , ", "a,b", "b", "b", "false", "", true, true, uint16(0))
	f.Add("", "", "", "", "a)|(b", "\\Qx", "", "", "zzz", "", "", false, false, uint16(0))
	// The ConfigMap reload list on the metadata, the rest on the template.
	f.Add("true", "", "t", "", "cm", "", "", "s", "s", "", "", false, true, uint16(0xfff3))
	f.Fuzz(func(t *testing.T, auto, cmAuto, secretAuto, search, cmReload, secretReload, cmExclude, secretExclude,
		objName, objIgnore, objMatch string, autoReloadAll, referenced bool, placement uint16) {
		k := DefaultKeys()
		metadata, template := map[string]string{}, map[string]string{}
		values := []string{auto, cmAuto, secretAuto, search, cmReload, secretReload, cmExclude, secretExclude}
		keys := []string{k.Auto, k.ConfigMapAuto, k.SecretAuto, k.Search, k.ConfigMapReload, k.SecretReload, k.ConfigMapExclude, k.SecretExclude}
		for i, v := range values {
			// An empty fuzz value stands for an absent annotation half the
			// time, so that both forms are covered. Two bits per key put it
			// on the template too, and take it off the metadata.
			if v == "" && !autoReloadAll {
				continue
			}
			if placement&(1<<(2*i)) != 0 {
				template[keys[i]] = v
			}
			if placement&(1<<(2*i+1)) == 0 {
				metadata[keys[i]] = v
			}
		}

		p := k.Parse(metadata, template, autoReloadAll)
		checkProblems(t, k, metadata, template, p)
		obj := map[string]string{k.Ignore: objIgnore, k.Match: objMatch}
		for _, kind := range refs.Kinds {
			ok, v := p.Tracks(kind, objName, obj, referenced)
			want := reloaderTracks(k, kind, objName, obj, metadata, template, referenced, autoReloadAll)
			if ok != want {
				t.Fatalf("Tracks(%s/%s) = %v (%s), Reloader's rules say %v; metadata %q template %q", kind, objName, ok, v, want, metadata, template)
			}
			if ok != (v == VerdictReloadList || v == VerdictSearch || v == VerdictAuto) {
				t.Fatalf("Tracks = %v with verdict %s", ok, v)
			}
			if ok && !p.OptedIn() {
				t.Fatalf("a workload that is not opted in tracks %s/%s", kind, objName)
			}
		}
	})
}

// kindKeyNames are the names of one kind's keys, spelled out rather than
// taken from Keys.forKind, so that the reference below stands on its own.
func kindKeyNames(k Keys, kind refs.Kind) (reload, typedAuto, exclude string) {
	if kind == refs.Secret {
		return k.SecretReload, k.SecretAuto, k.SecretExclude
	}
	return k.ConfigMapReload, k.ConfigMapAuto, k.ConfigMapExclude
}

// readFrom is the map Reloader reads one kind's policy from.
func readFrom(k Keys, kind refs.Kind, metadata, template map[string]string) map[string]string {
	reload, typedAuto, _ := kindKeyNames(k, kind)
	for _, key := range []string{reload, k.Auto, typedAuto, k.Search} {
		if _, ok := metadata[key]; ok {
			return metadata
		}
	}
	return template
}

// reloaderTracks restates Reloader's decision (ShouldReload in its
// pkg/common, plus its check that auto and search only act on objects the
// pod spec uses) for one object. The reload list is read entry by entry,
// each a regular expression between "^" and "$", and none of ripple's
// shortcuts; only a list ripple reports a Problem for (an entry skipped
// past its caps, or invalid, which Reloader skips silently) is read
// ripple's way.
func reloaderTracks(k Keys, kind refs.Kind, name string, obj, metadata, template map[string]string, referenced, autoReloadAll bool) bool {
	reload, typedAuto, exclude := kindKeyNames(k, kind)
	if obj[k.Ignore] == "true" {
		return false
	}
	for _, n := range strings.Split(metadata[exclude], ",") {
		// An empty entry names nothing: no object has an empty name.
		if n = strings.TrimSpace(n); n != "" && n == name {
			return false
		}
	}
	ann := readFrom(k, kind, metadata, template)
	list, problem := ParseNameList(ann[reload])
	listed := list.Match(name)
	if problem == nil {
		listed = anyWholly(ann[reload], name)
	}
	if listed {
		return true
	}
	if !referenced {
		return false
	}
	if ann[k.Search] == "true" && obj[k.Match] == "true" {
		return true
	}
	a, _ := strconv.ParseBool(ann[k.Auto])
	typed, _ := strconv.ParseBool(ann[typedAuto])
	return a || typed || (ann[k.Auto] == "" && ann[typedAuto] == "" && autoReloadAll)
}

// checkProblems: every value ripple reads and cannot use, and nothing else,
// is reported once, quoted short.
func checkProblems(t *testing.T, k Keys, metadata, template map[string]string, p Policy) {
	t.Helper()
	read := map[string]string{}
	for _, kind := range refs.Kinds {
		ann := readFrom(k, kind, metadata, template)
		reload, typedAuto, _ := kindKeyNames(k, kind)
		for _, key := range []string{k.Auto, typedAuto, k.Search, reload} {
			if v, ok := ann[key]; ok {
				read[key] = v
			}
		}
	}
	reported := map[string]int{}
	for _, pr := range p.Problems {
		v, ok := read[pr.Annotation]
		if !ok {
			t.Fatalf("Problem %v names an annotation that is not read", pr)
		}
		reported[pr.Annotation]++
		if len(pr.Value) > maxQuoted || len(pr.String()) > 1024 {
			t.Fatalf("Problem %v is too long", pr)
		}
		if !strings.Contains(v, strings.TrimSuffix(pr.Value, "...")) {
			t.Fatalf("Problem %v does not quote a part of %q", pr, v)
		}
	}
	for key, v := range read {
		_, err := strconv.ParseBool(v)
		var want bool
		switch key {
		case k.Auto, k.ConfigMapAuto, k.SecretAuto:
			want = err != nil
		case k.Search:
			want = v != "true" && v != "false"
		default:
			_, problem := ParseNameList(v)
			want = problem != nil
		}
		if got := reported[key]; got != map[bool]int{true: 1}[want] {
			t.Fatalf("%s=%q reported %d times, want a Problem: %v", key, v, got, want)
		}
	}
}

// FuzzNameList checks that reload lists are anchored and bounded: a name
// matches the list only if some entry matches the whole name, every usable
// entry within the budget is used, and whatever is skipped is summed up in
// one Problem.
func FuzzNameList(f *testing.F) {
	f.Add("app", "app-2")
	f.Add("app-.*", "app-2")
	f.Add("app-.*", "my-app-2")
	f.Add("a|b", "ab")
	f.Add(" db , cache-[0-9]+ ,, a(", "cache-7")
	f.Add("x*", "")
	f.Add("^a$|b", "b")
	f.Add("a.b", "aXb")
	f.Add("*", "x")
	f.Add("*-config", "app-config")
	f.Add("a)|(b", "a")
	f.Add(strings.Repeat("x,", 300)+"y", "y")
	f.Fuzz(func(t *testing.T, list, name string) {
		parsed := compileList(list)
		var entries []string
		for entry := range strings.SplitSeq(list, ",") {
			if entry = strings.TrimSpace(entry); entry != "" {
				entries = append(entries, entry)
			}
		}
		checkSkipped(t, list, entries, parsed)

		complete := parsed.skipped[skipTooComplex] == 0
		matched := false
		for i, entry := range entries {
			if i >= maxEntries || len(entry) > maxEntryBytes || !wholly(entry, name) {
				continue
			}
			matched = true
		}
		got := parsed.list.Match(name)
		if got && !matched {
			t.Fatalf("compileList(%q).Match(%q) = true, but no usable entry matches the whole name", list, name)
		}
		if complete && got != matched {
			t.Fatalf("compileList(%q).Match(%q) = %v, but an entry matching the whole name: %v", list, name, got, matched)
		}
	})
}

// checkSkipped: entries beyond the cap and over-long ones are skipped,
// invalid ones too, and a Problem is there exactly when something was.
func checkSkipped(t *testing.T, list string, entries []string, parsed parsedList) {
	t.Helper()
	var beyond, long, invalid int
	for i, entry := range entries {
		switch {
		case i >= maxEntries:
			beyond++
		case len(entry) > maxEntryBytes:
			long++
		case regexp.QuoteMeta(entry) != entry:
			if _, err := syntax.Parse("^"+entry+"$", syntax.Perl); err != nil {
				invalid++
			}
		}
	}
	if parsed.skipped[skipBeyondCap] != beyond || parsed.skipped[skipTooLong] != long {
		t.Fatalf("%q: skipped %v, want %d beyond the cap and %d too long", list, parsed.skipped, beyond, long)
	}
	// An invalid entry the parse budget skipped first counts as too complex.
	if parsed.skipped[skipInvalid] > invalid || parsed.skipped[skipInvalid]+parsed.skipped[skipTooComplex] < invalid {
		t.Fatalf("%q: skipped %v, want %d invalid", list, parsed.skipped, invalid)
	}
	total := 0
	for _, n := range parsed.skipped {
		total += n
	}
	if (parsed.problem != nil) != (total > 0) {
		t.Fatalf("%q: Problem %v with %d entries skipped", list, parsed.problem, total)
	}
	if parsed.problem != nil && len(parsed.problem.String()) > 1024 {
		t.Fatalf("%q: Problem of %d bytes", list, len(parsed.problem.String()))
	}
}

// wholly reports whether the entry, as a regular expression of its own
// between "^" and "$" (Reloader's reading), matches name: a plain name
// matches only itself that way too, with no shortcut to share a mistake
// with the code under test. Invalid UTF-8, which no annotation or name the
// API server holds can carry and which a regular expression reads as
// U+FFFD, is compared as ripple compares it.
func wholly(entry, name string) bool {
	if (!utf8.ValidString(entry) || !utf8.ValidString(name)) && regexp.QuoteMeta(entry) == entry {
		return entry == name
	}
	matched, err := regexp.MatchString("^"+entry+"$", name)
	return err == nil && matched
}

// anyWholly reports whether some entry of a comma-separated list, spaces
// trimmed, matches name wholly.
func anyWholly(list, name string) bool {
	for _, entry := range strings.Split(list, ",") {
		if entry = strings.TrimSpace(entry); entry != "" && wholly(entry, name) {
			return true
		}
	}
	return false
}
