package migrate

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

func TestValuesPrintsRipplesValuesAndEveryDroppedSetting(t *testing.T) {
	for _, name := range []string{"reloader-default", "ha-namespaces", "alerts-annotations", "argo-openshift"} {
		t.Run(name, func(t *testing.T) {
			in, err := os.ReadFile(filepath.Join("testdata", name+".yaml"))
			if err != nil {
				t.Fatal(err)
			}
			res, err := Values(in)
			if err != nil {
				t.Fatalf("Values: %v", err)
			}
			got, err := res.Render()
			if err != nil {
				t.Fatalf("Render: %v", err)
			}
			golden := filepath.Join("testdata", name+".golden")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("migrate-values of %s:\n%s\nwant:\n%s", name, got, want)
			}
		})
	}
}

func TestValuesMapsEachSetting(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
	}{
		{"HA", "reloader: {enableHA: true}", []string{"highAvailability:\n  enabled: true"}},
		{"ignored ConfigMaps", "reloader: {ignoreConfigMaps: true}", []string{"resourcesToIgnore: configMaps"}},
		{"a fatal log level", "reloader: {logLevel: fatal}", []string{"logLevel: error", "# note: logLevel: error"}},
		{"an unknown strategy", "reloader: {reloadStrategy: restart}", []string{"# not carried over: reloader.reloadStrategy: restart is not a strategy"}},
		{"only its own namespace", "reloader: {watchGlobally: false}", []string{"# not carried over: reloader.watchGlobally: false without namespaces"}},
		{"an unknown key", "reloader: {shiny: {new: 1}}", []string{"# not carried over: reloader.shiny.new: ripple's chart has no such setting"}},
		{"a default left alone", "reloader: {rbac: {enabled: true}, deployment: {replicas: 1}}", []string{"logFormat: text\nreloadStrategy: env-vars\n"}},
		{"an empty file", "", []string{"reloadStrategy: env-vars"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Values([]byte(tt.in))
			if err != nil {
				t.Fatalf("Values: %v", err)
			}
			out, err := res.Render()
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

func TestValuesRefusesBadInputWithAClearError(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"not YAML", "reloader: [unclosed", "reading the values"},
		{"not a map", "- a\n- b\n", "reading the values"},
		{"too big", "x: " + strings.Repeat("a", MaxInput), "more than the"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Values([]byte(tt.in))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Values = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}
