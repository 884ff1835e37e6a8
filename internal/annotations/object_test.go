package annotations

import (
	"strings"
	"testing"

	"github.com/ripple-controller/ripple/internal/refs"
)

func TestObjectProblems_ReportsInvalidIgnoreAndMatchWhereTheyMatter(t *testing.T) {
	k := DefaultKeys()
	auto := k.Parse(map[string]string{k.Auto: "true"}, nil, false)
	search := k.Parse(map[string]string{k.Search: "true"}, nil, false)
	excluding := k.Parse(map[string]string{k.Auto: "true", k.Search: "true", k.ConfigMapExclude: "cfg"}, nil, false)
	listing := k.Parse(map[string]string{k.ConfigMapReload: "cfg"}, nil, false)
	cases := []struct {
		name       string
		pol        Policy
		obj        map[string]string
		referenced bool
		want       []string
	}{
		{"ignore yes on a tracked object", auto, map[string]string{k.Ignore: "yes"}, true, []string{k.Ignore}},
		{"ignore TRUE on a listed object", listing, map[string]string{k.Ignore: "TRUE"}, false, []string{k.Ignore}},
		{"ignore true is valid", auto, map[string]string{k.Ignore: "true"}, true, nil},
		{"ignore false is valid", auto, map[string]string{k.Ignore: "false"}, true, nil},
		{"ignore yes on an object not tracked anyway", auto, map[string]string{k.Ignore: "yes"}, false, nil},
		{"match yes under search", search, map[string]string{k.Match: "yes"}, true, []string{k.Match}},
		{"match yes without search", auto, map[string]string{k.Match: "yes"}, true, nil},
		{"match yes on an unreferenced object", search, map[string]string{k.Match: "yes"}, false, nil},
		{"match yes on an ignored object", search, map[string]string{k.Match: "yes", k.Ignore: "true"}, true, nil},
		{"both on an excluded object", excluding, map[string]string{k.Match: "1", k.Ignore: "1"}, true, nil},
		{"no annotations", auto, nil, true, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := c.pol.ObjectProblems(refs.ConfigMap, "cfg", c.obj, c.referenced)
			if len(got) != len(c.want) {
				t.Fatalf("problems = %v, want %v", got, c.want)
			}
			for i, p := range got {
				if p.Annotation != c.want[i] || p.Value != c.obj[p.Annotation] {
					t.Errorf("problem %v, want one for %s", p, c.want[i])
				}
				if s := p.String(); !strings.Contains(s, "ConfigMap/cfg") {
					t.Errorf("Problem.String() = %q does not name the object", s)
				}
			}
		})
	}
}
