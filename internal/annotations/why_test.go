package annotations

import (
	"testing"

	"github.com/ripple-controller/ripple/internal/refs"
)

func TestWhyNamesTheAnnotationBehindEachVerdict(t *testing.T) {
	k := DefaultKeys()
	tests := []struct {
		name               string
		verdict            Verdict
		kind               refs.Kind
		metadata, template map[string]string
		autoReloadAll      bool
		want               string
	}{
		{"ignored", VerdictIgnored, refs.Secret, nil, nil, false, "the Secret carries reloader.stakater.com/ignore=true"},
		{"excluded", VerdictExcluded, refs.ConfigMap, map[string]string{Auto: "true", ConfigMapExclude: "cfg"}, nil, false,
			"configmaps.exclude.reloader.stakater.com/reload names it"},
		{"reload list on the metadata", VerdictReloadList, refs.Secret, map[string]string{SecretReload: "creds"}, nil, false,
			"secret.reloader.stakater.com/reload names it"},
		{"reload list on the pod template", VerdictReloadList, refs.ConfigMap, nil, map[string]string{ConfigMapReload: "cfg"}, false,
			"configmap.reloader.stakater.com/reload on the pod template names it"},
		{"search", VerdictSearch, refs.ConfigMap, map[string]string{Search: "true"}, nil, false,
			"reloader.stakater.com/search=true, and the ConfigMap carries reloader.stakater.com/match=true"},
		{"auto", VerdictAuto, refs.ConfigMap, map[string]string{Auto: "True"}, nil, false, "reloader.stakater.com/auto=True"},
		{"typed auto", VerdictAuto, refs.Secret, map[string]string{Auto: "false", SecretAuto: "true"}, nil, false,
			"secret.reloader.stakater.com/auto=true"},
		{"auto on the pod template", VerdictAuto, refs.ConfigMap, nil, map[string]string{Auto: "true"}, false,
			"reloader.stakater.com/auto=true on the pod template"},
		{"--auto-reload-all", VerdictAuto, refs.ConfigMap, nil, nil, true, "--auto-reload-all"},
		{"untracked", VerdictUntracked, refs.ConfigMap, nil, nil, false, "no annotation opts the workload in to ConfigMap changes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := k.Why(tt.verdict, tt.kind, tt.metadata, tt.template, tt.autoReloadAll); got != tt.want {
				t.Errorf("Why = %q, want %q", got, tt.want)
			}
		})
	}
}
