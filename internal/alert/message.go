package alert

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Sink is the kind of webhook alerts go to, Reloader's ALERT_SINK.
type Sink string

// The sinks Reloader knows. Raw is the default, as in Reloader.
const (
	Slack      Sink = "slack"
	Teams      Sink = "teams"
	GoogleChat Sink = "gchat"
	Raw        Sink = "raw"
)

// Sinks lists the valid sinks, for messages naming them.
var Sinks = []Sink{Slack, Teams, GoogleChat, Raw}

// webhook is Raw under the name Reloader's README gives it.
const webhook = "webhook"

// ParseSink reads an ALERT_SINK value: case and surrounding space do not
// matter, and empty or "webhook" means Raw.
func ParseSink(s string) (Sink, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" || s == webhook {
		return Raw, nil
	}
	for _, k := range Sinks {
		if string(k) == s {
			return k, nil
		}
	}
	return "", fmt.Errorf("%q is not slack, teams, gchat, raw or webhook", s)
}

// Message is one rollout, or with --webhook-url one change that would have
// rolled: names only, never data.
type Message struct {
	// Kind, Namespace and Name name the workload.
	Kind, Namespace, Name string
	// Changed names the changed objects, as ripple's Events do:
	// "ConfigMap/app-config, Secret/db".
	Changed string
}

// text is the sentence a person reads, with the names in *bold* (Slack's,
// Google Chat's and Teams' markdown all take single asterisks).
func (m Message) text(info string) string {
	s := fmt.Sprintf("ripple rolled %s *%s* in namespace *%s* because *%s* changed", m.Kind, m.Name, m.Namespace, m.Changed)
	if info != "" {
		// Reloader puts ALERT_ADDITIONAL_INFO (a cluster name, say) first.
		s = info + " : " + s
	}
	return s
}

// rawBody is the "raw" sink's JSON: the sentence without markdown, and the
// fields a program would otherwise have to parse out of it.
type rawBody struct {
	Text           string `json:"text"`
	Kind           string `json:"kind"`
	Namespace      string `json:"namespace"`
	Name           string `json:"name"`
	Changed        string `json:"changed"`
	AdditionalInfo string `json:"additionalInfo,omitempty"`
}

// Format returns the body of m's alert for sink, ALERT_ADDITIONAL_INFO
// being info. Every sink takes JSON.
func Format(sink Sink, info string, m Message) ([]byte, error) {
	var body any
	switch sink {
	case Slack, Teams, GoogleChat:
		body = map[string]string{"text": m.text(info)}
	case Raw:
		body = rawBody{Text: strings.ReplaceAll(m.text(info), "*", ""), Kind: m.Kind, Namespace: m.Namespace, Name: m.Name,
			Changed: m.Changed, AdditionalInfo: info}
	default:
		return nil, fmt.Errorf("unknown alert sink %q", sink)
	}
	out, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("encoding the alert: %w", err)
	}
	return out, nil
}

// webhookBody is what --webhook-url receives instead of a rollout. The
// "webhook" field is the whole of Reloader's body, kept so that receivers
// written for Reloader still find it.
type webhookBody struct {
	Webhook   string `json:"webhook"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Changed   string `json:"changed"`
}

// WebhookBody returns the JSON --webhook-url receives for m.
func WebhookBody(m Message) ([]byte, error) {
	out, err := json.Marshal(webhookBody{Webhook: "update successful", Kind: m.Kind, Namespace: m.Namespace, Name: m.Name, Changed: m.Changed})
	if err != nil {
		return nil, fmt.Errorf("encoding the webhook body: %w", err)
	}
	return out, nil
}
