package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/ripple-controller/ripple/internal/annotations"
	"github.com/ripple-controller/ripple/internal/digest"
	"github.com/ripple-controller/ripple/internal/options"
	"github.com/ripple-controller/ripple/internal/refs"
	"github.com/ripple-controller/ripple/internal/workload"
)

// FieldOwner is the field manager of every write ripple makes.
const FieldOwner = "ripple"

// conflictRetry is short because a conflict only means the workload moved
// (often its status) between ripple's read and its patch.
const conflictRetry = 50 * time.Millisecond

// Event reasons ripple emits on workloads.
const (
	ReasonReloaded          = "Reloaded"
	ReasonReloadFailed      = "ReloadFailed"
	ReasonInvalidAnnotation = "InvalidAnnotation"
)

// Reconciler rolls the workloads of one kind whose tracked config changed.
type Reconciler struct {
	client.Client
	Kind     workload.Kind
	Opts     *options.Options
	Keyed    digest.Keyed
	Recorder events.EventRecorder

	seen    *triggers
	digests *digests
	now     func() time.Time
}

// trackedObj is one tracked ConfigMap or Secret as the cache holds it.
type trackedObj struct {
	sum       digest.Sum
	createdAt int64
}

// Reconcile compares the config the workload tracks with its record and
// writes only when they differ.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	triggeredAt, triggered := r.seen.take(req)
	obj := r.Kind.New()
	// Reconcile only reads the cached object: patch writes to a fresh one.
	if err := r.Get(ctx, req.NamespacedName, obj, client.UnsafeDisableDeepCopy); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	tmpl := r.Kind.Template(obj)
	if tmpl == nil || obj.GetDeletionTimestamp() != nil {
		return ctrl.Result{}, nil
	}
	pol := r.Opts.Keys.Parse(obj.GetAnnotations(), tmpl.Annotations, r.Opts.AutoReloadAll)
	r.reportProblems(ctx, obj, pol.Problems)
	workloadProblems := len(pol.Problems)
	recorded, hasRecord := obj.GetAnnotations()[annotations.Recorded]
	if !pol.OptedIn() && !hasRecord {
		return ctrl.Result{}, nil
	}
	selected, err := r.namespaceSelected(ctx, req.Namespace)
	if err != nil || !selected {
		if !selected {
			skipsTotal.WithLabelValues(skipNamespace).Inc()
		}
		return ctrl.Result{}, err
	}
	current, err := r.tracked(ctx, req.Namespace, &tmpl.Spec, &pol)
	r.reportProblems(ctx, obj, pol.Problems[workloadProblems:])
	if err != nil {
		return ctrl.Result{}, err
	}
	res, err := r.converge(ctx, obj, recorded, hasRecord, current)
	if apierrors.IsConflict(err) {
		if triggered {
			r.seen.add(req, triggeredAt)
		}
		return ctrl.Result{RequeueAfter: conflictRetry}, nil
	}
	if apierrors.IsNotFound(err) {
		// Deleted between the cached read and the patch: nothing to roll.
		return ctrl.Result{}, nil
	}
	if res.rolled && triggered {
		reloadLatency.WithLabelValues(r.Kind.Name).Observe(time.Since(triggeredAt).Seconds())
	}
	return ctrl.Result{}, err
}

type outcome struct{ rolled bool }

// converge decides between no write, a record and a rollout, and makes at
// most one patch.
func (r *Reconciler) converge(ctx context.Context, obj client.Object, recorded string, hasRecord bool, current map[refs.Ref]trackedObj) (outcome, error) {
	log := logf.FromContext(ctx)
	next := record{keyID: r.Keyed.KeyID(), at: r.now().Unix(), objects: map[refs.Ref]string{}}
	for ref, t := range current {
		next.objects[ref] = r.Keyed.Short(t.sum)
	}
	rec, err := decodeRecord(recorded)
	switch {
	case !hasRecord:
		skipsTotal.WithLabelValues(skipFirstSight).Inc()
		log.V(1).Info("Recording the config of a workload seen for the first time")
		return outcome{}, r.patch(ctx, obj, next, "")
	case err != nil:
		skipsTotal.WithLabelValues(skipFirstSight).Inc()
		log.Info("Recording the config again: the recorded state is unreadable", "annotation", annotations.Recorded, "reason", err.Error())
		return outcome{}, r.patch(ctx, obj, next, "")
	case rec.keyID != next.keyID:
		skipsTotal.WithLabelValues(skipKeyChanged).Inc()
		log.Info("Recording the config again: the digest key changed")
		return outcome{}, r.patch(ctx, obj, next, "")
	}
	shorts := map[refs.Ref]observed{}
	for ref, t := range current {
		shorts[ref] = observed{short: next.objects[ref], createdAt: t.createdAt}
	}
	changes := diff(rec, shorts, func(ref refs.Ref) bool { return r.exists(ctx, obj.GetNamespace(), ref) })
	if len(changes) == 0 {
		skipsTotal.WithLabelValues(skipUnchanged).Inc()
		return outcome{}, nil
	}
	causes, reason := r.causes(changes)
	if len(causes) == 0 {
		skipsTotal.WithLabelValues(reason).Inc()
		log.V(1).Info("Recording a change that does not roll", "reason", reason)
		return outcome{}, r.patch(ctx, obj, next, "")
	}
	return r.roll(ctx, obj, next, current, causes)
}

// causes returns the changes that roll the workload, given the flags, or the
// reason none does.
func (r *Reconciler) causes(changes map[refs.Ref]change) ([]refs.Ref, string) {
	var out []refs.Ref
	reason := skipAnnotations
	for ref, c := range changes {
		switch {
		case c == changedData,
			c == deleted && r.Opts.ReloadOnDelete,
			c == created && r.Opts.ReloadOnCreate:
			out = append(out, ref)
		case c == deleted:
			reason = skipDeleteIgnored
		case c == created:
			reason = skipCreateIgnored
		}
	}
	slices.SortFunc(out, refs.Compare)
	return out, reason
}

func (r *Reconciler) roll(ctx context.Context, obj client.Object, next record, current map[refs.Ref]trackedObj, causes []refs.Ref) (outcome, error) {
	entries := make([]digest.Entry, 0, len(current))
	for ref, t := range current {
		entries = append(entries, digest.Entry{Kind: string(ref.Kind), Name: ref.Name, Sum: t.sum})
	}
	slices.SortFunc(entries, func(a, b digest.Entry) int {
		return refs.Compare(refs.Ref{Kind: refs.Kind(a.Kind), Name: a.Name}, refs.Ref{Kind: refs.Kind(b.Kind), Name: b.Name})
	})
	sum := r.Keyed.Workload(entries)
	names := describe(causes)
	if err := r.patch(ctx, obj, next, sum); err != nil {
		if !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
			reloadsTotal.WithLabelValues(r.Kind.Name, "error").Inc()
			r.event(obj, corev1.EventTypeWarning, ReasonReloadFailed, "Reload", "Rolling after a change of %s failed: %v", names, err)
		}
		return outcome{}, err
	}
	reloadsTotal.WithLabelValues(r.Kind.Name, "success").Inc()
	r.event(obj, corev1.EventTypeNormal, ReasonReloaded, "Reload", "Rolled because %s changed", names)
	logf.FromContext(ctx).Info("Rolled workload", "changed", names, "digest", sum)
	return outcome{rolled: true}, nil
}

// describe names the changed objects for an Event, which must stay short:
// at most five names and about half the note's limit, then how many more.
func describe(causes []refs.Ref) string {
	const most, budget = 5, noteLimit / 2
	parts := make([]string, 0, most+1)
	size := 0
	for i, c := range causes {
		name := c.String()
		if i == most || (i > 0 && size+len(name) > budget) {
			parts = append(parts, fmt.Sprintf("and %d more", len(causes)-i))
			break
		}
		parts = append(parts, name)
		size += len(name) + len(", ")
	}
	return strings.Join(parts, ", ")
}

// patch writes the record and, when templateDigest is set, the pod template
// annotation that rolls the workload: one merge patch that names nothing
// else, so that no other writer's change is undone.
func (r *Reconciler) patch(ctx context.Context, obj client.Object, rec record, templateDigest string) error {
	var tmpl map[string]string
	if templateDigest != "" {
		tmpl = map[string]string{annotations.ConfigDigest: templateDigest}
	}
	body, err := json.Marshal(r.Kind.TemplatePatch(obj.GetResourceVersion(), map[string]string{annotations.Recorded: rec.encode()}, tmpl))
	if err != nil {
		return fmt.Errorf("encoding patch: %w", err)
	}
	target := r.Kind.Metadata(obj.GetNamespace(), obj.GetName())
	if err := r.Patch(ctx, target, client.RawPatch(types.MergePatchType, body), client.FieldOwner(FieldOwner)); err != nil {
		return fmt.Errorf("patching %s %s/%s: %w", r.Kind.Name, obj.GetNamespace(), obj.GetName(), err)
	}
	return nil
}

func (r *Reconciler) reportProblems(ctx context.Context, obj client.Object, problems []annotations.Problem) {
	for _, p := range problems {
		logf.FromContext(ctx).Info("Ignoring an invalid annotation value", "annotation", p.Annotation, "value", p.Value, "reason", p.Reason)
		r.event(obj, corev1.EventTypeWarning, ReasonInvalidAnnotation, "Parse", "%s", p.String())
	}
}

// noteLimit is the most bytes the API server accepts in an Event's note: it
// rejects a longer note, and the Event is lost. Five 253-character names or
// a long invalid annotation value exceed it.
const noteLimit = 1024

// event emits an Event whose note is shortened to fit noteLimit.
func (r *Reconciler) event(obj client.Object, eventtype, reason, action, format string, args ...any) {
	r.Recorder.Eventf(obj, nil, eventtype, reason, action, "%s", shorten(fmt.Sprintf(format, args...), noteLimit))
}

// shorten cuts s to at most limit bytes, at a rune boundary, marking the cut.
func shorten(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	const mark = "..."
	cut := limit - len(mark)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + mark
}

func (r *Reconciler) namespaceSelected(ctx context.Context, namespace string) (bool, error) {
	if slices.Contains(r.Opts.NamespacesToIgnore, namespace) {
		return false, nil
	}
	if r.Opts.NamespaceSelector == nil {
		return true, nil
	}
	ns := namespaceObject()
	if err := r.Get(ctx, types.NamespacedName{Name: namespace}, ns); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	return r.Opts.NamespaceSelector.Matches(labels.Set(ns.GetLabels())), nil
}
