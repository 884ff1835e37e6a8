package controller

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestResourcePathNamesTheObjectInItsAPI(t *testing.T) {
	tests := []struct {
		name      string
		gvr       schema.GroupVersionResource
		scope     meta.RESTScope
		namespace string
		want      string
	}{
		{"a named group", schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, meta.RESTScopeNamespace, "ns", "apis/apps/v1/namespaces/ns/deployments/web"},
		{"a CRD's group", schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "rollouts"}, meta.RESTScopeNamespace, "ns", "apis/argoproj.io/v1alpha1/namespaces/ns/rollouts/web"},
		{"the core group", schema.GroupVersionResource{Version: "v1", Resource: "pods"}, meta.RESTScopeNamespace, "ns", "api/v1/namespaces/ns/pods/web"},
		{"a cluster-scoped kind", schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, meta.RESTScopeRoot, "", "api/v1/namespaces/web"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := strings.Join(resourcePath(&meta.RESTMapping{Resource: tt.gvr, Scope: tt.scope}, tt.namespace, "web"), "/")
			if got != tt.want {
				t.Errorf("path %s, want %s", got, tt.want)
			}
		})
	}
}
