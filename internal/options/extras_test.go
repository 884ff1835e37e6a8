package options

import (
	"strings"
	"testing"

	"github.com/ripple-controller/ripple/internal/alert"
)

func TestExtras(t *testing.T) {
	const hook = "https://hooks.example.com/services/T0/B0/s3cr3t"
	for _, c := range []struct {
		name string
		env  map[string]string
		args []string
		// errs are fragments of the error; none means it parses.
		errs  []string
		check func(t *testing.T, o Options)
	}{
		{name: "defaults", check: func(t *testing.T, o Options) {
			if o.EnablePprof || o.PprofAddr != ":6060" || o.PprofBindAddress() != "" || o.WebhookURL != "" || o.Alerts != nil || o.CountByNamespace {
				t.Errorf("extras %+v are not the defaults", o.Extras)
			}
		}},
		{name: "pprof", args: []string{"--enable-pprof", "--pprof-addr=127.0.0.1:6061"}, check: func(t *testing.T, o Options) {
			if o.PprofBindAddress() != "127.0.0.1:6061" {
				t.Errorf("pprof on %q", o.PprofBindAddress())
			}
		}},
		{name: "pprof address without --enable-pprof serves nothing", args: []string{"--pprof-addr=:7000"}, check: func(t *testing.T, o Options) {
			if o.PprofBindAddress() != "" {
				t.Errorf("pprof on %q", o.PprofBindAddress())
			}
		}},
		{name: "webhook url", args: []string{"--webhook-url=http://receiver:8080/hook"}, check: func(t *testing.T, o Options) {
			if o.WebhookURL != "http://receiver:8080/hook" {
				t.Errorf("webhook %q", o.WebhookURL)
			}
		}},
		{name: "webhook url not http", args: []string{"--webhook-url=ftp://receiver/s3cr3t"}, errs: []string{"--webhook-url", "http or https"}},
		{name: "webhook url relative", args: []string{"--webhook-url=receiver/hook"}, errs: []string{"--webhook-url"}},
		{name: "count by namespace", env: map[string]string{EnvMetricsCountByNamespace: "enabled"}, check: func(t *testing.T, o Options) {
			if !o.CountByNamespace {
				t.Error("not counted by namespace")
			}
		}},
		{name: "count by namespace needs enabled", env: map[string]string{EnvMetricsCountByNamespace: "true"}, check: func(t *testing.T, o Options) {
			if o.CountByNamespace {
				t.Error("counted by namespace")
			}
		}},
		{name: "alerts off ignore their other variables", env: map[string]string{EnvAlertOnReload: "false", EnvAlertSink: "discord", EnvAlertWebhookURL: "x"},
			check: func(t *testing.T, o Options) {
				if o.Alerts != nil {
					t.Errorf("alerts %+v", o.Alerts)
				}
			}},
		{name: "alerts, raw by default", env: map[string]string{EnvAlertOnReload: "true", EnvAlertWebhookURL: hook, EnvAlertAdditionalInfo: " prod "},
			check: func(t *testing.T, o Options) {
				a := o.Alerts
				if a == nil || a.Sink != alert.Raw || a.URL.String() != hook || a.AdditionalInfo != "prod" || a.Proxy != nil {
					t.Errorf("alerts %+v", a)
				}
			}},
		{name: "alerts to slack through a proxy", env: map[string]string{EnvAlertOnReload: "true", EnvAlertSink: "Slack", EnvAlertWebhookURL: hook, EnvAlertWebhookProxy: "http://proxy:3128"},
			check: func(t *testing.T, o Options) {
				if a := o.Alerts; a == nil || a.Sink != alert.Slack || a.Proxy.Host != "proxy:3128" {
					t.Errorf("alerts %+v", a)
				}
			}},
		{name: "unknown sink", env: map[string]string{EnvAlertOnReload: "true", EnvAlertSink: "discord", EnvAlertWebhookURL: hook}, errs: []string{EnvAlertSink, "discord"}},
		{name: "no alert url", env: map[string]string{EnvAlertOnReload: "true"}, errs: []string{EnvAlertWebhookURL, "empty"}},
		{name: "malformed alert url", env: map[string]string{EnvAlertOnReload: "true", EnvAlertWebhookURL: "hooks.example.com/s3cr3t"}, errs: []string{EnvAlertWebhookURL}},
		{name: "malformed proxy", env: map[string]string{EnvAlertOnReload: "true", EnvAlertWebhookURL: hook, EnvAlertWebhookProxy: "proxy:3128"}, errs: []string{EnvAlertWebhookProxy}},
		{name: "proxy of another scheme", env: map[string]string{EnvAlertOnReload: "true", EnvAlertWebhookURL: hook, EnvAlertWebhookProxy: "ftp://proxy:21"}, errs: []string{EnvAlertWebhookProxy, "socks5"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			o, err := parseEnv(t, c.env, c.args...)
			if len(c.errs) == 0 {
				if err != nil {
					t.Fatalf("Options() = %v", err)
				}
				c.check(t, o)
				return
			}
			if err == nil {
				t.Fatalf("Options() succeeded, want an error naming %v", c.errs)
			}
			for _, frag := range c.errs {
				if !strings.Contains(err.Error(), frag) {
					t.Errorf("error %q does not name %q", err, frag)
				}
			}
			if strings.Contains(err.Error(), "s3cr3t") {
				t.Errorf("error %q quotes the URL", err)
			}
		})
	}
}

// TestExtras_AlertsAsReloaderReadsThem checks the alert settings a
// Reloader user may carry over: each starts ripple, with the alerts Reloader
// would send.
func TestExtras_AlertsAsReloaderReadsThem(t *testing.T) {
	const hook = "https://hooks.example.com/services/T0/B0/s3cr3t"
	for _, c := range []struct {
		name string
		env  map[string]string
		// wantSink is "" for alerts off.
		wantSink  alert.Sink
		wantProxy string
	}{
		{name: "the webhook sink of Reloader's README is raw", env: map[string]string{EnvAlertOnReload: "true", EnvAlertSink: "webhook", EnvAlertWebhookURL: hook},
			wantSink: alert.Raw},
		{name: "a SOCKS5 proxy", env: map[string]string{EnvAlertOnReload: "true", EnvAlertWebhookURL: hook, EnvAlertWebhookProxy: "socks5://proxy:1080"},
			wantSink: alert.Raw, wantProxy: "socks5://proxy:1080"},
		{name: "on only for exactly true", env: map[string]string{EnvAlertOnReload: "True"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			o, err := parseEnv(t, c.env)
			if err != nil {
				t.Fatalf("Options() = %v", err)
			}
			var sink alert.Sink
			var proxy string
			if a := o.Alerts; a != nil {
				sink = a.Sink
				if a.Proxy != nil {
					proxy = a.Proxy.String()
				}
			}
			if sink != c.wantSink || proxy != c.wantProxy {
				t.Errorf("alerts to sink %q through proxy %q, want %q through %q", sink, proxy, c.wantSink, c.wantProxy)
			}
		})
	}
}
