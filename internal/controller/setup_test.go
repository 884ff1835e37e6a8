package controller

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func TestRetryLimiter_BacksOffToAMinuteAndNoFurther(t *testing.T) {
	cases := []struct {
		failures int
		want     time.Duration
	}{
		{1, 5 * time.Millisecond},
		{2, 10 * time.Millisecond},
		{14, 40960 * time.Millisecond},
		{15, time.Minute},
		{100, time.Minute},
	}
	for _, c := range cases {
		limiter := retryLimiter()
		req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "dep"}}
		var got time.Duration
		for range c.failures {
			got = limiter.When(req)
		}
		if got != c.want {
			t.Errorf("after %d failures: retry in %s, want %s", c.failures, got, c.want)
		}
		limiter.Forget(req)
		if again := limiter.When(req); again != 5*time.Millisecond {
			t.Errorf("after %d failures and a success: retry in %s, want 5ms", c.failures, again)
		}
	}
}
