package controller

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ripple-controller/ripple/internal/annotations"
	"github.com/ripple-controller/ripple/internal/options"
	"github.com/ripple-controller/ripple/internal/refs"
	"github.com/ripple-controller/ripple/internal/workload"
)

// Explainer answers `ripple explain`: which workloads a change of a
// ConfigMap or Secret rolls, or which objects roll a workload, and why. It
// decides with the controller's own parts (the view of each workload,
// Policy.Tracks, the scoping of Opts), reading the API server through
// Reader. It reads ConfigMaps and Secrets as metadata only, so it never
// reads a Secret's data.
type Explainer struct {
	Reader client.Reader
	Opts   *options.Options
}

// Explanation is explain's answer about one object.
type Explanation struct {
	// Subject is what was asked about: "ConfigMap demo/app".
	Subject string
	// Notes are facts about the subject that hold for every line.
	Notes []string
	// Column names what the lines are: WORKLOAD or OBJECT.
	Column string
	// Lines are the related workloads or objects, sorted by name.
	Lines []Line
}

// Line is one workload or object, and whether a change rolls it.
type Line struct {
	Name  string
	Rolls bool
	Why   string
}

// Object explains which workloads in the namespace a change of the
// ConfigMap or Secret rolls: those that use it or whose annotations name
// it. A missing object is explained as if it were created.
func (e *Explainer) Object(ctx context.Context, kind refs.Kind, ns, name string) (*Explanation, error) {
	x := &Explanation{Subject: fmt.Sprintf("%s %s/%s", kind, ns, name), Column: "WORKLOAD"}
	obj, err := e.configMeta(ctx, kind, ns, name)
	if err != nil {
		return nil, err
	}
	blocked, err := e.scope(ctx, ns, kind, obj)
	if err != nil {
		return nil, err
	}
	note, missingBlocks := e.missing(obj)
	if note != "" {
		x.Notes = append(x.Notes, note)
	}
	x.Notes = append(x.Notes, blocked...)
	ref := refs.Ref{Kind: kind, Name: name}
	for _, typ := range e.Opts.Workloads() {
		list := typ.NewList()
		if err := e.Reader.List(ctx, list, client.InNamespace(ns)); meta.IsNoMatchError(err) {
			continue
		} else if err != nil {
			return nil, fmt.Errorf("listing %s: %w", typ.Plural, err)
		}
		vs := e.views(typ)
		err := meta.EachListItem(list, func(o runtime.Object) error {
			w := o.(client.Object)
			v := vs.compute(w)
			// A CronJob's Job (no view of its own: its CronJob is listed)
			// and a workload being deleted are never rolled.
			if v == nil || w.GetDeletionTimestamp() != nil {
				return nil
			}
			s, err := e.subjectOf(ctx, vs, w, v)
			if err != nil {
				return err
			}
			d := e.decide(vs, s, ref, obj)
			if !d.listed {
				return nil
			}
			if missingBlocks && d.rolls {
				d = recreation(d, w, ref)
			}
			x.Lines = append(x.Lines, Line{Name: typ.Kind + "/" + w.GetName(), Rolls: d.rolls && len(blocked) == 0, Why: d.why})
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	slices.SortFunc(x.Lines, func(a, b Line) int { return strings.Compare(a.Name, b.Name) })
	return x, nil
}

// Workload explains which ConfigMaps and Secrets roll the workload: those
// its pod spec uses and those its annotations name, existing or not.
func (e *Explainer) Workload(ctx context.Context, typ workload.Type, ns, name string) (*Explanation, error) {
	w := typ.New()
	if err := e.Reader.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, w); err != nil {
		return nil, fmt.Errorf("reading %s %s/%s: %w", typ.Kind, ns, name, err)
	}
	x := &Explanation{Subject: fmt.Sprintf("%s %s/%s", typ.Kind, ns, name), Column: "OBJECT"}
	vs := e.views(typ)
	v := vs.compute(w)
	switch {
	case v == nil:
		x.Notes = []string{"Not rolled: its CronJob owns it, and ripple runs the CronJob instead; explain the CronJob."}
		return x, nil
	case w.GetDeletionTimestamp() != nil:
		x.Notes = []string{"Not rolled: it is being deleted."}
		return x, nil
	}
	blocked, err := e.scope(ctx, ns, "", nil)
	if err != nil {
		return nil, err
	}
	x.Notes = append(append(blocked, workloadNotes(typ, v)...), problemNotes(v.policy.Problems)...)
	s, err := e.subjectOf(ctx, vs, w, v)
	if err != nil || s.unreadable != "" {
		x.Notes = append(x.Notes, "Not rolled: "+s.unreadable+".")
		return x, err
	}
	candidates, err := e.named(ctx, ns, v, s.tmpl)
	if err != nil {
		return nil, err
	}
	for _, ref := range candidates {
		obj, err := e.configMeta(ctx, ref.Kind, ns, ref.Name)
		if err != nil {
			return nil, err
		}
		d := e.decide(vs, s, ref, obj)
		objBlocked, err := e.scope(ctx, ns, ref.Kind, obj)
		if err != nil {
			return nil, err
		}
		objBlocked = objBlocked[len(blocked):]
		switch note, blocks := e.missing(obj); {
		case blocks && d.rolls:
			d = recreation(d, w, ref)
		case note != "":
			d.why += "; " + strings.TrimSuffix(note, ".")
		}
		why := d.why
		for _, b := range objBlocked {
			why += "; " + strings.TrimSuffix(b, ".")
		}
		x.Lines = append(x.Lines, Line{Name: ref.String(), Rolls: d.rolls && len(blocked) == 0 && len(objBlocked) == 0, Why: why})
	}
	return x, nil
}

// decision is what ripple decides about one object for one workload.
type decision struct {
	// listed says the workload uses the object or its annotations name it.
	listed, rolls bool
	why           string
}

// subject is one workload as explain reads it, once for all the objects
// it is asked about: its view, and the pod template its pods are made
// from with the keys it reads, as Reconcile's borrowed view has them.
// unreadable says why there is no template.
type subject struct {
	w          client.Object
	v          *view
	tmpl       *corev1.PodTemplateSpec
	usedKeys   map[refs.Ref][]string
	unreadable string
}

func (e *Explainer) subjectOf(ctx context.Context, vs *views, w client.Object, v *view) (subject, error) {
	tmpl, unreadable, err := e.template(ctx, vs, w, v)
	s := subject{w: w, v: v, tmpl: tmpl, unreadable: unreadable}
	if tmpl != nil {
		_, s.usedKeys = references(&tmpl.Spec)
	}
	return s, err
}

// decide reads what Reconcile reads: whether the workload's pod template
// uses the object, Policy.Tracks of its view on the object's annotations,
// and whether its type would hold the rollout. obj is nil when the object
// does not exist.
func (e *Explainer) decide(vs *views, s subject, ref refs.Ref, obj client.Object) decision {
	w, v, tmpl := s.w, s.v, s.tmpl
	kp := v.policy.For(ref.Kind)
	named := kp.Reload.Match(ref.Name) || kp.Exclude.Has(ref.Name)
	if s.unreadable != "" {
		return decision{listed: named, why: "not rolled: " + s.unreadable}
	}
	var objAnnotations map[string]string
	if obj != nil {
		objAnnotations = obj.GetAnnotations()
	}
	uses := refs.Uses(&tmpl.Spec, ref)
	d := decision{listed: named || len(uses) > 0}
	var verdict annotations.Verdict
	d.rolls, verdict = v.policy.Tracks(ref.Kind, ref.Name, objAnnotations, len(uses) > 0)
	d.why = fmt.Sprintf("%s: %s", verdict, e.Opts.Keys.Why(verdict, ref.Kind, w.GetAnnotations(), tmpl.Annotations, e.Opts.AutoReloadAll))
	if len(uses) > 0 {
		d.why += "; uses it: " + strings.Join(uses, ", ")
	}
	if keys := s.usedKeys[ref]; d.rolls && v.precise && keys != nil {
		d.why += "; only keys " + strings.Join(keys, ", ")
	}
	for _, p := range v.policy.ObjectProblems(ref.Kind, ref.Name, objAnnotations, len(uses) > 0) {
		d.why += "; " + p.String()
	}
	if d.rolls && vs.typ.Held != nil {
		if why := vs.typ.Held(w, v.strategy); why != "" {
			d.rolls = false
			d.why += "; recorded, not rolled: " + why
		}
	}
	return d
}

// template returns the pod template the workload's pods are made from: its
// own, or that of the workload it borrows one from. unreadable says why
// ripple cannot read it, and then waits or skips the workload.
func (e *Explainer) template(ctx context.Context, vs *views, w client.Object, v *view) (tmpl *corev1.PodTemplateSpec, unreadable string, err error) {
	switch {
	case v.unfollowable != "":
		return nil, "cannot follow its pod template: " + v.unfollowable, nil
	case v.templateRef == "":
		return vs.typ.Template(w), "", nil
	}
	src := vs.typ.TemplateSource.New()
	err = e.Reader.Get(ctx, types.NamespacedName{Namespace: w.GetNamespace(), Name: v.templateRef}, src)
	switch {
	case apierrors.IsNotFound(err):
		return nil, fmt.Sprintf("the %s %s whose pod template it uses does not exist", vs.typ.TemplateSource.Kind, v.templateRef), nil
	case err != nil:
		return nil, "", fmt.Errorf("reading the %s whose pod template %s uses: %w", vs.typ.TemplateSource.Kind, w.GetName(), err)
	}
	return vs.typ.TemplateSource.Template(src), "", nil
}

// missing says what the change of an object that does not exist, its
// creation, does, and whether that blocks every rollout.
func (e *Explainer) missing(obj client.Object) (note string, blocks bool) {
	switch {
	case obj != nil:
		return "", false
	case e.Opts.ReloadOnCreate:
		return "It does not exist: this is what its creation would do (--reload-on-create).", false
	}
	return "It does not exist: without --reload-on-create its creation is only recorded, but for a workload whose record kept it since its deletion, which it rolls unless it brings back the data the pods run.", true
}

// recreation decides on an object that does not exist, whose creation
// only records it without --reload-on-create: unless the workload's record
// kept its entry since its deletion (kept). Then its recreation rolls the
// workload, but with the data the pods run: the keys a precise workload
// reads, and any data when the entry cannot be compared (unknownEntry, a
// record under an unknown key).
func recreation(d decision, w client.Object, ref refs.Ref) decision {
	rec, err := decodeRecord(w.GetAnnotations()[annotations.Recorded])
	if _, ok := rec.objects[ref]; err != nil || !ok || isFolded(rec.objects) {
		d.rolls = false
		d.why += "; it does not exist, and its creation is only recorded"
		return d
	}
	if rec.objects[ref] == unknownEntry {
		d.why += "; it does not exist: its record keeps it since its deletion under a key ripple no longer uses, so its recreation rolls it whatever its data"
		return d
	}
	d.why += "; it does not exist: its record keeps it since its deletion, so its recreation rolls it unless it brings back the data the pods run"
	return d
}

// named returns what a workload may track: the objects its pod spec uses,
// those its reload lists name, and those their patterns match, in the
// namespace or in the workload's record, which keeps a deleted one
// (kept), sorted.
func (e *Explainer) named(ctx context.Context, ns string, v *view, tmpl *corev1.PodTemplateSpec) ([]refs.Ref, error) {
	out := refs.FromPodSpec(&tmpl.Spec)
	for _, kind := range []refs.Kind{refs.ConfigMap, refs.Secret} {
		list := v.policy.For(kind).Reload
		for _, name := range list.Literals() {
			out = append(out, refs.Ref{Kind: kind, Name: name})
		}
		if !list.HasPatterns() {
			continue
		}
		objs := configList(kind)
		if err := e.Reader.List(ctx, objs, client.InNamespace(ns)); err != nil {
			return nil, fmt.Errorf("listing %ss: %w", kind, err)
		}
		for _, o := range objs.Items {
			if list.Match(o.Name) {
				out = append(out, refs.Ref{Kind: kind, Name: o.Name})
			}
		}
		for ref := range v.record.objects {
			if ref.Kind == kind && !isBucket(ref) && list.Match(ref.Name) {
				out = append(out, ref)
			}
		}
	}
	out = slices.DeleteFunc(out, func(r refs.Ref) bool { return r.Kind == refs.SecretProviderClass })
	slices.SortFunc(out, refs.Compare)
	return slices.Compact(out), nil
}

// configMeta reads the metadata of a ConfigMap or Secret; nil when it does
// not exist.
func (e *Explainer) configMeta(ctx context.Context, kind refs.Kind, ns, name string) (client.Object, error) {
	obj := configObject(kind)
	err := e.Reader.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, obj)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("reading %s %s/%s: %w", kind, ns, name, err)
	}
	return obj, nil
}

// scope says why nothing in the namespace rolls, and, for a kind, why no
// change of the object (nil when missing) rolls anything: the flags that
// scope ripple, as the controller applies them.
func (e *Explainer) scope(ctx context.Context, ns string, kind refs.Kind, obj client.Object) ([]string, error) {
	o := e.Opts
	var out []string
	switch {
	case o.DryRun:
		out = append(out, "Not rolled: under --dry-run ripple records a WouldReload Event instead.")
	case o.WebhookURL != "":
		out = append(out, "Not rolled: with --webhook-url ripple posts the change to the webhook instead.")
	}
	switch {
	case len(o.Namespaces) > 0 && !slices.Contains(o.Namespaces, ns):
		out = append(out, fmt.Sprintf("Not rolled: ripple watches only the namespaces %s (--namespaces).", strings.Join(o.Namespaces, ", ")))
	case slices.Contains(o.NamespacesToIgnore, ns):
		out = append(out, "Not rolled: --namespaces-to-ignore lists the namespace.")
	case o.NamespaceSelector != nil:
		nsObj := namespaceObject()
		if err := e.Reader.Get(ctx, types.NamespacedName{Name: ns}, nsObj); err != nil {
			return nil, fmt.Errorf("reading namespace %s: %w", ns, err)
		}
		if !o.NamespaceSelector.Matches(labels.Set(nsObj.GetLabels())) {
			out = append(out, fmt.Sprintf("Not rolled: the namespace's labels do not match --namespace-selector=%s.", o.NamespaceSelector))
		}
	}
	if kind == "" {
		return out, nil
	}
	if kindIgnored(o, kind) {
		out = append(out, fmt.Sprintf("Not rolled: --resources-to-ignore ignores %ss.", kind))
	}
	if obj != nil && o.ResourceSelector != nil && !o.ResourceSelector.Matches(labels.Set(obj.GetLabels())) {
		out = append(out, fmt.Sprintf("Not rolled: its labels do not match --resource-label-selector=%s.", o.ResourceSelector))
	}
	return out, nil
}

func (e *Explainer) views(typ workload.Type) *views {
	return newViews(typ, e.Opts)
}

// workloadNotes says how the workload rolls, as its view reads it.
func workloadNotes(typ workload.Type, v *view) []string {
	if !v.policy.OptedIn() {
		return []string{"No annotation opts it in: no change rolls it."}
	}
	how := "Rolls by the " + v.reloadStrategy + " strategy"
	switch st := typ.Strategy; {
	case v.templateRef != "":
		how = fmt.Sprintf("Rolls by a restart, since its pods are made from %s %s's pod template", typ.TemplateSource.Kind, v.templateRef)
	case st != nil && slices.Contains(st.Untemplated, v.strategy):
		how = fmt.Sprintf("Rolls by the %s strategy of %s, which leaves its pod template alone", v.strategy, st.Annotation)
	}
	if v.pausePeriod > 0 {
		// A change starts the pause; the rollout comes at its end.
		how += fmt.Sprintf(", once a pause of %s that a change starts ends, with every change made meanwhile", v.pausePeriod)
	}
	notes := []string{how + "."}
	return notes
}

func problemNotes(problems []annotations.Problem) []string {
	var out []string
	for _, p := range problems {
		out = append(out, "Invalid: "+p.String()+".")
	}
	return out
}

// Write prints the explanation as a table under its subject and notes.
func (x *Explanation) Write(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, x.Subject)
	for _, n := range x.Notes {
		fmt.Fprintln(tw, "  "+n)
	}
	if len(x.Lines) == 0 {
		fmt.Fprintf(tw, "No %s is related to it.\n", strings.ToLower(x.Column))
		return tw.Flush()
	}
	fmt.Fprintf(tw, "%s\tROLLS\tWHY\n", x.Column)
	for _, l := range x.Lines {
		rolls := "no"
		if l.Rolls {
			rolls = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", l.Name, rolls, l.Why)
	}
	return tw.Flush()
}
