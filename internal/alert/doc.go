// Package alert tells people and other systems about ripple's rollouts, as
// Reloader's alerts and --webhook-url do.
//
// An alert is one chat message per successful rollout, sent to a webhook in
// the format of its sink: Slack, Microsoft Teams and Google Chat incoming
// webhooks take {"text": ...}; "raw" is a JSON object with the text and
// each field on its own, for programs. A Message only ever holds names (the
// workload, its kind and namespace, the changed objects), never data, so no
// Secret value can leave the cluster through it.
//
// Alerts are a side channel: Sender queues them without blocking the
// reconcile that rolled the workload, sends them from one goroutine with
// bounded retries, and drops (and counts) what does not fit its queue, so a
// slow or dead webhook costs ripple log lines, never a rollout.
//
// Poster is one webhook endpoint. It never logs or returns the URL in full,
// as webhook URLs usually carry their token in the path or query: errors
// and logs name only its scheme and host (Redacted).
package alert
