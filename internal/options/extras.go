package options

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/ripple-controller/ripple/internal/alert"
)

// Environment variables of Reloader's alerts and metrics, read once at
// start as Reloader does.
const (
	// EnvAlertOnReload turns alerts on when "true".
	EnvAlertOnReload = "ALERT_ON_RELOAD"
	// EnvAlertSink is slack, teams, gchat or raw (the default).
	EnvAlertSink = "ALERT_SINK"
	// EnvAlertWebhookURL is where alerts go; required with alerts on.
	EnvAlertWebhookURL = "ALERT_WEBHOOK_URL"
	// EnvAlertAdditionalInfo goes first in every alert.
	EnvAlertAdditionalInfo = "ALERT_ADDITIONAL_INFO"
	// EnvAlertWebhookProxy is a proxy URL the alerts go through.
	EnvAlertWebhookProxy = "ALERT_WEBHOOK_PROXY"
	// EnvMetricsCountByNamespace, when "enabled", adds the per-namespace
	// count of Reloader's reload metric.
	EnvMetricsCountByNamespace = "METRICS_COUNT_BY_NAMESPACE"
)

// Extras are Reloader's features around a rollout rather than the rollout
// itself: profiling, --webhook-url, alerts and per-namespace counts.
type Extras struct {
	EnablePprof bool
	PprofAddr   string
	// WebhookURL, when set, replaces every rollout with a POST to it.
	WebhookURL string
	// Alerts is nil unless ALERT_ON_RELOAD is "true".
	Alerts *alert.Config
	// CountByNamespace adds reloader_reload_executed_total_by_namespace.
	CountByNamespace bool
}

func (p *Parser) bindExtras(fs *pflag.FlagSet) {
	e := &p.opts.Extras
	fs.BoolVar(&e.EnablePprof, "enable-pprof", false, "Serve Go's pprof profiles under /debug/pprof/ on --pprof-addr; without it no allocation is sampled for heap profiles.")
	fs.StringVar(&e.PprofAddr, "pprof-addr", ":6060", "Address of the pprof endpoint, with --enable-pprof.")
	fs.StringVar(&e.WebhookURL, "webhook-url", "", "Roll nothing: POST each change that would roll a workload to this http or https URL instead, as JSON naming the workload and the changed objects.")
}

// extras validates the extras and reads their environment variables. No
// message quotes a URL: webhook URLs usually hold a token.
func (p *Parser) extras(o *Options) []error {
	var errs []error
	if o.WebhookURL != "" {
		if _, err := alert.ParseURL(o.WebhookURL); err != nil {
			errs = append(errs, fmt.Errorf("--webhook-url: %w", err))
		}
	}
	o.CountByNamespace = strings.TrimSpace(p.getenv(EnvMetricsCountByNamespace)) == "enabled"
	// Exactly "true", as Reloader reads it: "True" would turn on alerts
	// Reloader left off, and stop ripple when no webhook is set.
	if p.getenv(EnvAlertOnReload) != "true" {
		return errs
	}
	fail := func(env string, err error) { errs = append(errs, fmt.Errorf("$%s: %w", env, err)) }
	cfg := &alert.Config{AdditionalInfo: strings.TrimSpace(p.getenv(EnvAlertAdditionalInfo))}
	var err error
	if cfg.Sink, err = alert.ParseSink(p.getenv(EnvAlertSink)); err != nil {
		fail(EnvAlertSink, err)
	}
	if u := strings.TrimSpace(p.getenv(EnvAlertWebhookURL)); u == "" {
		fail(EnvAlertWebhookURL, fmt.Errorf("is empty, and %s is true", EnvAlertOnReload))
	} else if cfg.URL, err = alert.ParseURL(u); err != nil {
		fail(EnvAlertWebhookURL, err)
	}
	if proxy := strings.TrimSpace(p.getenv(EnvAlertWebhookProxy)); proxy != "" {
		if cfg.Proxy, err = alert.ParseProxy(proxy); err != nil {
			fail(EnvAlertWebhookProxy, err)
		}
	}
	o.Alerts = cfg
	return errs
}

// PprofBindAddress is where the manager serves pprof: nowhere ("") unless
// --enable-pprof.
func (o *Options) PprofBindAddress() string {
	if !o.EnablePprof {
		return ""
	}
	return o.PprofAddr
}
