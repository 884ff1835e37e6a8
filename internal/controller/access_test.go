package controller

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ripple-controller/ripple/internal/options"
	"github.com/ripple-controller/ripple/internal/workload"
)

// servingMapper serves every kind ripple may cache, and the CSI status
// only when csi is true.
func servingMapper(csi bool) meta.RESTMapper {
	m := meta.NewDefaultRESTMapper(nil)
	for _, t := range workload.All {
		m.Add(t.GroupVersion.WithKind(t.Kind), meta.RESTScopeNamespace)
	}
	for _, k := range []string{"ConfigMap", "Secret"} {
		m.Add(schema.GroupVersionKind{Version: "v1", Kind: k}, meta.RESTScopeNamespace)
	}
	m.Add(schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}, meta.RESTScopeRoot)
	if csi {
		m.Add(statusGVK, meta.RESTScopeNamespace)
	}
	return m
}

func typesOf(t *testing.T, plurals ...string) []workload.Type {
	t.Helper()
	var out []workload.Type
	for _, p := range plurals {
		typ, ok := workload.ByPlural(p)
		if !ok {
			t.Fatalf("no workload type %q", p)
		}
		out = append(out, typ)
	}
	return out
}

func TestCachedResources_AreWhatRipplesInformersListAndWatch(t *testing.T) {
	config := []string{"configmaps", "secrets"}
	tests := []struct {
		name  string
		opts  options.Options
		types []workload.Type
		csi   bool
		want  []string
	}{
		{"the workload kinds it rolls, ConfigMaps and Secrets", options.Options{}, typesOf(t, "deployments", "jobs"), false,
			append([]string{"deployments.apps", "jobs.batch"}, config...)},
		{"an ignored kind of config is not read", options.Options{IgnoreSecrets: true}, typesOf(t, "deployments"), false,
			[]string{"deployments.apps", "configmaps"}},
		{"namespaces under --namespace-selector", options.Options{NamespaceSelector: labels.Everything()}, typesOf(t, "daemonsets"), false,
			append([]string{"daemonsets.apps"}, append(config, "namespaces")...)},
		{"a Rollout's pod template source, its kind ignored", options.Options{}, typesOf(t, "rollouts"), false,
			append([]string{"rollouts.argoproj.io", "deployments.apps"}, config...)},
		{"a source it also rolls is asked for once", options.Options{}, typesOf(t, "deployments", "rollouts"), false,
			append([]string{"deployments.apps", "rollouts.argoproj.io"}, config...)},
		{"CSI statuses with the integration, where served", options.Options{EnableCSIIntegration: true}, typesOf(t, "statefulsets"), true,
			append([]string{"statefulsets.apps"}, append(config, "secretproviderclasspodstatuses.secrets-store.csi.x-k8s.io")...)},
		{"no CSI statuses where the cluster serves none", options.Options{EnableCSIIntegration: true}, typesOf(t, "statefulsets"), false,
			append([]string{"statefulsets.apps"}, config...)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := cachedResources(servingMapper(tt.csi), &tt.opts, tt.types)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, gr := range got {
				names = append(names, gr.String())
			}
			if !slices.Equal(names, tt.want) {
				t.Errorf("cachedResources = %v, want %v", names, tt.want)
			}
		})
	}
}
