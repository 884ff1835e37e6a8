package alert

import (
	"encoding/json"
	"testing"
)

func TestParseSink(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Sink
		ok   bool
	}{
		{"", Raw, true},
		{"  ", Raw, true},
		{"slack", Slack, true},
		{" Slack ", Slack, true},
		{"TEAMS", Teams, true},
		{"gchat", GoogleChat, true},
		{"raw", Raw, true},
		{"webhook", Raw, true},
		{" Webhook", Raw, true},
		{"discord", "", false},
		{"google", "", false},
	} {
		got, err := ParseSink(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("ParseSink(%q) = %q, %v; want %q, ok %v", c.in, got, err, c.want, c.ok)
		}
	}
}

func TestFormat(t *testing.T) {
	m := Message{Kind: "Deployment", Namespace: "shop", Name: "web", Changed: "ConfigMap/app, Secret/db"}
	const sentence = "ripple rolled Deployment *web* in namespace *shop* because *ConfigMap/app, Secret/db* changed"
	for _, c := range []struct {
		name string
		sink Sink
		info string
		want map[string]string
	}{
		{"slack", Slack, "", map[string]string{"text": sentence}},
		{"slack with additional info first", Slack, "prod-eu", map[string]string{"text": "prod-eu : " + sentence}},
		{"teams", Teams, "", map[string]string{"text": sentence}},
		{"google chat", GoogleChat, "prod-eu", map[string]string{"text": "prod-eu : " + sentence}},
		{"raw has fields and no markdown", Raw, "", map[string]string{
			"text": "ripple rolled Deployment web in namespace shop because ConfigMap/app, Secret/db changed",
			"kind": "Deployment", "namespace": "shop", "name": "web", "changed": "ConfigMap/app, Secret/db",
		}},
		{"raw with additional info", Raw, "prod-eu", map[string]string{
			"text": "prod-eu : ripple rolled Deployment web in namespace shop because ConfigMap/app, Secret/db changed",
			"kind": "Deployment", "namespace": "shop", "name": "web", "changed": "ConfigMap/app, Secret/db",
			"additionalInfo": "prod-eu",
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			body, err := Format(c.sink, c.info, m)
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]string
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatalf("%s is not a JSON object of strings: %v", body, err)
			}
			if len(got) != len(c.want) {
				t.Errorf("body %s, want fields %v", body, c.want)
			}
			for k, v := range c.want {
				if got[k] != v {
					t.Errorf("%s = %q, want %q", k, got[k], v)
				}
			}
		})
	}
	if _, err := Format("discord", "", m); err == nil {
		t.Error("an unknown sink formats")
	}
}

func TestWebhookBody(t *testing.T) {
	body, err := WebhookBody(Message{Kind: "StatefulSet", Namespace: "db", Name: "pg", Changed: "Secret/creds"})
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]string
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"webhook": "update successful", "kind": "StatefulSet", "namespace": "db", "name": "pg", "changed": "Secret/creds"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q (body %s)", k, got[k], v, body)
		}
	}
}
