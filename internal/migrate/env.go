package migrate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ripple-controller/ripple/internal/alert"
)

const envPrefix = "reloader.deployment.env."

// env carries Reloader's environment variables: its ALERT_* ones become
// ripple's alerts values, the others extraEnv entries.
func (m *mapper) env() {
	var extra []any
	extra = append(extra, m.openEnv()...)
	m.secretEnv()
	extra = append(extra, m.existingEnv()...)
	extra = append(extra, m.fieldEnv()...)
	if extra != nil {
		m.set("extraEnv", extra)
	}
}

// sortedKeys lists the keys of the map at path, in order, or none if the
// value there is no map.
func (m *mapper) sortedKeys(path string) (map[string]any, []string) {
	v, _ := m.get(path)
	mm, _ := v.(map[string]any)
	return mm, sortedNames(mm)
}

func (m *mapper) openEnv() []any {
	env, names := m.sortedKeys(envPrefix + "open")
	var extra []any
	for _, name := range names {
		v := env[name]
		if empty(v) {
			continue
		}
		if !m.alertSetting(envPrefix+"open."+name, name, fmt.Sprint(v)) {
			extra = append(extra, map[string]any{"name": name, "value": fmt.Sprint(v)})
		}
	}
	return extra
}

// alertSetting sets ripple's alerts value for one of Reloader's ALERT_*
// variables, and reports whether name was one.
func (m *mapper) alertSetting(path, name, value string) bool {
	switch name {
	case "ALERT_ON_RELOAD":
		m.set("alerts.enabled", value == "true")
	case "ALERT_SINK":
		sink, err := alert.ParseSink(value)
		if err != nil {
			m.drop(path, "not a sink ripple knows: slack, teams, gchat, raw or webhook")
			return true
		}
		m.set("alerts.sink", string(sink))
	case "ALERT_WEBHOOK_URL":
		if !strings.HasPrefix(value, "http://") && !strings.HasPrefix(value, "https://") {
			m.drop(path, "ripple sends alerts to http(s) URLs only")
			return true
		}
		m.set("alerts.webhookUrl", value)
	case "ALERT_ADDITIONAL_INFO":
		m.set("alerts.additionalInfo", value)
	default:
		return false
	}
	return true
}

// secretEnv carries the values Reloader's chart puts in a Secret of its
// own. ripple's chart makes no Secret, so the secret ones are dropped,
// without their value.
func (m *mapper) secretEnv() {
	env, names := m.sortedKeys(envPrefix + "secret")
	for _, name := range names {
		path := envPrefix + "secret." + name
		if empty(env[name]) {
			continue
		}
		switch v := fmt.Sprint(env[name]); name {
		case "ALERT_ON_RELOAD", "ALERT_SINK":
			m.alertSetting(path, name, v)
		case "ALERT_WEBHOOK_URL":
			m.drop(path, "ripple's chart makes no Secret: put the URL in a Secret of the release namespace and name it in alerts.webhookUrlSecret")
		default:
			m.drop(path, "ripple's chart makes no Secret: put it in one and add it to extraEnv with valueFrom.secretKeyRef")
		}
	}
}

// existingEnv carries variables read from Secrets that exist already.
func (m *mapper) existingEnv() []any {
	secrets, names := m.sortedKeys(envPrefix + "existing")
	var extra []any
	for _, secret := range names {
		vars, _ := secrets[secret].(map[string]any)
		for _, name := range sortedNames(vars) {
			key := fmt.Sprint(vars[name])
			switch name {
			case "ALERT_WEBHOOK_URL":
				m.set("alerts.webhookUrlSecret", map[string]any{"name": secret, "key": key})
			case "ALERT_ON_RELOAD", "ALERT_SINK", "ALERT_ADDITIONAL_INFO":
				m.drop(envPrefix+"existing."+secret+"."+name, "ripple's chart sets it from its alerts values (enabled, sink, additionalInfo): set them to what the Secret holds")
			default:
				extra = append(extra, map[string]any{"name": name, "valueFrom": map[string]any{
					"secretKeyRef": map[string]any{"name": secret, "key": key},
				}})
			}
		}
	}
	return extra
}

func (m *mapper) fieldEnv() []any {
	env, names := m.sortedKeys(envPrefix + "field")
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
