package controller

import (
	"regexp"
	"slices"
	"strings"

	"github.com/ripple-controller/ripple/internal/refs"
	"github.com/ripple-controller/ripple/internal/workload"
)

// The env-vars strategy. Each changed object sets Reloader's variable for
// it on the container that uses it, and every variable ripple set before
// takes the same value: the workload's stamp, as the annotation strategy
// writes it (the key, the time, the keyed digest of all the config it
// tracks). A variable per changed object keeps Reloader's template; one
// value for all keeps the evidence of what the pods run whole, as the
// annotation does, even for objects that never changed and so have no
// variable; and a guess of a Secret's value cannot be tested against it.

// maxChangedVars is the most changed objects a rollout gives a variable
// each; a rollout that names more sets ripple's variables alone.
const maxChangedVars = 32

// envVars returns the variables a rollout with stamp st sets: one for each
// changed object, and each variable of the template that ripple wrote.
//
// A rollout from the stamp alone, to recover a change missed while the
// record was lost (recover) or since a record copied with the workload
// (copied), names all the config the workload tracks, not what changed
// (unknownChanges); and a record under an unknown key
// rolls for every object written since it (foreignKey). A variable for
// each would add thousands to a container under a reload list that matches
// thousands of objects, past the operations the API server takes in one
// patch. Such a rollout sets ripple's variables alone, all of them, which
// is all a rollout must change; with none, there are no variables and the
// rollout writes the annotation stamp, which is where the stamp that
// recover read was.
func (r *Reconciler) envVars(v state, changed []refs.Ref, st stamp) []workload.EnvVar {
	value := st.encode()
	var out []workload.EnvVar
	has := func(container, name string) bool {
		return slices.ContainsFunc(out, func(e workload.EnvVar) bool { return e.Name == name && (container == "" || e.Container == container) })
	}
	if v.unknownChanges || len(changed) > maxChangedVars {
		changed = nil
	}
	for _, ref := range changed {
		name := workload.EnvVarName(ref)
		if container := refs.UsedBy(&v.tmpl.Spec, ref); container != "" && !has("", name) {
			out = append(out, workload.EnvVar{Container: container, Name: name, Value: value})
		}
	}
	// Each container's copy of a variable is set: Reloader's SHA-1 left on
	// a second container would still let a reader test guesses.
	secrets := reloaderSecretVars(v)
	for _, c := range v.tmpl.Spec.Containers {
		for _, e := range c.Env {
			if _, ours := decodeEnvStamp(e.Name, e.Value); (ours || secrets[e.Name] && reloaderSHA1.MatchString(e.Value)) && !has(c.Name, e.Name) {
				out = append(out, workload.EnvVar{Container: c.Name, Name: e.Name, Value: value})
			}
		}
	}
	return out
}

// reloaderSHA1 is the value Reloader gives its variables: the hex SHA-1 of
// the object's data. A variable of that name the user set to another value
// is theirs, and left alone.
var reloaderSHA1 = regexp.MustCompile(`^[0-9a-f]{40}$`)

// reloaderSecretVars names the variables Reloader would have set for the
// Secrets the workload tracks. Reloader's value is a plain SHA-1 of the
// Secret's data, against which anyone who can read the workload can test
// guesses of it: a rollout, which restarts the pods anyway, gives each the
// stamp too, as if its Secret had changed.
func reloaderSecretVars(v state) map[string]bool {
	out := map[string]bool{}
	for ref := range v.current {
		if ref.Kind == refs.Secret {
			out[workload.EnvVarName(ref)] = true
		}
	}
	return out
}

// rippleEnvStamp is the form of the value ripple gives its variables: a
// key's ID, an API server second and a keyed digest (stamp, digest.Keyed).
// A variable under Reloader's prefix that the user set to anything else,
// such as STAKATER_REDIS_ADDR=redis:6379:0, is theirs.
var rippleEnvStamp = regexp.MustCompile(`^[0-9a-f]{8}:[0-9]+:[0-9a-f]{64}$`)

// decodeEnvStamp reads a variable ripple wrote; Reloader's values (a
// SHA-1) and anything else are not ripple's.
func decodeEnvStamp(name, value string) (stamp, bool) {
	if !strings.HasPrefix(name, workload.EnvVarPrefix) || !rippleEnvStamp.MatchString(value) {
		return stamp{}, false
	}
	return decodeStamp(value)
}

// envStamp returns the newest stamp among ripple's variables on the
// template: the one the last rollout wrote, and so what the pods run.
func envStamp(v state) (stamp, bool) {
	var newest stamp
	found := false
	for _, c := range v.tmpl.Spec.Containers {
		for _, e := range c.Env {
			if st, ok := decodeEnvStamp(e.Name, e.Value); ok && (!found || st.at > newest.at) {
				newest, found = st, true
			}
		}
	}
	return newest, found
}
