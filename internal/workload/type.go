package workload

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Type is one type of workload ripple rolls: how to read its pod template
// and how to write to it. The word matches --ignored-workload-types.
type Type struct {
	// Kind is the API kind, e.g. "Deployment".
	Kind string
	// GroupVersion is the API group and version the type is served at.
	GroupVersion schema.GroupVersion
	// Plural is the lower-case plural used by --ignored-workload-types.
	Plural string
	// New returns an empty object of the kind.
	New func() client.Object
	// NewList returns an empty list of the kind.
	NewList func() client.ObjectList
	// Template returns the object's pod template.
	Template func(client.Object) *corev1.PodTemplateSpec
	// TemplatePath is the path of the pod template from the object's root,
	// used to build a merge patch that touches nothing else.
	TemplatePath []string
	// Strategy, when set, lets a workload of the type choose how it rolls.
	Strategy *Strategy
	// Roll writes a change so that the object's pods pick it up. Nil means
	// the template patch of PatchTemplate.
	Roll func(ctx context.Context, c client.Client, obj client.Object, ch Change) (Result, error)
	// Resume carries on a rollout that spans several reconciles (a Job
	// deleted to be recreated), and reports whether obj had one under way.
	// Nil for types that roll in one write.
	Resume func(ctx context.Context, c client.Client, obj client.Object) (Result, bool, error)
	// EnabledBy, when set, names the boolean flag that turns the type on:
	// a kind served only where a CRD is installed (Argo Rollouts) is off
	// unless asked for, as in Reloader.
	EnabledBy string
	// TemplateSource, when set, is the type of workload whose pod template
	// an object's pods may be made from instead of its own (the Deployment
	// an Argo Rollout's workloadRef names), and TemplateRef reads which.
	TemplateSource *Type
	// TemplateRef returns the name, in the object's namespace, of the
	// TemplateSource workload whose pod template the object's pods are made
	// from, or "" when they are made from its own. An error says the object
	// names a template ripple cannot read.
	TemplateRef func(client.Object) (string, error)
	// Trim, when set, cuts a cached object down in place to what ripple
	// reads of it, so that a cluster's workloads cost the informer cache
	// little memory. Nil caches whole objects: a Job is recreated from its
	// own, and a CronJob's Jobs are made from its template.
	Trim func(client.Object)
	// Held, when set, says why a rollout of the object now would only be
	// recorded, under the workload's strategy (a completed Job, a suspended
	// CronJob); "" when it would roll. Roll and ripple explain both ask it.
	Held func(obj client.Object, strategy string) string
	// Selector, when set, reads the label selector of the object's pods,
	// for the refresh strategy; a type without one always rolls.
	Selector func(client.Object) *metav1.LabelSelector
	// Available, when set, reports whether the object's last rollout is
	// done: its controller saw the current generation and every replica is
	// updated and available (under OnDelete, only the first; with a
	// StatefulSet's partition, the replicas from the partition up). Paced
	// rollouts (--max-rollouts-in-progress) wait for it; a type without it
	// never holds a wave up.
	Available func(client.Object) bool
	// Pause is how the type holds rollouts during a pause period.
	Pause Pause
	// OwnerPaused, for a PauseSpec type, reports whether the object's spec
	// is paused: a pause ripple did not start is left to its owner.
	OwnerPaused func(client.Object) bool
	// RestartedAt, when set, reads when the object was last restarted
	// other than through its pod template (an Argo Rollout's
	// spec.restartAt), for the minimum interval between rollouts.
	RestartedAt func(client.Object) (time.Time, bool)
}

// Strategy is a per-workload choice of how a type rolls: an annotation on
// the workload's metadata, else the flag's value.
type Strategy struct {
	// Annotation names the annotation that chooses.
	Annotation string
	// Values are the strategies; the first is the default without a flag.
	Values []string
	// Flag names the flag that sets the default of every workload of the
	// type; empty when there is none.
	Flag string
	// Untemplated are the Values under which a rollout leaves the pod
	// template alone (a CronJob's Job run, a Rollout's restart): the
	// reload strategy, which marks the template, does not apply to them.
	Untemplated []string
}

// Change is one rollout ripple writes to a workload.
type Change struct {
	// ID is the same for every attempt at writing this change, so that
	// what a rollout creates is created once.
	ID string
	// Record is the value of annotations.Recorded after the rollout.
	Record string
	// Stamp is the value of annotations.ConfigDigest that names the config
	// rolled out.
	Stamp string
	// Cause names the changed objects, for what a rollout creates.
	Cause string
	// Strategy is the workload's strategy, one of its type's Values, or
	// empty for types without a choice.
	Strategy string
	// Now is the API server's time.
	Now time.Time
	// Env, under the env-vars strategy, are the variables that carry the
	// change instead of the Stamp annotation.
	Env []EnvVar
	// Pause, when set, starts a pause period with this rollout, or ends the
	// hold it rolls at the end of.
	Pause *PauseMark
}

// Result is what a rollout did besides writing the record.
type Result struct {
	// Held says why the change does not reach the pods now (a suspended
	// CronJob, a completed Job). The record was written.
	Held string
	// Wait, when set, asks to write the change again after it: nothing was
	// written (a CronJob whose Job is still running under Forbid).
	Wait time.Duration
	// Created is the object the rollout created, if any, and Cause the
	// change it was created for.
	Created client.Object
	Cause   string
	// Owed is the object a recreation deleted and could not create yet:
	// the old one is gone, so the caller keeps it and creates it later.
	Owed client.Object
	// Patched says the rollout wrote the workload's version it was given,
	// which its patch named as the precondition.
	Patched bool
}

// Rollout writes ch to obj with the type's Roll.
func (t Type) Rollout(ctx context.Context, c client.Client, obj client.Object, ch Change) (Result, error) {
	if t.Roll != nil {
		return t.Roll(ctx, c, obj, ch)
	}
	err := t.Stamp(ctx, c, obj, ch)
	return Result{Patched: err == nil}, err
}

// Write patches annotations of the workload's metadata (the record, and a
// refresh's stamp) in one merge patch that names nothing else, so that no
// other writer's change is undone.
func (t Type) Write(ctx context.Context, c client.Client, obj client.Object, meta map[string]string) error {
	return t.patch(ctx, c, obj, t.TemplatePatch(obj.GetResourceVersion(), meta, nil))
}

// WriteEndingHold writes as Write does, and removes the pause annotation of
// a hold in the same merge patch.
func (t Type) WriteEndingHold(ctx context.Context, c client.Client, obj client.Object, meta map[string]string, pausedAt string) error {
	body := map[string]any{pausedAt: nil}
	for k, v := range meta {
		body[k] = v
	}
	return t.patch(ctx, c, obj, map[string]any{"metadata": map[string]any{
		"resourceVersion": obj.GetResourceVersion(),
		"annotations":     body,
	}})
}

func (t Type) patch(ctx context.Context, c client.Client, obj client.Object, body map[string]any) error {
	raw, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("encoding patch: %w", err)
	}
	target := t.Metadata(obj.GetNamespace(), obj.GetName())
	if err := c.Patch(ctx, target, client.RawPatch(types.MergePatchType, raw), client.FieldOwner(FieldOwner)); err != nil {
		return fmt.Errorf("patching %s %s/%s: %w", t.Kind, obj.GetNamespace(), obj.GetName(), err)
	}
	return nil
}

// FieldOwner is the field manager of every write ripple makes.
const FieldOwner = "ripple"

// All lists every type ripple can roll, in a fixed order.
var All []Type

func register(t Type) { All = append(All, t) }

// ByPlural finds a type by its plural, case-insensitively.
func ByPlural(plural string) (Type, bool) {
	for _, t := range All {
		if strings.EqualFold(t.Plural, plural) {
			return t, true
		}
	}
	return Type{}, false
}

// Metadata returns the named object in its metadata-only form: a patch
// sent through it asks the API server for the object's metadata back, not
// the whole object (and ripple's workload client reads only the status).
func (t Type) Metadata(namespace, name string) *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(t.GroupVersion.WithKind(t.Kind))
	m.SetNamespace(namespace)
	m.SetName(name)
	return m
}

// TemplatePatch returns the body of a merge patch that sets annotations on
// the pod template and metadataAnnotations on the object's metadata.
// resourceVersion makes the patch fail on a conflict rather than act on a
// stale view.
func (t Type) TemplatePatch(resourceVersion string, metadataAnnotations, templateAnnotations map[string]string) map[string]any {
	root := map[string]any{}
	meta := map[string]any{"resourceVersion": resourceVersion}
	if len(metadataAnnotations) > 0 {
		meta["annotations"] = metadataAnnotations
	}
	root["metadata"] = meta
	if len(templateAnnotations) > 0 {
		node := root
		for _, p := range t.TemplatePath {
			next := map[string]any{}
			node[p] = next
			node = next
		}
		node["metadata"] = map[string]any{"annotations": templateAnnotations}
	}
	return root
}

// newType builds a Type from the object and list types and the accessor of
// the pod template, so that each type's file states only what differs.
func newType[T any, L any, PT interface {
	*T
	client.Object
}, PL interface {
	*L
	client.ObjectList
}](gv schema.GroupVersion, kind, plural string, template func(PT) *corev1.PodTemplateSpec) Type {
	return Type{
		Kind:         kind,
		GroupVersion: gv,
		Plural:       plural,
		New:          func() client.Object { return PT(new(T)) },
		NewList:      func() client.ObjectList { return PL(new(L)) },
		Template: func(o client.Object) *corev1.PodTemplateSpec {
			if t, ok := o.(PT); ok {
				return template(t)
			}
			return nil
		},
		TemplatePath: []string{"spec", "template"},
	}
}
