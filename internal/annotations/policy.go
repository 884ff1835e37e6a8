package annotations

import (
	"fmt"
	"strings"

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
type KindPolicy struct {
	// Auto tracks every object of this kind that the pod spec references.
	Auto bool
	// Reload lists the names that trigger the workload, referenced or not.
	Reload NameList
	// Exclude lists the names that never trigger the workload.
	Exclude map[string]bool
}

// Policy is what a workload's annotations say may trigger its rollout.
type Policy struct {
	// Search tracks referenced objects that carry the Match annotation.
	Search     bool
	ConfigMaps KindPolicy
	Secrets    KindPolicy
	// Problems lists the values that were skipped as invalid.
	Problems []Problem

	ignoreKey, matchKey string
}

// For returns the part of the policy for one kind.
func (p *Policy) For(kind refs.Kind) *KindPolicy {
	if kind == refs.Secret {
		return &p.Secrets
	}
	return &p.ConfigMaps
}

// OptedIn reports whether anything at all may trigger the workload.
func (p *Policy) OptedIn() bool {
	return p.Search || p.ConfigMaps.optedIn() || p.Secrets.optedIn()
}

func (k *KindPolicy) optedIn() bool { return k.Auto || !k.Reload.Empty() }

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
func (p *Policy) Tracks(kind refs.Kind, name string, objAnnotations map[string]string, referenced bool) (bool, Verdict) {
	kp := p.For(kind)
	switch {
	case objAnnotations[p.ignoreKey] == "true":
		return false, VerdictIgnored
	case kp.Exclude[name]:
		return false, VerdictExcluded
	case kp.Reload.Match(name):
		return true, VerdictReloadList
	case referenced && p.Search && objAnnotations[p.matchKey] == "true":
		return true, VerdictSearch
	case referenced && kp.Auto:
		return true, VerdictAuto
	}
	return false, VerdictUntracked
}

// ObjectProblems reports the ignore and match annotations of a ConfigMap or
// Secret whose value is neither "true" nor "false", where the value matters
// to this workload. Like a workload's, they are read strictly: such an
// object is neither ignored nor matched, which its author did not intend.
func (p *Policy) ObjectProblems(kind refs.Kind, name string, objAnnotations map[string]string, referenced bool) []Problem {
	var out []Problem
	report := func(key string) {
		out = append(out, Problem{Annotation: key, Value: objAnnotations[key],
			Reason: fmt.Sprintf(`on %s/%s is not "true" or "false"; ignored`, kind, name)})
	}
	tracked, verdict := p.Tracks(kind, name, objAnnotations, referenced)
	if invalidBoolean(objAnnotations, p.ignoreKey) && tracked {
		report(p.ignoreKey)
	}
	if invalidBoolean(objAnnotations, p.matchKey) && referenced && p.Search &&
		verdict != VerdictIgnored && verdict != VerdictExcluded {
		report(p.matchKey)
	}
	return out
}

func invalidBoolean(ann map[string]string, key string) bool {
	v, ok := ann[key]
	return ok && v != "true" && v != "false"
}

// Source picks the annotations that hold a workload's policy: its metadata's,
// unless none of the workload keys is there; then its pod template's.
func (k Keys) Source(metadata, template map[string]string) map[string]string {
	for _, key := range k.workloadKeys() {
		if _, ok := metadata[key]; ok {
			return metadata
		}
	}
	return template
}

// Parse reads a workload's policy from its annotations (see Source).
// autoReloadAll is --auto-reload-all: every workload is auto unless it says
// "false".
func (k Keys) Parse(ann map[string]string, autoReloadAll bool) Policy {
	p := Policy{ignoreKey: k.Ignore, matchKey: k.Match}
	auto := p.boolean(ann, k.Auto)
	cmAuto := p.boolean(ann, k.ConfigMapAuto)
	secretAuto := p.boolean(ann, k.SecretAuto)
	p.Search = p.boolean(ann, k.Search) == isTrue
	p.ConfigMaps = KindPolicy{
		Auto:    kindAuto(auto, cmAuto, autoReloadAll),
		Reload:  p.nameList(ann, k.ConfigMapReload),
		Exclude: names(ann[k.ConfigMapExclude]),
	}
	p.Secrets = KindPolicy{
		Auto:    kindAuto(auto, secretAuto, autoReloadAll),
		Reload:  p.nameList(ann, k.SecretReload),
		Exclude: names(ann[k.SecretExclude]),
	}
	return p
}

type tristate int

const (
	unset tristate = iota
	isTrue
	isFalse
)

// boolean is strict on purpose: Reloader acts on "true" only, so treating
// "yes" or "1" as true would roll workloads that Reloader left alone.
func (p *Policy) boolean(ann map[string]string, key string) tristate {
	v, ok := ann[key]
	switch {
	case !ok:
		return unset
	case v == "true":
		return isTrue
	case v == "false":
		return isFalse
	}
	p.Problems = append(p.Problems, Problem{Annotation: key, Value: v, Reason: `is not "true" or "false"; ignored`})
	return unset
}

// kindAuto: the typed annotation is the more specific and wins; an explicit
// "false" on the general one opts out of --auto-reload-all.
func kindAuto(general, typed tristate, autoReloadAll bool) bool {
	switch {
	case typed != unset:
		return typed == isTrue
	case general != unset:
		return general == isTrue
	}
	return autoReloadAll
}

func (p *Policy) nameList(ann map[string]string, key string) NameList {
	list, problems := ParseNameList(ann[key])
	for _, pr := range problems {
		pr.Annotation = key
		p.Problems = append(p.Problems, pr)
	}
	return list
}

func names(list string) map[string]bool {
	var out map[string]bool
	for _, n := range strings.Split(list, ",") {
		if n = strings.TrimSpace(n); n != "" {
			if out == nil {
				out = map[string]bool{}
			}
			out[n] = true
		}
	}
	return out
}
