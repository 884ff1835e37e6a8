package cli

import (
	"runtime"
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
		{[]string{"--reload-on-delete", "false"}, "--reload-on-delete=false"},
		{[]string{"--auto-reload-all", "--reload-on-create", "true"}, "--reload-on-create=true"},
		{[]string{"extra"}, `unexpected argument "extra"`},
		{[]string{"--kubeconfig", "x", "--reload-on-delete", "x"}, `"x" after --reload-on-delete`},
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

func TestMigrateValues_ReadsAFileOrStandardInputAndFailsClearly(t *testing.T) {
	cases := []struct {
		name  string
		args  []string
		stdin string
		// out is in the output, err in the error; one is empty.
		out, err string
	}{
		{"standard input", []string{"-"}, "reloader: {enableHA: true}", "highAvailability:\n  enabled: true", ""},
		{"no file", nil, "", "", "usage: ripple migrate-values FILE"},
		{"two files", []string{"a", "b"}, "", "", "usage: ripple migrate-values FILE"},
		{"a missing file", []string{"/nonexistent/values.yaml"}, "", "", "migrate-values: open /nonexistent/values.yaml"},
		{"over 1 MiB", []string{"-"}, "x: " + strings.Repeat("a", 2<<20), "", "over 1048576 bytes"},
		{"not YAML", []string{"-"}, "\t:", "", "migrate-values: -: reading the values as a YAML map"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out strings.Builder
			err := MigrateValues(c.args, strings.NewReader(c.stdin), &out)
			if c.err == "" {
				if err != nil || !strings.Contains(out.String(), c.out) {
					t.Fatalf("MigrateValues = %v, output:\n%s\nwant it to hold %q", err, out.String(), c.out)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Fatalf("MigrateValues = %v, want an error holding %q", err, c.err)
			}
		})
	}
}

func TestSampleHeap_KeepsHeapProfilesOnlyWhenPprofServesThemOrGODEBUGAsks(t *testing.T) {
	defer func(rate int) { runtime.MemProfileRate = rate }(runtime.MemProfileRate)
	for _, tc := range []struct {
		name    string
		pprof   bool
		godebug string
		sampled bool
	}{
		{name: "with --enable-pprof the heap profile is sampled", pprof: true, sampled: true},
		{name: "without it nothing is sampled", sampled: false},
		{name: "GODEBUG's memprofilerate is left as set", godebug: "gctrace=1,memprofilerate=1", sampled: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("GODEBUG", tc.godebug)
			runtime.MemProfileRate = 512 * 1024
			sampleHeap(tc.pprof)
			if got := runtime.MemProfileRate > 0; got != tc.sampled {
				t.Errorf("heap sampled = %v (MemProfileRate %d), want %v", got, runtime.MemProfileRate, tc.sampled)
			}
		})
	}
}
