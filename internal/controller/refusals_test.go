package controller

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
)

func TestRefusals_FailReadinessUntilClientGoWouldHaveRetried(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "statefulsets"}, "", errors.New("no"))
	tests := []struct {
		name string
		errs []error
		// every is the time between errors; after, from the last to the check.
		every, after time.Duration
		unready      bool
	}{
		{"no error", nil, 0, 0, false},
		{"a refusal just now", []error{forbidden}, 0, time.Second, true},
		{"an unauthorized list", []error{apierrors.NewUnauthorized("expired")}, 0, time.Second, true},
		{"a refusal client-go would have retried since", []error{forbidden}, 0, refusalMemory + time.Second, false},
		{"refusals at client-go's longest backoff", []error{forbidden, forbidden, forbidden}, time.Minute, refusalMemory - time.Second, true},
		{"another error", []error{errors.New("connection refused")}, 0, time.Second, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			at := time.Unix(1000, 0)
			r := NewRefusals(logr.Discard())
			r.now = func() time.Time { return at }
			ref := toolscache.NewReflector(&toolscache.ListWatch{}, &corev1.ConfigMap{}, toolscache.NewStore(toolscache.MetaNamespaceKeyFunc), 0)
			for i, err := range tt.errs {
				if i > 0 {
					at = at.Add(tt.every)
				}
				r.HandleWatchError(context.Background(), ref, err)
			}
			at = at.Add(tt.after)
			if err := r.Check(nil); (err != nil) != tt.unready {
				t.Fatalf("Check() = %v, want unready %v", err, tt.unready)
			}
		})
	}
}
