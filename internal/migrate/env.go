package migrate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ripple-controller/ripple/internal/alert"
)

// envPath holds Reloader's environment variables.
var envPath = at("reloader.deployment.env")

// env carries Reloader's environment variables: its ALERT_* ones become
// ripple's alerts values, the others extraEnv entries.
func (m *mapper) env() {
	var extra []any
	extra = append(extra, m.openEnv()...)
	m.secretEnv()
	extra = append(extra, m.existingEnv()...)
	extra = append(extra, m.fieldEnv()...)
	if extra != nil {
		m.set(at("extraEnv"), extra)
	}
}

// sortedKeys lists the keys of the map at p, in order, or none if the
// value there is no map, which is reported: dropped silently, variables
// Reloader had would be missing with no word.
func (m *mapper) sortedKeys(p path) (map[string]any, []string) {
	v, set := m.get(p)
	mm, isMap := v.(map[string]any)
	if set && !isMap {
		m.drop(p, "not a map")
	}
	return mm, sortedNames(mm)
}

func (m *mapper) openEnv() []any {
	env, names := m.sortedKeys(envPath.child("open"))
	var extra []any
	for _, name := range names {
		v := env[name]
		if empty(v) {
			continue
		}
		if !m.alertSetting(envPath.child("open", name), name, fmt.Sprint(v)) {
			extra = append(extra, map[string]any{"name": name, "value": fmt.Sprint(v)})
		}
	}
	return extra
}

// alertSetting sets ripple's alerts value for one of Reloader's ALERT_*
// variables, and reports whether name was one.
func (m *mapper) alertSetting(p path, name, value string) bool {
	switch name {
	case "ALERT_ON_RELOAD":
		m.set(at("alerts.enabled"), value == "true")
	case "ALERT_SINK":
		sink, err := alert.ParseSink(value)
		if err != nil {
			m.drop(p, err.Error())
			return true
		}
		m.set(at("alerts.sink"), string(sink))
	case "ALERT_WEBHOOK_URL":
		// ripple checks it as it would at start; the error does not quote it.
		if _, err := alert.ParseURL(value); err != nil {
			m.drop(p, "the value "+err.Error()+", which ripple refuses")
			return true
		}
		m.set(at("alerts.webhookUrl"), value)
	case "ALERT_ADDITIONAL_INFO":
		m.set(at("alerts.additionalInfo"), value)
	default:
		return false
	}
	return true
}

// secretEnv carries the values Reloader's chart puts in a Secret of its
// own. ripple's chart makes no Secret, so the secret ones are dropped,
// without their value.
func (m *mapper) secretEnv() {
	env, names := m.sortedKeys(envPath.child("secret"))
	for _, name := range names {
		p := envPath.child("secret", name)
		if empty(env[name]) {
			continue
		}
		switch v := fmt.Sprint(env[name]); name {
		case "ALERT_ON_RELOAD", "ALERT_SINK":
			m.alertSetting(p, name, v)
		case "ALERT_WEBHOOK_URL":
			m.drop(p, "ripple's chart makes no Secret: put the URL in a Secret of the release namespace and name it in alerts.webhookUrlSecret")
		default:
			m.drop(p, "ripple's chart makes no Secret: put it in one and add it to extraEnv with valueFrom.secretKeyRef")
		}
	}
}

// existingEnv carries variables read from Secrets that exist already.
func (m *mapper) existingEnv() []any {
	secrets, names := m.sortedKeys(envPath.child("existing"))
	var extra []any
	for _, secret := range names {
		vars, isMap := secrets[secret].(map[string]any)
		if !isMap && !empty(secrets[secret]) {
			m.drop(envPath.child("existing", secret), "not a map")
			continue
		}
		var used []string
		for _, name := range sortedNames(vars) {
			key := fmt.Sprint(vars[name])
			switch name {
			case "ALERT_WEBHOOK_URL":
				m.set(at("alerts.webhookUrlSecret"), map[string]any{"name": secret, "key": key})
				used = append(used, "alerts.webhookUrlSecret")
			case "ALERT_ON_RELOAD", "ALERT_SINK", "ALERT_ADDITIONAL_INFO":
				m.drop(envPath.child("existing", secret, name), "ripple's chart sets it from its alerts values (enabled, sink, additionalInfo): set them to what the Secret holds")
			default:
				extra = append(extra, map[string]any{"name": name, "valueFrom": map[string]any{
					"secretKeyRef": map[string]any{"name": secret, "key": key},
				}})
				if !slices.Contains(used, "extraEnv") {
					used = append(used, "extraEnv")
				}
			}
		}
		// A pod reads a Secret of its own namespace only: installed
		// elsewhere, ripple's would not start.
		if used != nil {
			m.note("%s: read from the Secret %s, which exists in Reloader's namespace: install ripple into that namespace, or copy the Secret into ripple's",
				strings.Join(used, " and "), secret)
		}
	}
	return extra
}

func (m *mapper) fieldEnv() []any {
	env, names := m.sortedKeys(envPath.child("field"))
	var extra []any
	for _, name := range names {
		if empty(env[name]) {
			continue
		}
		extra = append(extra, map[string]any{"name": name, "valueFrom": map[string]any{
			"fieldRef": map[string]any{"fieldPath": fmt.Sprint(env[name])},
		}})
	}
	return extra
}

func sortedNames(mm map[string]any) []string {
	keys := make([]string, 0, len(mm))
	for k := range mm {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
