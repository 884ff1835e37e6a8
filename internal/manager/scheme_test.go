package manager

import (
	"testing"

	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/ripple-controller/ripple/internal/workload"
)

func TestSchemeFor_RegistersRolloutsOnlyWhenOnAndNeverGlobally(t *testing.T) {
	deployments, _ := workload.ByPlural("deployments")
	rollouts, _ := workload.ByPlural("rollouts")
	rollout, list := workload.ArgoGroupVersion.WithKind("Rollout"), workload.ArgoGroupVersion.WithKind("RolloutList")

	s, err := SchemeFor([]workload.Type{deployments})
	if err != nil || s != clientgoscheme.Scheme {
		t.Errorf("without Rollouts: scheme %p, error %v; want client-go's", s, err)
	}
	s, err = SchemeFor([]workload.Type{deployments, rollouts})
	if err != nil {
		t.Fatal(err)
	}
	if !s.Recognizes(rollout) || !s.Recognizes(list) || !s.Recognizes(deployments.GroupVersion.WithKind("Deployment")) {
		t.Errorf("with Rollouts: the scheme does not know Rollout, RolloutList and the built-in kinds")
	}
	if clientgoscheme.Scheme.Recognizes(rollout) {
		t.Errorf("Rollout leaked into client-go's global scheme")
	}
}
