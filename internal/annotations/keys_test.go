package annotations

import (
	"testing"
)

func TestDefaultKeys_AreReloadersNames(t *testing.T) {
	k := DefaultKeys()
	want := map[string]string{
		k.Auto:             "reloader.stakater.com/auto",
		k.ConfigMapAuto:    "configmap.reloader.stakater.com/auto",
		k.SecretAuto:       "secret.reloader.stakater.com/auto",
		k.Search:           "reloader.stakater.com/search",
		k.Match:            "reloader.stakater.com/match",
		k.ConfigMapReload:  "configmap.reloader.stakater.com/reload",
		k.SecretReload:     "secret.reloader.stakater.com/reload",
		k.Ignore:           "reloader.stakater.com/ignore",
		k.ConfigMapExclude: "configmaps.exclude.reloader.stakater.com/reload",
		k.SecretExclude:    "secrets.exclude.reloader.stakater.com/reload",
	}
	if len(want) != 10 {
		t.Fatalf("two keys share a name: %v", want)
	}
	for got, w := range want {
		if got != w {
			t.Errorf("key = %q, want %q", got, w)
		}
	}
}

func TestSource_MetadataWinsWhenItHoldsAnyWorkloadKey(t *testing.T) {
	k := DefaultKeys()
	template := map[string]string{k.Auto: "true"}
	for _, key := range []string{
		k.Auto, k.ConfigMapAuto, k.SecretAuto, k.Search,
		k.ConfigMapReload, k.SecretReload, k.ConfigMapExclude, k.SecretExclude,
	} {
		t.Run(key, func(t *testing.T) {
			metadata := map[string]string{key: "", "unrelated": "x"}
			got := k.Source(metadata, template)
			if _, ok := got[key]; !ok || got["unrelated"] != "x" {
				t.Errorf("Source picked %v, want the metadata %v", got, metadata)
			}
		})
	}
}

func TestSource_FallsBackToPodTemplate(t *testing.T) {
	k := DefaultKeys()
	template := map[string]string{k.Auto: "true"}
	cases := []struct {
		name     string
		metadata map[string]string
	}{
		{"nil metadata", nil},
		{"empty metadata", map[string]string{}},
		{"only unrelated annotations", map[string]string{"deployment.kubernetes.io/revision": "3"}},
		// Ignore and Match belong on ConfigMaps/Secrets, not on workloads.
		{"ignore is not a workload key", map[string]string{k.Ignore: "true"}},
		{"match is not a workload key", map[string]string{k.Match: "true"}},
		{"near miss of a key", map[string]string{k.Auto + "x": "true"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := k.Source(c.metadata, template)
			if got[k.Auto] != "true" || len(got) != 1 {
				t.Errorf("Source = %v, want the pod template %v", got, template)
			}
		})
	}
}

func TestSource_RenamedKeysDecide(t *testing.T) {
	k := DefaultKeys()
	k.Auto = "example.com/auto"
	template := map[string]string{"example.com/auto": "false"}

	// The default name no longer counts as a workload key...
	got := k.Source(map[string]string{Auto: "true"}, template)
	if got["example.com/auto"] != "false" {
		t.Errorf("default key on metadata still won after renaming: %v", got)
	}
	// ...the renamed one does.
	got = k.Source(map[string]string{"example.com/auto": "true"}, template)
	if got["example.com/auto"] != "true" {
		t.Errorf("renamed key on metadata did not win: %v", got)
	}
}
