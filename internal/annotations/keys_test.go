package annotations

import (
	"testing"

	"github.com/ripple-controller/ripple/internal/refs"
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

func TestFallsBack_DecidedPerKindByThatKindsKeys(t *testing.T) {
	k := DefaultKeys()
	cases := []struct {
		name                string
		metadata            map[string]string
		configMaps, secrets bool
	}{
		{"nil metadata", nil, true, true},
		{"only unrelated annotations", map[string]string{"deployment.kubernetes.io/revision": "3"}, true, true},
		{"auto holds both kinds", map[string]string{k.Auto: "true"}, false, false},
		{"an empty auto still holds both kinds", map[string]string{k.Auto: ""}, false, false},
		{"search holds both kinds", map[string]string{k.Search: "false"}, false, false},
		{"configmap reload list holds ConfigMaps only", map[string]string{k.ConfigMapReload: "cfg"}, false, true},
		{"configmap auto holds ConfigMaps only", map[string]string{k.ConfigMapAuto: "true"}, false, true},
		{"secret reload list holds Secrets only", map[string]string{k.SecretReload: "creds"}, true, false},
		{"secret auto holds Secrets only", map[string]string{k.SecretAuto: "false"}, true, false},
		{"exclude lists hold nothing", map[string]string{k.ConfigMapExclude: "a", k.SecretExclude: "b"}, true, true},
		// Ignore and Match belong on ConfigMaps/Secrets, not on workloads.
		{"ignore holds nothing", map[string]string{k.Ignore: "true"}, true, true},
		{"match holds nothing", map[string]string{k.Match: "true"}, true, true},
		{"a near miss of a key holds nothing", map[string]string{k.Auto + "x": "true"}, true, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := k.fallsBack(k.forKind(refs.ConfigMap), c.metadata); got != c.configMaps {
				t.Errorf("ConfigMaps fall back = %v, want %v", got, c.configMaps)
			}
			if got := k.fallsBack(k.forKind(refs.Secret), c.metadata); got != c.secrets {
				t.Errorf("Secrets fall back = %v, want %v", got, c.secrets)
			}
		})
	}
}

func TestFallsBack_RenamedKeysDecide(t *testing.T) {
	k := DefaultKeys()
	k.Auto = "example.com/auto"
	cm := k.forKind(refs.ConfigMap)
	if !k.fallsBack(cm, map[string]string{Auto: "true"}) {
		t.Errorf("the default name still holds the metadata after renaming")
	}
	if k.fallsBack(cm, map[string]string{"example.com/auto": "true"}) {
		t.Errorf("the renamed key does not hold the metadata")
	}
}
