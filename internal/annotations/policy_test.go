package annotations

import (
	"slices"
	"strings"
	"testing"

	"github.com/ripple-controller/ripple/internal/refs"
)

const (
	cmAutoKey  = ConfigMapAuto
	secAutoKey = SecretAuto
)

func TestParse_AutoAndSearch(t *testing.T) {
	cases := []struct {
		name          string
		ann           map[string]string
		autoReloadAll bool
		wantCM        bool
		wantSecret    bool
		wantSearch    bool
		wantOptedIn   bool
	}{
		{name: "no annotations tracks nothing", ann: nil},
		{name: "auto true tracks both kinds", ann: map[string]string{Auto: "true"}, wantCM: true, wantSecret: true, wantOptedIn: true},
		{name: "auto false tracks nothing", ann: map[string]string{Auto: "false"}},
		{name: "configmap auto only", ann: map[string]string{cmAutoKey: "true"}, wantCM: true, wantOptedIn: true},
		{name: "secret auto only", ann: map[string]string{secAutoKey: "true"}, wantSecret: true, wantOptedIn: true},
		{name: "typed false overrides auto true", ann: map[string]string{Auto: "true", secAutoKey: "false"}, wantCM: true, wantOptedIn: true},
		{name: "typed true overrides auto false", ann: map[string]string{Auto: "false", cmAutoKey: "true"}, wantCM: true, wantOptedIn: true},
		{name: "auto-reload-all makes unannotated workloads auto", autoReloadAll: true, wantCM: true, wantSecret: true, wantOptedIn: true},
		{name: "auto-reload-all with auto false opts out", ann: map[string]string{Auto: "false"}, autoReloadAll: true},
		{name: "auto-reload-all with configmap auto false keeps secrets", ann: map[string]string{cmAutoKey: "false"}, autoReloadAll: true, wantSecret: true, wantOptedIn: true},
		{name: "auto-reload-all with auto false but secret auto true", ann: map[string]string{Auto: "false", secAutoKey: "true"}, autoReloadAll: true, wantSecret: true, wantOptedIn: true},
		{name: "auto-reload-all with an invalid auto stays auto", ann: map[string]string{Auto: "no"}, autoReloadAll: true, wantCM: true, wantSecret: true, wantOptedIn: true},
		{name: "search true", ann: map[string]string{Search: "true"}, wantSearch: true, wantOptedIn: true},
		{name: "search false", ann: map[string]string{Search: "false"}},
		{name: "reload list alone opts in", ann: map[string]string{ConfigMapReload: "app"}, wantOptedIn: true},
		{name: "exclude list alone does not opt in", ann: map[string]string{ConfigMapExclude: "app", SecretExclude: "db"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := DefaultKeys().Parse(c.ann, c.autoReloadAll)
			if p.ConfigMaps.Auto != c.wantCM || p.Secrets.Auto != c.wantSecret || p.Search != c.wantSearch {
				t.Errorf("ConfigMaps.Auto=%v Secrets.Auto=%v Search=%v, want %v %v %v",
					p.ConfigMaps.Auto, p.Secrets.Auto, p.Search, c.wantCM, c.wantSecret, c.wantSearch)
			}
			if p.OptedIn() != c.wantOptedIn {
				t.Errorf("OptedIn() = %v, want %v", p.OptedIn(), c.wantOptedIn)
			}
		})
	}
}

func TestParse_InvalidBooleanIsReportedAndIgnored(t *testing.T) {
	for _, key := range []string{Auto, ConfigMapAuto, SecretAuto, Search} {
		for _, v := range []string{"yes", "TRUE ", "", "1", "True", " true", "false\n", "on"} {
			t.Run(key+"="+v, func(t *testing.T) {
				p := DefaultKeys().Parse(map[string]string{key: v}, false)
				if p.ConfigMaps.Auto || p.Secrets.Auto || p.Search || p.OptedIn() {
					t.Errorf("invalid %q on %s was acted on: %+v", v, key, p)
				}
				want := []Problem{{Annotation: key, Value: v, Reason: `is not "true" or "false"; ignored`}}
				if !slices.Equal(p.Problems, want) {
					t.Errorf("Problems = %v, want %v", p.Problems, want)
				}
				if s := p.Problems[0].String(); !strings.Contains(s, key) {
					t.Errorf("Problem.String() = %q does not name the annotation", s)
				}
			})
		}
	}
}

func TestParse_InvalidTypedAutoFallsBackToGeneral(t *testing.T) {
	p := DefaultKeys().Parse(map[string]string{Auto: "true", ConfigMapAuto: "yes"}, false)
	if !p.ConfigMaps.Auto || !p.Secrets.Auto {
		t.Errorf("an invalid typed auto should count as unset: %+v", p)
	}
	if len(p.Problems) != 1 || p.Problems[0].Annotation != ConfigMapAuto {
		t.Errorf("Problems = %v, want one naming %s", p.Problems, ConfigMapAuto)
	}
}

func TestParse_EveryInvalidValueIsReported(t *testing.T) {
	ann := map[string]string{
		Auto:            "yes",
		Search:          "1",
		ConfigMapReload: "good, a(, b[",
		SecretReload:    "x)",
	}
	p := DefaultKeys().Parse(ann, false)
	got := map[string]int{}
	for _, pr := range p.Problems {
		got[pr.Annotation]++
	}
	want := map[string]int{Auto: 1, Search: 1, ConfigMapReload: 2, SecretReload: 1}
	if len(got) != len(want) {
		t.Fatalf("Problems by annotation = %v, want %v", got, want)
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("Problems by annotation = %v, want %v", got, want)
		}
	}
	if !p.ConfigMaps.Reload.Match("good") {
		t.Errorf("the valid entry next to invalid ones was dropped")
	}
}

func TestParse_ExcludeListsAreTrimmedNames(t *testing.T) {
	p := DefaultKeys().Parse(map[string]string{
		ConfigMapExclude: " a , ,b,,",
		SecretExclude:    "s1",
	}, false)
	if len(p.ConfigMaps.Exclude) != 2 || !p.ConfigMaps.Exclude["a"] || !p.ConfigMaps.Exclude["b"] {
		t.Errorf("ConfigMaps.Exclude = %v, want {a, b}", p.ConfigMaps.Exclude)
	}
	if len(p.Secrets.Exclude) != 1 || !p.Secrets.Exclude["s1"] {
		t.Errorf("Secrets.Exclude = %v, want {s1}", p.Secrets.Exclude)
	}
	if len(p.Problems) != 0 {
		t.Errorf("Problems = %v, want none", p.Problems)
	}
}

func TestPolicy_ForPicksTheKind(t *testing.T) {
	p := DefaultKeys().Parse(map[string]string{ConfigMapAuto: "true"}, false)
	if !p.For(refs.ConfigMap).Auto || p.For(refs.Secret).Auto {
		t.Errorf("For returned the wrong kind's policy")
	}
}

func TestTracks_Precedence(t *testing.T) {
	k := DefaultKeys()
	workload := map[string]string{
		Auto:             "true",
		Search:           "true",
		ConfigMapReload:  "listed, both, re-.*",
		ConfigMapExclude: "both, excluded",
		SecretReload:     "sec-listed",
	}
	p := k.Parse(workload, false)
	ignored := map[string]string{Ignore: "true"}
	matched := map[string]string{Match: "true"}

	cases := []struct {
		name       string
		kind       refs.Kind
		obj        string
		objAnn     map[string]string
		referenced bool
		want       bool
		verdict    Verdict
	}{
		{"ignore beats reload list", refs.ConfigMap, "listed", ignored, true, false, VerdictIgnored},
		{"ignore beats exclude list", refs.ConfigMap, "excluded", ignored, true, false, VerdictIgnored},
		{"ignore beats auto", refs.ConfigMap, "plain", ignored, true, false, VerdictIgnored},
		{"ignore must be exactly true", refs.ConfigMap, "plain", map[string]string{Ignore: "True"}, true, true, VerdictAuto},
		{"exclude beats reload list", refs.ConfigMap, "both", nil, true, false, VerdictExcluded},
		{"exclude beats auto", refs.ConfigMap, "excluded", nil, true, false, VerdictExcluded},
		{"exclude beats search match", refs.ConfigMap, "excluded", matched, true, false, VerdictExcluded},
		{"reload list tracks an unreferenced object", refs.ConfigMap, "listed", nil, false, true, VerdictReloadList},
		{"reload list regex", refs.ConfigMap, "re-1", nil, false, true, VerdictReloadList},
		{"reload list beats search", refs.ConfigMap, "listed", matched, true, true, VerdictReloadList},
		{"search match on a referenced object", refs.ConfigMap, "plain", matched, true, true, VerdictSearch},
		{"search match ignores unreferenced objects", refs.ConfigMap, "plain", matched, false, false, VerdictUntracked},
		{"search needs match exactly true", refs.ConfigMap, "plain", map[string]string{Match: "yes"}, true, true, VerdictAuto},
		{"auto tracks referenced", refs.ConfigMap, "plain", nil, true, true, VerdictAuto},
		{"auto ignores unreferenced", refs.ConfigMap, "plain", nil, false, false, VerdictUntracked},
		{"secret lists are separate from configmap lists", refs.Secret, "both", nil, false, false, VerdictUntracked},
		{"secret reload list", refs.Secret, "sec-listed", nil, false, true, VerdictReloadList},
		{"configmap reload list does not apply to secrets", refs.ConfigMap, "sec-listed", nil, false, false, VerdictUntracked},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, v := p.Tracks(c.kind, c.obj, c.objAnn, c.referenced)
			if got != c.want || v != c.verdict {
				t.Errorf("Tracks(%s/%s, %v, referenced=%v) = %v, %s; want %v, %s",
					c.kind, c.obj, c.objAnn, c.referenced, got, v, c.want, c.verdict)
			}
		})
	}
}

func TestTracks_SearchWithoutAutoTracksOnlyMatchedObjects(t *testing.T) {
	p := DefaultKeys().Parse(map[string]string{Search: "true"}, false)
	if ok, v := p.Tracks(refs.Secret, "s", nil, true); ok || v != VerdictUntracked {
		t.Errorf("an unmatched referenced Secret was tracked: %v %s", ok, v)
	}
	if ok, v := p.Tracks(refs.Secret, "s", map[string]string{Match: "true"}, true); !ok || v != VerdictSearch {
		t.Errorf("a matched referenced Secret was not tracked: %v %s", ok, v)
	}
}

func TestTracks_NothingAnnotatedTracksNothing(t *testing.T) {
	p := DefaultKeys().Parse(nil, false)
	for _, kind := range refs.Kinds {
		if ok, v := p.Tracks(kind, "x", map[string]string{Match: "true"}, true); ok || v != VerdictUntracked {
			t.Errorf("%s tracked without any annotation: %s", kind, v)
		}
	}
}

func TestTracks_RenamedKeysWork(t *testing.T) {
	k := Keys{
		Auto: "a.example/auto", ConfigMapAuto: "a.example/cm-auto", SecretAuto: "a.example/secret-auto",
		Search: "a.example/search", Match: "a.example/match",
		ConfigMapReload: "a.example/cm-reload", SecretReload: "a.example/secret-reload",
		Ignore: "a.example/ignore", ConfigMapExclude: "a.example/cm-exclude", SecretExclude: "a.example/secret-exclude",
	}

	// Reloader's default names mean nothing once renamed.
	old := k.Parse(map[string]string{Auto: "true", Search: "true", ConfigMapReload: "x"}, false)
	if old.OptedIn() {
		t.Errorf("default annotation names still opt in after renaming: %+v", old)
	}

	p := k.Parse(map[string]string{
		"a.example/secret-auto":    "true",
		"a.example/search":         "true",
		"a.example/cm-reload":      "listed",
		"a.example/cm-exclude":     "gone",
		"a.example/secret-exclude": "hidden",
	}, false)
	cases := []struct {
		kind       refs.Kind
		name       string
		objAnn     map[string]string
		referenced bool
		want       Verdict
	}{
		{refs.Secret, "s", nil, true, VerdictAuto},
		{refs.Secret, "hidden", nil, true, VerdictExcluded},
		{refs.Secret, "s", map[string]string{"a.example/ignore": "true"}, true, VerdictIgnored},
		{refs.Secret, "s", map[string]string{Ignore: "true"}, true, VerdictAuto},
		{refs.ConfigMap, "listed", nil, false, VerdictReloadList},
		{refs.ConfigMap, "gone", nil, false, VerdictExcluded},
		{refs.ConfigMap, "m", map[string]string{"a.example/match": "true"}, true, VerdictSearch},
		{refs.ConfigMap, "m", map[string]string{Match: "true"}, true, VerdictUntracked},
	}
	for _, c := range cases {
		if _, v := p.Tracks(c.kind, c.name, c.objAnn, c.referenced); v != c.want {
			t.Errorf("Tracks(%s/%s, %v) = %s, want %s", c.kind, c.name, c.objAnn, v, c.want)
		}
	}

	bad := k.Parse(map[string]string{"a.example/auto": "yes"}, false)
	if len(bad.Problems) != 1 || bad.Problems[0].Annotation != "a.example/auto" {
		t.Errorf("Problems = %v, want one naming the renamed key", bad.Problems)
	}
}
