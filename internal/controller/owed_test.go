package controller

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ripple-controller/ripple/internal/workload"
)

// A Job owed under a name is forgotten once a reconcile finds a Job of that
// name again, so that deleting that Job later, on purpose, is final.
func TestOwed_ForgottenOnceTheNameHoldsAJobAgain(t *testing.T) {
	key := types.NamespacedName{Namespace: "ns", Name: "migrate"}
	for _, tc := range []struct {
		name  string
		later []workload.Result // what later reconciles of the name resumed
		owed  bool
	}{
		{"refused, nothing since", nil, true},
		{"refused again", []workload.Result{{Owed: &batchv1.Job{}}}, true},
		{"the name holds a Job again", []workload.Result{{}}, false},
		{"created by a later recreation", []workload.Result{{Created: &batchv1.Job{}}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := newOwed()
			o.keep(key, workload.Result{Owed: &batchv1.Job{}, Cause: "ConfigMap cfg"})
			for _, res := range tc.later {
				o.keep(key, res)
			}
			if _, owed := o.take(key); owed != tc.owed {
				t.Fatalf("owed = %t, want %t", owed, tc.owed)
			}
		})
	}
}
