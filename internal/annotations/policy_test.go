package annotations

import (
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ripple-controller/ripple/internal/refs"
)

// metadataOnly parses annotations on a workload's metadata, with an empty
// pod template.
func metadataOnly(ann map[string]string, autoReloadAll bool) Policy {
	return DefaultKeys().Parse(ann, nil, autoReloadAll)
}

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
		{name: "auto True is true", ann: map[string]string{Auto: "True"}, wantCM: true, wantSecret: true, wantOptedIn: true},
		{name: "auto TRUE is true", ann: map[string]string{Auto: "TRUE"}, wantCM: true, wantSecret: true, wantOptedIn: true},
		{name: "auto 1 is true", ann: map[string]string{Auto: "1"}, wantCM: true, wantSecret: true, wantOptedIn: true},
		{name: "auto t is true", ann: map[string]string{Auto: "t"}, wantCM: true, wantSecret: true, wantOptedIn: true},
		{name: "auto false tracks nothing", ann: map[string]string{Auto: "false"}},
		{name: "auto 0 tracks nothing", ann: map[string]string{Auto: "0"}},
		{name: "auto F tracks nothing", ann: map[string]string{Auto: "F"}},
		{name: "configmap auto only", ann: map[string]string{ConfigMapAuto: "true"}, wantCM: true, wantOptedIn: true},
		{name: "secret auto 1 only", ann: map[string]string{SecretAuto: "1"}, wantSecret: true, wantOptedIn: true},
		{name: "auto true with a typed false still tracks both: either one true is enough", ann: map[string]string{Auto: "true", SecretAuto: "false"}, wantCM: true, wantSecret: true, wantOptedIn: true},
		{name: "typed true next to auto false tracks its kind", ann: map[string]string{Auto: "false", ConfigMapAuto: "True"}, wantCM: true, wantOptedIn: true},
		{name: "auto-reload-all makes unannotated workloads auto", autoReloadAll: true, wantCM: true, wantSecret: true, wantOptedIn: true},
		{name: "auto-reload-all with auto false opts out", ann: map[string]string{Auto: "false"}, autoReloadAll: true},
		{name: "auto-reload-all with auto 0 opts out", ann: map[string]string{Auto: "0"}, autoReloadAll: true},
		{name: "auto-reload-all with an unparsable auto opts out, as any non-empty value that is not true", ann: map[string]string{Auto: "no way"}, autoReloadAll: true},
		{name: "auto-reload-all with an empty auto stays auto", ann: map[string]string{Auto: ""}, autoReloadAll: true, wantCM: true, wantSecret: true, wantOptedIn: true},
		{name: "auto-reload-all with configmap auto false keeps secrets", ann: map[string]string{ConfigMapAuto: "false"}, autoReloadAll: true, wantSecret: true, wantOptedIn: true},
		{name: "auto-reload-all with auto false but secret auto true", ann: map[string]string{Auto: "false", SecretAuto: "true"}, autoReloadAll: true, wantSecret: true, wantOptedIn: true},
		{name: "auto-reload-all with auto true and a typed false tracks both", ann: map[string]string{Auto: "true", ConfigMapAuto: "false"}, autoReloadAll: true, wantCM: true, wantSecret: true, wantOptedIn: true},
		{name: "search true", ann: map[string]string{Search: "true"}, wantSearch: true, wantOptedIn: true},
		{name: "search false", ann: map[string]string{Search: "false"}},
		{name: "search True is not true: Reloader reads exactly \"true\"", ann: map[string]string{Search: "True"}},
		{name: "search 1 is not true", ann: map[string]string{Search: "1"}},
		{name: "reload list alone opts in", ann: map[string]string{ConfigMapReload: "app"}, wantOptedIn: true},
		{name: "exclude list alone does not opt in", ann: map[string]string{ConfigMapExclude: "app", SecretExclude: "db"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := metadataOnly(c.ann, c.autoReloadAll)
			if p.ConfigMaps.Auto != c.wantCM || p.Secrets.Auto != c.wantSecret {
				t.Errorf("ConfigMaps.Auto=%v Secrets.Auto=%v, want %v %v", p.ConfigMaps.Auto, p.Secrets.Auto, c.wantCM, c.wantSecret)
			}
			if p.ConfigMaps.Search != c.wantSearch || p.Secrets.Search != c.wantSearch {
				t.Errorf("Search = %v/%v, want %v", p.ConfigMaps.Search, p.Secrets.Search, c.wantSearch)
			}
			if p.OptedIn() != c.wantOptedIn {
				t.Errorf("OptedIn() = %v, want %v", p.OptedIn(), c.wantOptedIn)
			}
		})
	}
}

func TestParse_BooleanProblems(t *testing.T) {
	cases := []struct {
		keys   []string
		value  string
		reason string // empty: no Problem
	}{
		{[]string{Auto, ConfigMapAuto, SecretAuto}, "true", ""},
		{[]string{Auto, ConfigMapAuto, SecretAuto}, "False", ""},
		{[]string{Auto, ConfigMapAuto, SecretAuto}, "1", ""},
		{[]string{Auto, ConfigMapAuto, SecretAuto}, "f", ""},
		{[]string{Auto, ConfigMapAuto, SecretAuto}, "yes", "is not a boolean; read as false"},
		{[]string{Auto, ConfigMapAuto, SecretAuto}, "on", "is not a boolean; read as false"},
		{[]string{Auto, ConfigMapAuto, SecretAuto}, "TRUE ", "is not a boolean; read as false"},
		{[]string{Auto, ConfigMapAuto, SecretAuto}, " true", "is not a boolean; read as false"},
		{[]string{Auto, ConfigMapAuto, SecretAuto}, "2", "is not a boolean; read as false"},
		{[]string{Auto, ConfigMapAuto, SecretAuto}, "", emptyOnMetadata},
		{[]string{Search}, "true", ""},
		{[]string{Search}, "false", ""},
		{[]string{Search}, "True", `is not "true" or "false"; only "true" counts, so it is ignored`},
		{[]string{Search}, "1", `is not "true" or "false"; only "true" counts, so it is ignored`},
		{[]string{Search}, "", `is not "true" or "false"; only "true" counts, so it is ignored`},
	}
	for _, c := range cases {
		for _, key := range c.keys {
			t.Run(key+"="+c.value, func(t *testing.T) {
				p := metadataOnly(map[string]string{key: c.value}, false)
				var want []Problem
				if c.reason != "" {
					want = []Problem{{Annotation: key, Value: c.value, Reason: c.reason}}
				}
				if !slices.Equal(p.Problems, want) {
					t.Errorf("Problems = %v, want %v", p.Problems, want)
				}
			})
		}
	}
}

// TestParse_AnEmptyAutoOnMetadataSaysItHidesThePodTemplate: a chart that
// renders `auto: ""` on the metadata keeps the template's "true" from
// being read, as in Reloader, and the report must say so.
func TestParse_AnEmptyAutoOnMetadataSaysItHidesThePodTemplate(t *testing.T) {
	tests := []struct {
		name               string
		metadata, template map[string]string
		optedIn            bool
		reason             string
	}{
		{"empty on the metadata, true on the template", map[string]string{Auto: ""}, map[string]string{Auto: "true"}, false, emptyOnMetadata},
		{"empty on the template alone", nil, map[string]string{Auto: ""}, false, emptyOnTemplate},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := DefaultKeys().Parse(tt.metadata, tt.template, false)
			if p.OptedIn() != tt.optedIn {
				t.Errorf("OptedIn = %v, want %v", p.OptedIn(), tt.optedIn)
			}
			if len(p.Problems) == 0 || p.Problems[0].Reason != tt.reason {
				t.Errorf("Problems = %v, want one saying %q", p.Problems, tt.reason)
			}
		})
	}
}

func TestParse_UnparsableBooleanIsNotActedOn(t *testing.T) {
	for _, key := range []string{Auto, ConfigMapAuto, SecretAuto, Search} {
		for _, v := range []string{"yes", "TRUE ", "", "on"} {
			p := metadataOnly(map[string]string{key: v}, false)
			if p.OptedIn() {
				t.Errorf("invalid %s=%q was acted on: %+v", key, v, p)
			}
			if len(p.Problems) != 1 || !strings.Contains(p.Problems[0].String(), key) {
				t.Errorf("%s=%q: Problems = %v, want one naming the annotation", key, v, p.Problems)
			}
		}
	}
}

func TestParse_UnparsableTypedAutoLeavesAutoTrue(t *testing.T) {
	p := metadataOnly(map[string]string{Auto: "true", ConfigMapAuto: "yes"}, false)
	if !p.ConfigMaps.Auto || !p.Secrets.Auto {
		t.Errorf("auto true should track both kinds: %+v", p)
	}
	if len(p.Problems) != 1 || p.Problems[0].Annotation != ConfigMapAuto {
		t.Errorf("Problems = %v, want one naming %s", p.Problems, ConfigMapAuto)
	}
}

func TestParse_HugeBooleanValueIsQuotedShort(t *testing.T) {
	v := strings.Repeat("é", 10000)
	p := metadataOnly(map[string]string{Auto: v}, false)
	if len(p.Problems) != 1 {
		t.Fatalf("Problems = %v", p.Problems)
	}
	if got := p.Problems[0].Value; len(got) > maxQuoted || !strings.HasSuffix(got, "...") || !utf8.ValidString(got) {
		t.Errorf("quoted value of %d bytes, valid UTF-8 %v; want at most %d, cut at a rune", len(got), utf8.ValidString(got), maxQuoted)
	}
}

// TestParse_EachKindFallsBackOnItsOwn follows Reloader: a kind is read from
// the pod template when the metadata has none of that kind's reload list,
// auto, typed auto and search; the exclude lists only from the metadata.
func TestParse_EachKindFallsBackOnItsOwn(t *testing.T) {
	cases := []struct {
		name               string
		metadata, template map[string]string
		check              func(t *testing.T, p Policy)
	}{
		{"metadata has a ConfigMap reload list, the template secret auto: Secrets are auto",
			map[string]string{ConfigMapReload: "listed"}, map[string]string{SecretAuto: "true", ConfigMapAuto: "true"},
			func(t *testing.T, p Policy) {
				if p.ConfigMaps.Auto || !p.ConfigMaps.Reload.Match("listed") || !p.Secrets.Auto {
					t.Errorf("ConfigMaps %+v, Secrets %+v", p.ConfigMaps, p.Secrets)
				}
			}},
		{"metadata has secret auto, the template auto: ConfigMaps read auto from the template",
			map[string]string{SecretAuto: "false"}, map[string]string{Auto: "true"},
			func(t *testing.T, p Policy) {
				if !p.ConfigMaps.Auto || p.Secrets.Auto {
					t.Errorf("ConfigMaps.Auto %v, Secrets.Auto %v; want true, false", p.ConfigMaps.Auto, p.Secrets.Auto)
				}
			}},
		{"metadata has auto false: the template is not read for either kind",
			map[string]string{Auto: "false"}, map[string]string{Auto: "true", SecretReload: "creds"},
			func(t *testing.T, p Policy) {
				if p.OptedIn() {
					t.Errorf("the template was read: %+v", p)
				}
			}},
		{"metadata has search: the template is not read for either kind",
			map[string]string{Search: "true"}, map[string]string{ConfigMapAuto: "true"},
			func(t *testing.T, p Policy) {
				if p.ConfigMaps.Auto || !p.ConfigMaps.Search || !p.Secrets.Search {
					t.Errorf("ConfigMaps %+v, Secrets %+v", p.ConfigMaps, p.Secrets)
				}
			}},
		{"the template's search applies to the kind that falls back only",
			map[string]string{SecretReload: "creds"}, map[string]string{Search: "true"},
			func(t *testing.T, p Policy) {
				if !p.ConfigMaps.Search || p.Secrets.Search {
					t.Errorf("Search %v/%v, want true for ConfigMaps only", p.ConfigMaps.Search, p.Secrets.Search)
				}
			}},
		{"an exclude list on the metadata does not stop the fallback, and still excludes",
			map[string]string{ConfigMapExclude: "noisy"}, map[string]string{Auto: "true"},
			func(t *testing.T, p Policy) {
				if !p.ConfigMaps.Auto || !p.Secrets.Auto || !p.ConfigMaps.Exclude.Has("noisy") {
					t.Errorf("ConfigMaps %+v, Secrets %+v", p.ConfigMaps, p.Secrets)
				}
			}},
		{"an exclude list on the template is not read",
			nil, map[string]string{Auto: "true", ConfigMapExclude: "noisy", SecretExclude: "rotating"},
			func(t *testing.T, p Policy) {
				if len(p.ConfigMaps.Exclude) != 0 || len(p.Secrets.Exclude) != 0 {
					t.Errorf("Exclude %v/%v, want none", p.ConfigMaps.Exclude, p.Secrets.Exclude)
				}
			}},
		{"a reload list on the template applies when the metadata has none of the kind's keys",
			map[string]string{ConfigMapAuto: "true"}, map[string]string{SecretReload: "creds", ConfigMapReload: "cfg"},
			func(t *testing.T, p Policy) {
				if !p.Secrets.Reload.Match("creds") || p.ConfigMaps.Reload.Match("cfg") {
					t.Errorf("ConfigMaps %+v, Secrets %+v", p.ConfigMaps, p.Secrets)
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.check(t, DefaultKeys().Parse(c.metadata, c.template, false))
		})
	}
}

func TestParse_AutoReloadAllIsReadFromTheKindsSource(t *testing.T) {
	// ConfigMaps stay on the metadata, which does not say auto: under
	// --auto-reload-all they are auto. Secrets fall back to the template,
	// which says "false".
	p := DefaultKeys().Parse(map[string]string{ConfigMapReload: "listed"}, map[string]string{Auto: "false"}, true)
	if !p.ConfigMaps.Auto || p.Secrets.Auto {
		t.Errorf("ConfigMaps.Auto %v, Secrets.Auto %v; want true, false", p.ConfigMaps.Auto, p.Secrets.Auto)
	}
}

func TestParse_AProblemReadByBothKindsIsReportedOnce(t *testing.T) {
	p := DefaultKeys().Parse(nil, map[string]string{Auto: "yes", Search: "1"}, false)
	if len(p.Problems) != 2 {
		t.Errorf("Problems = %v, want one for auto and one for search", p.Problems)
	}
}

func TestParse_EveryInvalidValueIsReported(t *testing.T) {
	ann := map[string]string{
		Auto:            "yes",
		Search:          "1",
		ConfigMapReload: "good, a(, b[",
		SecretReload:    "x)",
	}
	p := metadataOnly(ann, false)
	got := map[string]int{}
	for _, pr := range p.Problems {
		got[pr.Annotation]++
	}
	// A reload list gets one Problem at most, however many entries it skips.
	want := map[string]int{Auto: 1, Search: 1, ConfigMapReload: 1, SecretReload: 1}
	if !maps.Equal(got, want) {
		t.Errorf("Problems by annotation = %v, want %v", got, want)
	}
	if !p.ConfigMaps.Reload.Match("good") {
		t.Errorf("the valid entry next to invalid ones was dropped")
	}
}

func TestParse_ExcludeListsAreTrimmedNames(t *testing.T) {
	p := metadataOnly(map[string]string{
		ConfigMapExclude: " a , ,b,,",
		SecretExclude:    "s1",
	}, false)
	for _, c := range []struct {
		set  NameSet
		name string
		want bool
	}{
		{p.ConfigMaps.Exclude, "a", true}, {p.ConfigMaps.Exclude, "b", true}, {p.ConfigMaps.Exclude, "", false},
		{p.ConfigMaps.Exclude, " a ", false}, {p.ConfigMaps.Exclude, "s1", false},
		{p.Secrets.Exclude, "s1", true}, {p.Secrets.Exclude, "a", false},
	} {
		if got := c.set.Has(c.name); got != c.want {
			t.Errorf("%v.Has(%q) = %v, want %v", c.set, c.name, got, c.want)
		}
	}
	if len(p.Problems) != 0 {
		t.Errorf("Problems = %v, want none", p.Problems)
	}
}

func TestPolicy_ForPicksTheKind(t *testing.T) {
	p := metadataOnly(map[string]string{ConfigMapAuto: "true"}, false)
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
	p := k.Parse(workload, nil, false)
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
		{"ignore must be exactly true, as in Reloader", refs.ConfigMap, "plain", map[string]string{Ignore: "True"}, true, true, VerdictAuto},
		{"ignore 1 is not true", refs.ConfigMap, "plain", map[string]string{Ignore: "1"}, true, true, VerdictAuto},
		{"exclude beats reload list", refs.ConfigMap, "both", nil, true, false, VerdictExcluded},
		{"exclude beats auto", refs.ConfigMap, "excluded", nil, true, false, VerdictExcluded},
		{"exclude beats search match", refs.ConfigMap, "excluded", matched, true, false, VerdictExcluded},
		{"reload list tracks an unreferenced object", refs.ConfigMap, "listed", nil, false, true, VerdictReloadList},
		{"reload list regex", refs.ConfigMap, "re-1", nil, false, true, VerdictReloadList},
		{"reload list beats search", refs.ConfigMap, "listed", matched, true, true, VerdictReloadList},
		{"search match on a referenced object", refs.ConfigMap, "plain", matched, true, true, VerdictSearch},
		{"search match ignores unreferenced objects", refs.ConfigMap, "plain", matched, false, false, VerdictUntracked},
		{"search needs match exactly true", refs.ConfigMap, "plain", map[string]string{Match: "yes"}, true, true, VerdictAuto},
		{"match True is not true, as in Reloader", refs.ConfigMap, "plain", map[string]string{Match: "True"}, true, true, VerdictAuto},
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
	p := metadataOnly(map[string]string{Search: "true"}, false)
	if ok, v := p.Tracks(refs.Secret, "s", nil, true); ok || v != VerdictUntracked {
		t.Errorf("an unmatched referenced Secret was tracked: %v %s", ok, v)
	}
	if ok, v := p.Tracks(refs.Secret, "s", map[string]string{Match: "true"}, true); !ok || v != VerdictSearch {
		t.Errorf("a matched referenced Secret was not tracked: %v %s", ok, v)
	}
}

func TestTracks_NothingAnnotatedTracksNothing(t *testing.T) {
	p := metadataOnly(nil, false)
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
	old := k.Parse(map[string]string{Auto: "true", Search: "true", ConfigMapReload: "x"}, nil, false)
	if old.OptedIn() {
		t.Errorf("default annotation names still opt in after renaming: %+v", old)
	}

	p := k.Parse(map[string]string{
		"a.example/secret-auto":    "true",
		"a.example/search":         "true",
		"a.example/cm-reload":      "listed",
		"a.example/cm-exclude":     "gone",
		"a.example/secret-exclude": "hidden",
	}, nil, false)
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

	bad := k.Parse(map[string]string{"a.example/auto": "yes"}, nil, false)
	if len(bad.Problems) != 1 || bad.Problems[0].Annotation != "a.example/auto" {
		t.Errorf("Problems = %v, want one naming the renamed key", bad.Problems)
	}
}

func TestChoice_TakesAKnownValueElseTheDefaultAndReportsTheRest(t *testing.T) {
	const key = "example.com/strategy"
	values := []string{"job", "template"}
	cases := []struct {
		name     string
		metadata map[string]string
		want     string
		problem  bool
	}{
		{"absent", nil, "job", false},
		{"known", map[string]string{key: "template"}, "template", false},
		{"case matters", map[string]string{key: "Template"}, "job", true},
		{"empty", map[string]string{key: ""}, "job", true},
		{"huge", map[string]string{key: strings.Repeat("x", 100000)}, "job", true},
	}
	for _, c := range cases {
		got, problem := Choice(c.metadata, key, values, "job")
		if got != c.want || (problem != nil) != c.problem {
			t.Errorf("%s: Choice = %q, %v; want %q, problem %v", c.name, got, problem, c.want, c.problem)
		}
		if problem != nil && (problem.Annotation != key || len(problem.String()) > 1024) {
			t.Errorf("%s: problem %q", c.name, problem.String())
		}
	}
}

func TestParse_SecretProviderClassesAreTrackedOnlyWithCSIIntegration(t *testing.T) {
	cases := []struct {
		name        string
		csi         bool
		ann         map[string]string
		autoAll     bool
		wantAuto    bool
		wantReload  string
		wantExclude string
		wantOptedIn bool
	}{
		{name: "typed auto with CSI", csi: true, ann: map[string]string{SecretProviderClassAuto: "true"}, wantAuto: true, wantOptedIn: true},
		{name: "typed auto without CSI opts in to nothing", ann: map[string]string{SecretProviderClassAuto: "true"}},
		{name: "auto covers SecretProviderClasses with CSI, as in Reloader", csi: true, ann: map[string]string{Auto: "true"}, wantAuto: true, wantOptedIn: true},
		{name: "auto-reload-all does not reach them without CSI", autoAll: true},
		{name: "reload list with CSI", csi: true, ann: map[string]string{SecretProviderClassReload: "vault"}, wantReload: "vault", wantOptedIn: true},
		{name: "reload list without CSI opts in to nothing", ann: map[string]string{SecretProviderClassReload: "vault"}},
		{name: "exclude list with CSI", csi: true, ann: map[string]string{SecretProviderClassAuto: "true", SecretProviderClassExclude: "vault"}, wantAuto: true, wantExclude: "vault", wantOptedIn: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			keys := DefaultKeys()
			if c.csi {
				keys = keys.WithCSI()
			}
			p := keys.Parse(c.ann, nil, c.autoAll)
			kp := p.For(refs.SecretProviderClass)
			if kp.Auto != c.wantAuto {
				t.Errorf("Auto = %v, want %v", kp.Auto, c.wantAuto)
			}
			if got := strings.Join(kp.Reload.Literals(), ","); got != c.wantReload {
				t.Errorf("Reload = %q, want %q", got, c.wantReload)
			}
			if got := kp.Exclude.Has("vault"); got != (c.wantExclude == "vault") {
				t.Errorf("Exclude.Has(vault) = %v, want %v", got, c.wantExclude == "vault")
			}
			if !c.autoAll && p.OptedIn() != c.wantOptedIn {
				t.Errorf("OptedIn = %v, want %v", p.OptedIn(), c.wantOptedIn)
			}
		})
	}
}

// An exclude list is as long as the API server lets annotations be (256
// KiB): it keeps its first 256 names, as a reload list does, whose memory
// and lookups stay small, and says that the others exclude nothing.
func TestParse_AHugeExcludeListKeepsItsFirstNamesAndSaysSo(t *testing.T) {
	var b strings.Builder
	n := 0
	for ; b.Len() < 200<<10; n++ {
		b.WriteString(strconv.FormatInt(int64(n), 36) + ",")
	}
	ann := map[string]string{Auto: "true", ConfigMapExclude: b.String()}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	p := metadataOnly(ann, false)
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 64<<10 {
		t.Errorf("parsing a %d-name exclude list allocated %d bytes, want at most 64 KiB", n, got)
	}
	for _, c := range []struct {
		i        int
		excluded bool
	}{{0, true}, {maxEntries - 1, true}, {maxEntries, false}, {n - 1, false}} {
		if got := p.ConfigMaps.Exclude.Has(strconv.FormatInt(int64(c.i), 36)); got != c.excluded {
			t.Errorf("name %d excluded = %v, want %v", c.i, got, c.excluded)
		}
	}
	want := fmt.Sprintf("has %d names beyond the first %d", n-maxEntries, maxEntries)
	if len(p.Problems) != 1 || !strings.Contains(p.Problems[0].String(), want) || len(p.Problems[0].String()) > 512 {
		t.Errorf("Problems = %v, want one short one saying %q", p.Problems, want)
	}
}
