package controller

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/ripple-controller/ripple/internal/alert"
	"github.com/ripple-controller/ripple/internal/options"
)

// Event reasons of --webhook-url mode.
const (
	ReasonWebhookSent   = "WebhookSent"
	ReasonWebhookFailed = "WebhookFailed"
)

// Notifier hears of each rollout; alert.Sender is one. Notify must not
// block: it runs in the reconcile that rolled.
type Notifier interface {
	Notify(ctx context.Context, m alert.Message)
}

// notifiers builds what opts ask for around rollouts: the alert Sender,
// run by mgr, which waits for the rollout writes w counts when ripple
// stops, and the --webhook-url Poster. Either may be nil.
func notifiers(mgr ctrl.Manager, opts *options.Options, w *writes) (Notifier, *alert.Poster, error) {
	var alerts Notifier
	if opts.Alerts != nil {
		s := alert.NewSender(*opts.Alerts, mgr.GetLogger().WithName("alerts"))
		s.Settled = w.done
		if err := mgr.Add(s); err != nil {
			return nil, nil, fmt.Errorf("adding the alert sender: %w", err)
		}
		alerts = s
	}
	if opts.WebhookURL == "" {
		return alerts, nil, nil
	}
	u, err := alert.ParseURL(opts.WebhookURL)
	if err != nil {
		return nil, nil, fmt.Errorf("--webhook-url: %w", err)
	}
	p := alert.NewPoster(u, nil)
	// As Reloader does: a webhook-url in a copied command line would
	// otherwise silently stop every rollout.
	mgr.GetLogger().Info("Rolling no workload: --webhook-url is set, so each change that would roll one is posted to the webhook instead",
		"webhook", p.Redacted())
	return alerts, p, nil
}

// notify tells the alerts, if any, of a rollout of obj.
func (r *Reconciler) notify(ctx context.Context, obj client.Object, names string) {
	if r.Alerts != nil {
		r.Alerts.Notify(ctx, r.message(obj, names))
	}
}

func (r *Reconciler) message(obj client.Object, names string) alert.Message {
	return alert.Message{Kind: r.Type.Kind, Namespace: obj.GetNamespace(), Name: obj.GetName(), Changed: names}
}

// postedChanges bounds the workloads remembered with the last change posted
// for them whose record is not written yet (postInstead).
const postedChanges = 4096

// postInstead is --webhook-url mode's rollout: the change goes to the
// webhook, and only then into the record. A failed POST records nothing and
// returns the error, so that the workqueue retries with backoff and no
// change is lost. A record write refused after the POST (an admission
// policy, say) is retried without posting again while the workload's
// config stays the one posted last: the POSTs of a workload whose record
// cannot be written would otherwise go on for good, each one a redeploy to
// the receiver. Only a restart, or more than postedChanges workloads
// waiting so, posts it again: the webhook hears of each change at least
// once.
func (r *Reconciler) postInstead(ctx context.Context, v state, next record, names string) (outcome, error) {
	if why := r.held(v); why != "" {
		out, err := r.record(ctx, v, next)
		if err == nil {
			r.reportHeld(ctx, v.obj, names, why)
			out.recorded = true
		}
		return out, err
	}
	config := workloadDigest(r.Keyed, v.current)
	if last, ok := r.posted.Get(v.obj.GetUID()); !ok || last != config {
		if err := r.post(ctx, v, names); err != nil {
			return outcome{}, err
		}
		r.posted.Add(v.obj.GetUID(), config)
	}
	recorded, err := r.recordAfter(ctx, v, next)
	if err != nil {
		return outcome{}, err
	}
	r.posted.Remove(v.obj.GetUID())
	skipsTotal.WithLabelValues(skipWebhook).Inc()
	return outcome{recorded: true, endedHold: recorded.endedHold}, nil
}

// post sends the change to the webhook and says so.
func (r *Reconciler) post(ctx context.Context, v state, names string) error {
	body, err := alert.WebhookBody(r.message(v.obj, names))
	if err != nil {
		return err
	}
	if err := r.Webhook.Post(ctx, body); err != nil {
		r.event(v.obj, corev1.EventTypeWarning, ReasonWebhookFailed, "Webhook", "Posting the change of %s to the webhook failed: %v", names, err)
		return fmt.Errorf("posting the change of %s to --webhook-url: %w", names, err)
	}
	r.event(v.obj, corev1.EventTypeNormal, ReasonWebhookSent, "Webhook", "Posted the change of %s to the webhook instead of rolling", names)
	logf.FromContext(ctx).Info("Posted a change to the webhook instead of rolling", "changed", names, "webhook", r.Webhook.Redacted())
	return nil
}
