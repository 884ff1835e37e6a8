package annotations

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ripple-controller/ripple/internal/refs"
)

// Problem is a user's mistake in a workload's annotations. It is reported
// (log and Event) and the offending value is skipped; the rest still works.
type Problem struct {
	Annotation string
	Value      string
	Reason     string
}

func (p Problem) String() string {
	return fmt.Sprintf("annotation %s: %q %s", p.Annotation, p.Value, p.Reason)
}

// KindPolicy is what may trigger a workload, for one kind of config object.
// Like Reloader, ripple reads it for each kind on its own: from the
// workload's metadata, or from its pod template when the metadata has none
// of that kind's keys.
type KindPolicy struct {
	// Auto tracks every object of this kind that the pod spec references.
	Auto bool
	// Search tracks referenced objects of this kind that carry the Match
	// annotation.
	Search bool
	// Reload lists the names that trigger the workload, referenced or not.
	Reload NameList
	// Exclude lists the names that never trigger the workload.
	Exclude NameSet
}

// Policy is what a workload's annotations say may trigger its rollout.
type Policy struct {
	ConfigMaps KindPolicy
	Secrets    KindPolicy
	// SecretProviderClasses is empty without --enable-csi-integration.
	SecretProviderClasses KindPolicy
	// Problems lists the values that were skipped as invalid.
	Problems []Problem

	ignoreKey, matchKey string
}

// For returns the part of the policy for one kind.
func (p *Policy) For(kind refs.Kind) *KindPolicy {
	switch kind {
	case refs.Secret:
		return &p.Secrets
	case refs.SecretProviderClass:
		return &p.SecretProviderClasses
	}
	return &p.ConfigMaps
}

// OptedIn reports whether anything at all may trigger the workload.
func (p *Policy) OptedIn() bool {
	return p.ConfigMaps.optedIn() || p.Secrets.optedIn() || p.SecretProviderClasses.optedIn()
}

func (k *KindPolicy) optedIn() bool { return k.Auto || k.Search || !k.Reload.Empty() }

// Verdict is why an object does or does not trigger a workload.
type Verdict string

// The verdicts, in the order of precedence in which Policy.Tracks decides.
const (
	VerdictIgnored    Verdict = "ignored"
	VerdictExcluded   Verdict = "excluded"
	VerdictReloadList Verdict = "reload-list"
	VerdictSearch     Verdict = "search"
	VerdictAuto       Verdict = "auto"
	VerdictUntracked  Verdict = "untracked"
)

// Tracks decides whether a change of the object triggers the workload:
// ignore on the object, then the exclude list, then the reload list, then
// search/match, then auto. referenced says whether the pod spec uses it.
// Ignore and match count only when exactly "true", as in Reloader.
func (p *Policy) Tracks(kind refs.Kind, name string, objAnnotations map[string]string, referenced bool) (bool, Verdict) {
	kp := p.For(kind)
	switch {
	case objAnnotations[p.ignoreKey] == "true":
		return false, VerdictIgnored
	case kp.Exclude.Has(name):
		return false, VerdictExcluded
	case kp.Reload.Match(name):
		return true, VerdictReloadList
	case referenced && kp.Search && objAnnotations[p.matchKey] == "true":
		return true, VerdictSearch
	case referenced && kp.Auto:
		return true, VerdictAuto
	}
	return false, VerdictUntracked
}

// ObjectProblems reports the ignore and match annotations of a ConfigMap or
// Secret whose value is neither "true" nor "false", where the value matters
// to this workload. Reloader acts on exactly "true" only, so such an object
// is neither ignored nor matched, which its author likely did not intend.
func (p *Policy) ObjectProblems(kind refs.Kind, name string, objAnnotations map[string]string, referenced bool) []Problem {
	var out []Problem
	report := func(key string) {
		out = append(out, Problem{Annotation: key, Value: Shorten(objAnnotations[key], maxQuoted),
			Reason: fmt.Sprintf(`on %s/%s is not "true" or "false"; only "true" counts, so it is ignored`, kind, name)})
	}
	tracked, verdict := p.Tracks(kind, name, objAnnotations, referenced)
	if notStrictBoolean(objAnnotations, p.ignoreKey) && tracked {
		report(p.ignoreKey)
	}
	if notStrictBoolean(objAnnotations, p.matchKey) && referenced && p.For(kind).Search &&
		verdict != VerdictIgnored && verdict != VerdictExcluded {
		report(p.matchKey)
	}
	return out
}

func notStrictBoolean(ann map[string]string, key string) bool {
	v, ok := ann[key]
	return ok && v != "true" && v != "false"
}

// Parse reads a workload's policy from the annotations of its metadata and
// of its pod template, with Reloader's rules: each kind is read from the
// metadata unless it has none of that kind's keys (see Keys.fallsBack),
// then from the template; the exclude lists only ever from the metadata.
// autoReloadAll is --auto-reload-all: every workload is auto unless it sets
// auto or the typed auto to a value that is not true.
func (k Keys) Parse(metadata, template map[string]string, autoReloadAll bool) Policy {
	p := Policy{ignoreKey: k.Ignore, matchKey: k.Match}
	p.ConfigMaps = p.kind(k, k.forKind(refs.ConfigMap), metadata, template, autoReloadAll)
	p.Secrets = p.kind(k, k.forKind(refs.Secret), metadata, template, autoReloadAll)
	// Without CSI integration the kind behaves as if absent: not even auto
	// or --auto-reload-all reaches it.
	if k.csi() {
		p.SecretProviderClasses = p.kind(k, k.forKind(refs.SecretProviderClass), metadata, template, autoReloadAll)
	}
	return p
}

func (p *Policy) kind(k Keys, kk kindKeys, metadata, template map[string]string, autoReloadAll bool) KindPolicy {
	ann, empty := metadata, emptyOnMetadata
	if k.fallsBack(kk, metadata) {
		ann, empty = template, emptyOnTemplate
	}
	auto, autoSet := p.boolean(ann, k.Auto, empty)
	typed, typedSet := p.boolean(ann, kk.auto, empty)
	return KindPolicy{
		Auto:    auto || typed || (!autoSet && !typedSet && autoReloadAll),
		Search:  p.strictBoolean(ann, k.Search),
		Reload:  p.nameList(ann, kk.reload),
		Exclude: p.nameSet(metadata, kk.exclude),
	}
}

// The reasons given for an empty boolean. On the workload's metadata, as
// in Reloader, the key's presence alone keeps the pod template's
// annotations of its kind from being read, a chart's `auto: ""` hiding the
// template's "true".
const (
	emptyOnTemplate = "is empty; read as not set"
	emptyOnMetadata = "is empty; read as not set, and, being on the workload's metadata, keeps the pod template's annotations of its kind from being read"
)

// boolean reads a value as Reloader does, with strconv.ParseBool: "1", "t",
// "True" are true. set is whether the value is non-empty: any such value
// that is not true, parsable or not, opts out of --auto-reload-all. empty
// is the reason reported for an empty value.
func (p *Policy) boolean(ann map[string]string, key, empty string) (value, set bool) {
	v, ok := ann[key]
	if !ok {
		return false, false
	}
	b, err := strconv.ParseBool(v)
	switch {
	case v == "":
		p.report(Problem{Annotation: key, Value: v, Reason: empty})
	case err != nil:
		p.report(Problem{Annotation: key, Value: Shorten(v, maxQuoted), Reason: "is not a boolean; read as false"})
	}
	return b, v != ""
}

// strictBoolean reads search as Reloader does: exactly "true", so "True"
// or "1" would roll workloads that Reloader leaves alone.
func (p *Policy) strictBoolean(ann map[string]string, key string) bool {
	v, ok := ann[key]
	if ok && v != "true" && v != "false" {
		p.report(Problem{Annotation: key, Value: Shorten(v, maxQuoted), Reason: `is not "true" or "false"; only "true" counts, so it is ignored`})
	}
	return v == "true"
}

func (p *Policy) nameList(ann map[string]string, key string) NameList {
	list, problem := ParseNameList(ann[key])
	if problem != nil {
		problem.Annotation = key
		p.report(*problem)
	}
	return list
}

// report adds a Problem once: both kinds may read the same annotation.
func (p *Policy) report(pr Problem) {
	if !slices.Contains(p.Problems, pr) {
		p.Problems = append(p.Problems, pr)
	}
}

// NameSet is an exclude list: plain names, compared as they are.
type NameSet map[string]bool

// Has reports whether name is in the list.
func (s NameSet) Has(name string) bool { return s[name] }

// nameSet reads an exclude list, at most maxEntries names as a reload list:
// a 256 KiB value of short names made a map of several MiB in each cached
// view, and a search of the value for each object looked at cost as much
// again per reconcile. The names past the cap exclude nothing, and say so.
func (p *Policy) nameSet(ann map[string]string, key string) NameSet {
	var out NameSet
	beyond := 0
	for n := range strings.SplitSeq(ann[key], ",") {
		switch n = strings.TrimSpace(n); {
		case n == "" || out[n]:
		case len(out) == maxEntries:
			beyond++
		default:
			if out == nil {
				out = NameSet{}
			}
			out[n] = true
		}
	}
	if beyond > 0 {
		p.report(Problem{Annotation: key, Value: Shorten(ann[key], maxQuoted),
			Reason: fmt.Sprintf("has %d names beyond the first %d, which exclude nothing", beyond, maxEntries)})
	}
	return out
}

// maxQuoted is the most bytes of a user's value that a Problem quotes, so
// that a log line or an Event about a huge value stays small.
const maxQuoted = 128

// Shorten cuts s to at most limit bytes, at a rune boundary, marking the
// cut: for any text about a user's value that must stay bounded.
func Shorten(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	const mark = "..."
	cut := limit - len(mark)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + mark
}

// Choice reads the annotation key of a workload's metadata, whose value must
// be one of values. Absent, it is def; any other value is a Problem, and
// def applies.
func Choice(metadata map[string]string, key string, values []string, def string) (string, *Problem) {
	v, ok := metadata[key]
	switch {
	case !ok:
		return def, nil
	case slices.Contains(values, v):
		return v, nil
	}
	return def, &Problem{Annotation: key, Value: Shorten(v, maxQuoted),
		Reason: fmt.Sprintf("is not one of %s; %q applies", strings.Join(values, ", "), def)}
}
