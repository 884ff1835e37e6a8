package controller

import (
	"slices"
	"strings"

	"github.com/ripple-controller/ripple/internal/digest"
	"github.com/ripple-controller/ripple/internal/refs"
	"github.com/ripple-controller/ripple/internal/workload"
)

// The env-vars strategy. Each changed object sets Reloader's variable for
// it on the container that uses it. Its value is a stamp, like the pod
// template's under the annotations strategy, of the objects that share
// the variable's name (Reloader's mangling maps my-app and my.app to one
// name): the key, the time and their keyed digest. So the variables are
// the evidence of what the pods run, and a guess of a Secret's value
// cannot be tested against them.

// envVars returns the variables a rollout for the changed objects sets.
func (r *Reconciler) envVars(v state, changed []refs.Ref, at int64) []workload.EnvVar {
	var out []workload.EnvVar
	for _, ref := range changed {
		name := workload.EnvVarName(ref)
		if slices.ContainsFunc(out, func(e workload.EnvVar) bool { return e.Name == name }) {
			continue
		}
		container := refs.UsedBy(&v.tmpl.Spec, ref)
		if container == "" {
			continue
		}
		st := stamp{keyID: r.Keyed.KeyID(), at: at, digest: envDigest(r.Keyed, v.current, name)}
		out = append(out, workload.EnvVar{Container: container, Name: name, Value: st.encode()})
	}
	return out
}

// envDigest is the keyed digest of the tracked objects whose variable is
// name.
func envDigest(keyed digest.Keyed, current map[refs.Ref]tracked, name string) string {
	group := map[refs.Ref]tracked{}
	for ref, t := range current {
		if workload.EnvVarName(ref) == name {
			group[ref] = t
		}
	}
	return workloadDigest(keyed, group)
}

// envRunOther reports whether a variable ripple set on the template,
// under a key it knows and not copied from an older object, names other
// config than the objects of its name hold now. found is false when ripple
// set none: then the template's annotation is the evidence.
func (r *Reconciler) envRunOther(v state) (other, found bool) {
	created := v.obj.GetCreationTimestamp().Unix()
	for _, c := range v.tmpl.Spec.Containers {
		for _, e := range c.Env {
			if !strings.HasPrefix(e.Name, workload.EnvVarPrefix) {
				continue
			}
			st, ok := decodeStamp(e.Value)
			if !ok || created > st.at+clockSlack {
				continue
			}
			keyed, ok := r.Keyed.Lookup(st.keyID)
			if !ok {
				continue
			}
			found = true
			if envDigest(keyed, v.current, e.Name) != st.digest {
				return true, true
			}
		}
	}
	return false, found
}
