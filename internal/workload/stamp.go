package workload

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ripple-controller/ripple/internal/annotations"
	"github.com/ripple-controller/ripple/internal/refs"
)

// The reload strategies: how a rollout marks a pod template so that
// Kubernetes rolls the workload. Reloader's names.
const (
	// StampAnnotations writes annotations.ConfigDigest on the pod template.
	StampAnnotations = "annotations"
	// StampEnvVars sets Reloader's STAKATER_<NAME>_<KIND> variable on the
	// container that uses each changed object, as Reloader's default does,
	// so that a template Reloader managed is taken over without churn.
	StampEnvVars = "env-vars"
	// Refresh stamps the workload's running pods instead of rolling it when
	// it can (see annotations.Refreshed), and stamps annotations otherwise.
	Refresh = "refresh"
)

// ReloadStrategies lists the reload strategies; the first is ripple's default.
var ReloadStrategies = []string{StampAnnotations, StampEnvVars, Refresh}

// EnvVar is one variable a rollout sets under StampEnvVars.
type EnvVar struct {
	Container, Name, Value string
}

// EnvVarPrefix starts the name of every variable of the env-vars strategy.
const EnvVarPrefix = "STAKATER_"

// EnvVarName is the variable Reloader sets for a changed object:
// STAKATER_, the name upper-cased with each run of other characters than
// letters and digits made one underscore (none leading), then the kind.
func EnvVarName(ref refs.Ref) string {
	var b strings.Builder
	b.WriteString(EnvVarPrefix)
	valid := false
	for _, ch := range []byte(strings.ToUpper(ref.Name)) {
		if (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') {
			b.WriteByte(ch)
			valid = true
			continue
		}
		if valid {
			b.WriteByte('_')
		}
		valid = false
	}
	b.WriteString("_" + strings.ToUpper(string(ref.Kind)))
	return b.String()
}

// Pause is how a type holds rollouts during a pause period.
type Pause int

const (
	// NoPause means the type has no pause period.
	NoPause Pause = iota
	// PauseHold means ripple holds the changes and rolls once when the period
	// ends; the workload itself cannot be paused.
	PauseHold
	// PauseSpec means the workload's spec.paused holds the rollout, as Reloader
	// does for Deployments: ripple writes changes as they come and the
	// workload rolls once, with all of them, when ripple resumes it.
	PauseSpec
)

// PauseMark is the pause annotation a rollout writes: At, when a pause
// begins, or its removal (At empty) when the rollout ends a hold.
type PauseMark struct {
	Annotation, At string
}

// Stamp writes a change to the pod template through the change's reload
// strategy, with the record, and the start of a pause when asked, in one
// patch under the object's resourceVersion.
func (t Type) Stamp(ctx context.Context, c client.Client, obj client.Object, ch Change) error {
	if len(ch.Env) > 0 {
		return t.stampEnv(ctx, c, obj, ch)
	}
	body := t.TemplatePatch(obj.GetResourceVersion(), map[string]string{annotations.Recorded: ch.Record},
		map[string]string{annotations.ConfigDigest: ch.Stamp})
	if p := ch.Pause; p != nil {
		meta := body["metadata"].(map[string]any)
		ann := meta["annotations"].(map[string]string)
		out := map[string]any{p.Annotation: nil}
		for k, v := range ann {
			out[k] = v
		}
		if p.At != "" {
			out[p.Annotation] = p.At
		}
		meta["annotations"] = out
		if p.At != "" && t.Pause == PauseSpec {
			body["spec"].(map[string]any)["paused"] = true
		}
	}
	return t.patch(ctx, c, obj, body)
}

// jsonOp is one operation of a JSON patch (RFC 6902).
type jsonOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value"`
}

// stampEnv writes the change's variables with a JSON patch: a merge patch
// would replace the whole list of containers, and custom resources take no
// strategic merge patch. The indices come from the cached object, and the
// patch's first operation tests its resourceVersion, so that it applies to
// that version only.
func (t Type) stampEnv(ctx context.Context, c client.Client, obj client.Object, ch Change) error {
	tmpl := t.Template(obj)
	if tmpl == nil {
		return fmt.Errorf("%s %s/%s has no pod template", t.Kind, obj.GetNamespace(), obj.GetName())
	}
	meta := map[string]string{annotations.Recorded: ch.Record}
	p := ch.Pause
	if p != nil && p.At != "" {
		meta[p.Annotation] = p.At
	}
	ops := append([]jsonOp{{Op: "test", Path: "/metadata/resourceVersion", Value: obj.GetResourceVersion()}},
		annotationOps(obj.GetAnnotations(), meta)...)
	switch {
	case p != nil && p.At == "":
		ops = append(ops, jsonOp{Op: "remove", Path: "/metadata/annotations/" + pointerEscape(p.Annotation)})
	case p != nil && t.Pause == PauseSpec:
		ops = append(ops, jsonOp{Op: "add", Path: "/spec/paused", Value: true})
	}
	env, err := envOps(t.TemplatePath, tmpl, ch.Env)
	if err != nil {
		return fmt.Errorf("%s %s/%s: %w", t.Kind, obj.GetNamespace(), obj.GetName(), err)
	}
	raw, err := json.Marshal(append(ops, env...))
	if err != nil {
		return fmt.Errorf("encoding patch: %w", err)
	}
	target := t.Metadata(obj.GetNamespace(), obj.GetName())
	if err := c.Patch(ctx, target, client.RawPatch(types.JSONPatchType, raw), client.FieldOwner(FieldOwner)); err != nil {
		if staleTest(err) {
			err = apierrors.NewConflict(schema.GroupResource{Group: t.GroupVersion.Group, Resource: t.Plural}, obj.GetName(), err)
		}
		return fmt.Errorf("patching %s %s/%s: %w", t.Kind, obj.GetNamespace(), obj.GetName(), err)
	}
	return nil
}

// staleTest reports whether the API server refused a JSON patch because
// its first operation, the test of the resourceVersion, failed: the object
// changed since ripple read it, and nothing after the test was applied.
// The server answers a patch that does not apply with a 422, no causes and
// the generic message of that code (the patch's own error is not passed
// on); the 422 of an object that fails validation lists the fields at
// fault, and an admission webhook's says its own words, which retried as a
// conflict, every 50 ms and without an Event, were never reported.
func staleTest(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return false
	}
	st := status.Status()
	return st.Code == http.StatusUnprocessableEntity && (st.Details == nil || len(st.Details.Causes) == 0) &&
		st.Message == patchNotApplied
}

// patchNotApplied is the message of the API server's answer to a JSON
// patch that does not apply (apierrors.NewGenericServerResponse).
const patchNotApplied = "the server rejected our request due to an error in our request"

func annotationOps(existing, set map[string]string) []jsonOp {
	if existing == nil {
		return []jsonOp{{Op: "add", Path: "/metadata/annotations", Value: set}}
	}
	out := make([]jsonOp, 0, len(set))
	for k, v := range set {
		out = append(out, jsonOp{Op: "add", Path: "/metadata/annotations/" + pointerEscape(k), Value: v})
	}
	return out
}

// envOps sets the variables on the template's containers (withEnv), one
// operation per variable: an entry ripple does not set is never written
// back, so no field of it this build of ripple does not know is lost.
func envOps(templatePath []string, tmpl *corev1.PodTemplateSpec, vars []EnvVar) ([]jsonOp, error) {
	envs, err := withEnv(tmpl.Spec.Containers, vars)
	if err != nil {
		return nil, err
	}
	base := "/" + strings.Join(templatePath, "/") + "/spec/containers/"
	var out []jsonOp
	for _, i := range slices.Sorted(maps.Keys(envs)) {
		path := fmt.Sprintf("%s%d/env", base, i)
		was := tmpl.Spec.Containers[i].Env
		if was == nil {
			out = append(out, jsonOp{Op: "add", Path: path, Value: envs[i]})
			continue
		}
		for j, e := range envs[i] {
			switch {
			case j >= len(was):
				out = append(out, jsonOp{Op: "add", Path: path + "/-", Value: e})
			case e != was[j]:
				out = append(out, jsonOp{Op: "replace", Path: fmt.Sprintf("%s/%d", path, j), Value: e})
			}
		}
	}
	return out, nil
}

// withEnv returns the env list of each container that vars change, by its
// index: a variable is replaced on its container, else wherever it is
// (taken over from Reloader, never doubled), else added to its container.
// A variable is set once where two of vars land on it. Entries are only
// replaced or appended, never moved.
func withEnv(containers []corev1.Container, vars []EnvVar) (map[int][]corev1.EnvVar, error) {
	envs := map[int][]corev1.EnvVar{}
	envOf := func(i int) []corev1.EnvVar {
		if e, ok := envs[i]; ok {
			return e
		}
		return containers[i].Env
	}
	own := func(i int) []corev1.EnvVar {
		if _, ok := envs[i]; !ok {
			envs[i] = slices.Clone(containers[i].Env)
		}
		return envs[i]
	}
	for _, v := range vars {
		entry := corev1.EnvVar{Name: v.Name, Value: v.Value}
		i := containerIndex(containers, v.Container)
		j := -1
		if i >= 0 {
			j = envIndex(envOf(i), v.Name)
		}
		for k := 0; j < 0 && k < len(containers); k++ {
			if kj := envIndex(envOf(k), v.Name); kj >= 0 {
				i, j = k, kj
			}
		}
		switch {
		case j >= 0:
			own(i)[j] = entry
		case i < 0:
			return nil, fmt.Errorf("no container %q to set %s on", v.Container, v.Name)
		default:
			envs[i] = append(own(i), entry)
		}
	}
	return envs, nil
}

func findEnv(containers []corev1.Container, name string) (int, int, bool) {
	for i := range containers {
		if j := envIndex(containers[i].Env, name); j >= 0 {
			return i, j, true
		}
	}
	return 0, 0, false
}

func envIndex(env []corev1.EnvVar, name string) int {
	for j := range env {
		if env[j].Name == name {
			return j
		}
	}
	return -1
}

func containerIndex(containers []corev1.Container, name string) int {
	for i := range containers {
		if containers[i].Name == name {
			return i
		}
	}
	return -1
}

// EnvValue returns the value of the variable name on any container of the
// template, and whether it is set.
func EnvValue(tmpl *corev1.PodTemplateSpec, name string) (string, bool) {
	if i, j, ok := findEnv(tmpl.Spec.Containers, name); ok {
		return tmpl.Spec.Containers[i].Env[j].Value, true
	}
	return "", false
}

func pointerEscape(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

// Hold starts a pause of a type that cannot be paused: only the annotation
// that says since when, under the resourceVersion. The record stays as it
// was, so the change is still to roll when the pause ends, whoever ends it.
func (t Type) Hold(ctx context.Context, c client.Client, obj client.Object, p PauseMark) error {
	return t.patch(ctx, c, obj, t.TemplatePatch(obj.GetResourceVersion(), map[string]string{p.Annotation: p.At}, nil))
}

// EndPause removes the pause annotation and, for a type whose spec holds
// the rollout, resumes it: the workload then rolls with every change made
// during the pause.
func (t Type) EndPause(ctx context.Context, c client.Client, obj client.Object, annotation string) error {
	body := map[string]any{"metadata": map[string]any{
		"resourceVersion": obj.GetResourceVersion(),
		"annotations":     map[string]any{annotation: nil},
	}}
	if t.Pause == PauseSpec {
		body["spec"] = map[string]any{"paused": false}
	}
	return t.patch(ctx, c, obj, body)
}
