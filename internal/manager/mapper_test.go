package manager

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// countingMapper knows Deployments only, and counts what it is asked.
type countingMapper struct {
	meta.RESTMapper
	asked int
}

func (m *countingMapper) RESTMapping(gk schema.GroupKind, _ ...string) (*meta.RESTMapping, error) {
	m.asked++
	if gk.Kind != "Deployment" {
		return nil, &meta.NoKindMatchError{GroupKind: gk}
	}
	return &meta.RESTMapping{Resource: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}}, nil
}

func TestMemoMapper_AsksOncePerKindAndAgainAfterAMiss(t *testing.T) {
	deployments := schema.GroupKind{Group: "apps", Kind: "Deployment"}
	rollouts := schema.GroupKind{Group: "argoproj.io", Kind: "Rollout"}
	tests := []struct {
		name      string
		asks      []schema.GroupKind
		wantAsked int
	}{
		{"a found kind is asked once", []schema.GroupKind{deployments, deployments, deployments}, 1},
		{"a missing kind is asked every time, so an API served later is found", []schema.GroupKind{rollouts, rollouts}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inner := &countingMapper{}
			m := &memoMapper{RESTMapper: inner, found: map[mappingKey]*meta.RESTMapping{}}
			for _, gk := range tt.asks {
				got, err := m.RESTMapping(gk, "v1")
				if gk == deployments && (err != nil || got.Resource.Resource != "deployments") {
					t.Fatalf("RESTMapping(%v) = %v, %v", gk, got, err)
				}
				if gk == rollouts && !meta.IsNoMatchError(err) {
					t.Fatalf("RESTMapping(%v) error = %v, want no match", gk, err)
				}
			}
			if inner.asked != tt.wantAsked {
				t.Errorf("the mapper was asked %d times, want %d", inner.asked, tt.wantAsked)
			}
		})
	}
}
