package annotations

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ripple-controller/ripple/internal/refs"
)

// FuzzParse feeds arbitrary values to every workload annotation and checks
// that parsing and Tracks never panic, that every Problem names an
// annotation that is present and quotes part of its value, and that the
// verdicts keep their documented precedence.
func FuzzParse(f *testing.F) {
	f.Add("true", "", "false", "yes", "app, a(", "db-.*", "x", "", "app", "true", "true", true, false)
	f.Add("false", "true", "", "true", "", "", "", "", "cm", "", "true", false, true)
	f.Add("TRUE ", "1", "True", "", ",,", " , ", "a,b", "b", "b", "false", "", true, true)
	f.Add("", "", "", "", "a)|(b", "\\Qx", "", "", "zzz", "", "", false, false)
	f.Fuzz(func(t *testing.T, auto, cmAuto, secretAuto, search, cmReload, secretReload, cmExclude, secretExclude,
		objName, objIgnore, objMatch string, autoReloadAll, referenced bool) {
		k := DefaultKeys()
		ann := map[string]string{}
		set := func(key, v string) {
			// An empty fuzz value stands for an absent annotation half the
			// time, so that both forms are covered.
			if v != "" || autoReloadAll {
				ann[key] = v
			}
		}
		set(k.Auto, auto)
		set(k.ConfigMapAuto, cmAuto)
		set(k.SecretAuto, secretAuto)
		set(k.Search, search)
		set(k.ConfigMapReload, cmReload)
		set(k.SecretReload, secretReload)
		set(k.ConfigMapExclude, cmExclude)
		set(k.SecretExclude, secretExclude)

		p := k.Parse(ann, autoReloadAll)
		checkProblems(t, k, ann, p)
		checkTracks(t, p, k, objName, objIgnore, objMatch, referenced)
	})
}

// checkProblems: every invalid value, and nothing else, is reported.
func checkProblems(t *testing.T, k Keys, ann map[string]string, p Policy) {
	t.Helper()
	booleans := map[string]bool{k.Auto: true, k.ConfigMapAuto: true, k.SecretAuto: true, k.Search: true}
	for _, pr := range p.Problems {
		v, ok := ann[pr.Annotation]
		if !ok {
			t.Fatalf("Problem %v names an annotation that is not set", pr)
		}
		if !strings.Contains(pr.String(), pr.Annotation) {
			t.Fatalf("Problem.String() %q does not name %s", pr.String(), pr.Annotation)
		}
		switch {
		case booleans[pr.Annotation]:
			if pr.Value != v || v == "true" || v == "false" {
				t.Fatalf("boolean Problem %v for value %q", pr, v)
			}
		case pr.Annotation == k.ConfigMapReload || pr.Annotation == k.SecretReload:
			if pr.Value == "" || !strings.Contains(v, pr.Value) {
				t.Fatalf("reload-list Problem %v does not quote an entry of %q", pr, v)
			}
		default:
			t.Fatalf("Problem %v for an annotation that cannot be invalid", pr)
		}
	}
	for key := range booleans {
		v, ok := ann[key]
		if !ok || v == "true" || v == "false" {
			continue
		}
		if !slices.ContainsFunc(p.Problems, func(pr Problem) bool { return pr.Annotation == key }) {
			t.Fatalf("invalid boolean %s=%q was not reported", key, v)
		}
	}
	if p.Search != (ann[k.Search] == "true") {
		t.Fatalf("Search = %v for %q", p.Search, ann[k.Search])
	}
}

// checkTracks: the verdicts follow the documented precedence.
func checkTracks(t *testing.T, p Policy, k Keys, objName, objIgnore, objMatch string, referenced bool) {
	t.Helper()
	obj := map[string]string{k.Ignore: objIgnore, k.Match: objMatch}
	for _, kind := range refs.Kinds {
		ok, v := p.Tracks(kind, objName, obj, referenced)
		wantOK := v == VerdictReloadList || v == VerdictSearch || v == VerdictAuto
		if ok != wantOK {
			t.Fatalf("Tracks = %v with verdict %s", ok, v)
		}
		if objIgnore == "true" && v != VerdictIgnored {
			t.Fatalf("ignored object got verdict %s", v)
		}
		if !referenced && (v == VerdictSearch || v == VerdictAuto) {
			t.Fatalf("unreferenced object got verdict %s", v)
		}
		if v == VerdictSearch && objMatch != "true" {
			t.Fatalf("search verdict without match=true (%q)", objMatch)
		}
		if ok && !p.OptedIn() {
			t.Fatalf("a workload that is not opted in tracks %s/%s", kind, objName)
		}
	}
}

// FuzzNameList checks that reload lists are anchored: a literal entry
// matches exactly itself, and a name matches the list only if some valid
// entry matches the whole name.
func FuzzNameList(f *testing.F) {
	f.Add("app", "app-2")
	f.Add("app-.*", "app-2")
	f.Add("app-.*", "my-app-2")
	f.Add("a|b", "ab")
	f.Add(" db , cache-[0-9]+ ,, a(", "cache-7")
	f.Add("x*", "")
	f.Add("^a$|b", "b")
	f.Add("a.b", "aXb")
	f.Fuzz(func(t *testing.T, list, name string) {
		l, problems := ParseNameList(list)
		invalid := map[string]bool{}
		for _, pr := range problems {
			invalid[pr.Value] = true
		}

		var accepted []string
		for _, entry := range strings.Split(list, ",") {
			entry = strings.TrimSpace(entry)
			if entry == "" || invalid[entry] {
				continue
			}
			if _, err := regexp.Compile(entry); err != nil && regexp.QuoteMeta(entry) != entry {
				t.Fatalf("entry %q is accepted although invalid on its own", entry)
			}
			accepted = append(accepted, entry)
		}

		for _, entry := range accepted {
			if regexp.QuoteMeta(entry) != entry {
				continue
			}
			// A literal matches exactly itself, alone and within the list.
			if !l.Match(entry) {
				t.Fatalf("literal %q in %q does not match itself", entry, list)
			}
			single, _ := ParseNameList(entry)
			if single.Match(name) != (name == entry) {
				t.Fatalf("literal list %q: Match(%q) = %v", entry, name, single.Match(name))
			}
		}

		wholly := false
		for _, entry := range accepted {
			if regexp.QuoteMeta(entry) == entry {
				if entry == name {
					wholly = true
					break
				}
				continue
			}
			re := regexp.MustCompile(entry)
			re.Longest()
			if loc := re.FindStringIndex(name); loc != nil && loc[0] == 0 && loc[1] == len(name) {
				wholly = true
				break
			}
		}
		if got := l.Match(name); got != wholly {
			t.Fatalf("ParseNameList(%q).Match(%q) = %v, but an entry matching the whole name: %v", list, name, got, wholly)
		}
	})
}
