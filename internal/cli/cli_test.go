package cli

import (
	"strings"
	"testing"
)

func TestRun_BadFlagValueFailsNamingTheFlag(t *testing.T) {
	cases := []struct {
		args []string
		flag string
	}{
		{[]string{"--log-format=xml"}, "--log-format"},
		{[]string{"--log-level=loud"}, "--log-level"},
		{[]string{"--debounce=-1s"}, "--debounce"},
		{[]string{"--debounce=soon"}, "--debounce"},
		{[]string{"--resources-to-ignore=pods"}, "--resources-to-ignore"},
		{[]string{"--ignored-workload-types=replicasets"}, "--ignored-workload-types"},
		{[]string{"--namespace-selector=a=b=c"}, "--namespace-selector"},
		{[]string{"--resource-label-selector=!!"}, "--resource-label-selector"},
		{[]string{"--kube-api-qps=0"}, "--kube-api-qps"},
		{[]string{"--kube-api-burst=many"}, "--kube-api-burst"},
		{[]string{"--enable-ha", "--leader-election-lease-duration=1s"}, "--leader-election-lease-duration"},
		{[]string{"--auto-annotation="}, "--auto-annotation"},
		{[]string{"--hmac-key-secret=a/b/c"}, "--hmac-key-secret"},
		{[]string{"--no-such-flag"}, "no-such-flag"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			err := Run(c.args)
			if err == nil {
				t.Fatalf("run(%q) succeeded, want an error naming %s", c.args, c.flag)
			}
			if !strings.Contains(err.Error(), c.flag) {
				t.Errorf("run(%q) = %q, want it to name %s", c.args, err, c.flag)
			}
		})
	}
}

func TestRun_HelpExitsCleanly(t *testing.T) {
	if err := Run([]string{"--help"}); err != nil {
		t.Fatalf("run(--help) = %v, want nil", err)
	}
}
