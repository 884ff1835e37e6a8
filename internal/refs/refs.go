package refs

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// Kind is the kind of a config object ripple tracks.
type Kind string

// The kinds of config object ripple tracks.
const (
	ConfigMap Kind = "ConfigMap"
	Secret    Kind = "Secret"
	// SecretProviderClass is tracked only with --enable-csi-integration.
	// What changes is not the object but what the CSI driver reports in
	// the SecretProviderClassPodStatus objects of the pods that mount it.
	SecretProviderClass Kind = "SecretProviderClass"
)

// Kinds lists the kinds whose objects ripple caches and reads itself,
// ConfigMap and Secret, in a fixed order.
var Kinds = []Kind{ConfigMap, Secret}

// AllKinds lists every Kind a workload's annotations may name.
var AllKinds = []Kind{ConfigMap, Secret, SecretProviderClass}

// CSIDriver is the secrets store CSI driver, whose volumes name a
// SecretProviderClass in the volume attribute CSIClassAttribute. As in
// Reloader, the attribute names a class on any CSI volume: forks of the
// driver (GKE's secrets-store-gke.csi.k8s.io) name theirs the same way.
const (
	CSIDriver         = "secrets-store.csi.k8s.io"
	CSIClassAttribute = "secretProviderClass"
)

// Ref names one ConfigMap, Secret or SecretProviderClass in the pod's
// namespace.
type Ref struct {
	Kind Kind
	Name string
}

// String renders the ref as kind/name, the form used in Events and logs.
func (r Ref) String() string { return string(r.Kind) + "/" + r.Name }

// Compare orders refs by kind, then name.
func Compare(a, b Ref) int {
	if a.Kind != b.Kind {
		if a.Kind < b.Kind {
			return -1
		}
		return 1
	}
	switch {
	case a.Name < b.Name:
		return -1
	case a.Name > b.Name:
		return 1
	}
	return 0
}

// FromPodSpec returns every ConfigMap, Secret and SecretProviderClass the
// pod spec uses, sorted and without duplicates.
func FromPodSpec(spec *corev1.PodSpec) []Ref {
	var out []Ref
	add := func(kind Kind, name string) {
		if name != "" {
			out = append(out, Ref{Kind: kind, Name: name})
		}
	}
	for i := range spec.Volumes {
		fromVolume(&spec.Volumes[i], add)
	}
	for i := range spec.InitContainers {
		fromEnv(spec.InitContainers[i].Env, spec.InitContainers[i].EnvFrom, add)
	}
	for i := range spec.Containers {
		fromEnv(spec.Containers[i].Env, spec.Containers[i].EnvFrom, add)
	}
	for i := range spec.EphemeralContainers {
		c := &spec.EphemeralContainers[i].EphemeralContainerCommon
		fromEnv(c.Env, c.EnvFrom, add)
	}
	slices.SortFunc(out, Compare)
	return slices.Compact(out)
}

func fromVolume(v *corev1.Volume, add func(Kind, string)) {
	if v.ConfigMap != nil {
		add(ConfigMap, v.ConfigMap.Name)
	}
	if v.Secret != nil {
		add(Secret, v.Secret.SecretName)
	}
	if v.CSI != nil {
		add(SecretProviderClass, v.CSI.VolumeAttributes[CSIClassAttribute])
	}
	if v.Projected == nil {
		return
	}
	for _, s := range v.Projected.Sources {
		if s.ConfigMap != nil {
			add(ConfigMap, s.ConfigMap.Name)
		}
		if s.Secret != nil {
			add(Secret, s.Secret.Name)
		}
	}
}

func fromEnv(env []corev1.EnvVar, envFrom []corev1.EnvFromSource, add func(Kind, string)) {
	for _, e := range env {
		if e.ValueFrom == nil {
			continue
		}
		if r := e.ValueFrom.ConfigMapKeyRef; r != nil {
			add(ConfigMap, r.Name)
		}
		if r := e.ValueFrom.SecretKeyRef; r != nil {
			add(Secret, r.Name)
		}
	}
	for _, e := range envFrom {
		if e.ConfigMapRef != nil {
			add(ConfigMap, e.ConfigMapRef.Name)
		}
		if e.SecretRef != nil {
			add(Secret, e.SecretRef.Name)
		}
	}
}

// UsedBy returns the name of the container that uses ref, Reloader's
// choice for its env var: the first container that mounts a volume
// holding ref, else the first whose env or envFrom reads it, else (ref is
// used only by init containers, or named by an annotation and not used at
// all) the first container. Empty when the pod has no containers.
func UsedBy(spec *corev1.PodSpec, ref Ref) string {
	if len(spec.Containers) == 0 {
		return ""
	}
	volumes := map[string]bool{}
	for i := range spec.Volumes {
		fromVolume(&spec.Volumes[i], func(k Kind, name string) {
			if (Ref{Kind: k, Name: name}) == ref {
				volumes[spec.Volumes[i].Name] = true
			}
		})
	}
	for _, c := range spec.Containers {
		for _, m := range c.VolumeMounts {
			if volumes[m.Name] {
				return c.Name
			}
		}
	}
	for _, c := range spec.Containers {
		used := false
		fromEnv(c.Env, c.EnvFrom, func(k Kind, name string) { used = used || (Ref{Kind: k, Name: name}) == ref })
		if used {
			return c.Name
		}
	}
	return spec.Containers[0].Name
}

// Uses says where the pod spec uses ref, in words and in the spec's order:
// "volume cfg", "envFrom of container app", "env LEVEL of init container
// setup". ripple explain prints it.
func Uses(spec *corev1.PodSpec, ref Ref) []string {
	var out []string
	is := func(what string) func(Kind, string) {
		return func(k Kind, name string) {
			if (Ref{Kind: k, Name: name}) == ref {
				out = append(out, what)
			}
		}
	}
	for i := range spec.Volumes {
		fromVolume(&spec.Volumes[i], is("volume "+spec.Volumes[i].Name))
	}
	containers := func(role string, cs []corev1.Container) {
		for _, c := range cs {
			for _, e := range c.Env {
				fromEnv([]corev1.EnvVar{e}, nil, is("env "+e.Name+" of "+role+" "+c.Name))
			}
			fromEnv(nil, c.EnvFrom, is("envFrom of "+role+" "+c.Name))
		}
	}
	containers("init container", spec.InitContainers)
	containers("container", spec.Containers)
	return slices.Compact(out)
}

// KeysUsed returns the keys of ref the pod spec reads, sorted, and all
// true when it reads every key: through envFrom, or a volume or projected
// source without items. A spec that does not use ref at all returns
// all true: a reload list may name the object, and then all of it counts.
func KeysUsed(spec *corev1.PodSpec, ref Ref) (keys []string, all bool) {
	used := false
	addItems := func(items []corev1.KeyToPath) {
		used = true
		if len(items) == 0 {
			all = true
		}
		for _, it := range items {
			keys = append(keys, it.Key)
		}
	}
	for i := range spec.Volumes {
		v := &spec.Volumes[i]
		switch {
		case v.ConfigMap != nil && ref == (Ref{Kind: ConfigMap, Name: v.ConfigMap.Name}):
			addItems(v.ConfigMap.Items)
		case v.Secret != nil && ref == (Ref{Kind: Secret, Name: v.Secret.SecretName}):
			addItems(v.Secret.Items)
		case v.Projected != nil:
			for _, s := range v.Projected.Sources {
				if s.ConfigMap != nil && ref == (Ref{Kind: ConfigMap, Name: s.ConfigMap.Name}) {
					addItems(s.ConfigMap.Items)
				}
				if s.Secret != nil && ref == (Ref{Kind: Secret, Name: s.Secret.Name}) {
					addItems(s.Secret.Items)
				}
			}
		}
	}
	env := func(env []corev1.EnvVar, envFrom []corev1.EnvFromSource) {
		for _, e := range env {
			if e.ValueFrom == nil {
				continue
			}
			if r := e.ValueFrom.ConfigMapKeyRef; r != nil && ref == (Ref{Kind: ConfigMap, Name: r.Name}) {
				used, keys = true, append(keys, r.Key)
			}
			if r := e.ValueFrom.SecretKeyRef; r != nil && ref == (Ref{Kind: Secret, Name: r.Name}) {
				used, keys = true, append(keys, r.Key)
			}
		}
		fromEnv(nil, envFrom, func(k Kind, name string) { all = all || ref == (Ref{Kind: k, Name: name}) })
	}
	for i := range spec.InitContainers {
		env(spec.InitContainers[i].Env, spec.InitContainers[i].EnvFrom)
	}
	for i := range spec.Containers {
		env(spec.Containers[i].Env, spec.Containers[i].EnvFrom)
	}
	for i := range spec.EphemeralContainers {
		c := &spec.EphemeralContainers[i].EphemeralContainerCommon
		env(c.Env, c.EnvFrom)
	}
	if all || !used {
		return nil, true
	}
	slices.Sort(keys)
	return slices.Compact(keys), false
}

// NotRefreshable says why the kubelet cannot refresh ref in the pods of
// the spec in place, "" when it can: the pods read it only through volumes
// that running containers mount whole, which the kubelet rewrites when it
// syncs the pod. Env and envFrom are fixed when a container starts, a
// subPath mount is never updated, an init container that is no sidecar
// does not run again, and an object no running container mounts (named by
// a reload list, read through the API) reaches the pods only by a rollout.
func NotRefreshable(spec *corev1.PodSpec, ref Ref) string {
	volumes := map[string]bool{}
	for i := range spec.Volumes {
		fromVolume(&spec.Volumes[i], func(k Kind, name string) {
			if (Ref{Kind: k, Name: name}) == ref {
				volumes[spec.Volumes[i].Name] = true
			}
		})
	}
	why := ""
	check := func(role string, c *corev1.Container) {
		fromEnv(c.Env, c.EnvFrom, func(k Kind, name string) {
			if why == "" && (Ref{Kind: k, Name: name}) == ref {
				why = fmt.Sprintf("%s reaches %s %s through its environment", ref, role, c.Name)
			}
		})
		for _, m := range c.VolumeMounts {
			if why == "" && volumes[m.Name] && (m.SubPath != "" || m.SubPathExpr != "") {
				why = fmt.Sprintf("%s reaches %s %s through a subPath mount", ref, role, c.Name)
			}
		}
	}
	mounted := false
	mountsWhole := func(c *corev1.Container) {
		for _, m := range c.VolumeMounts {
			mounted = mounted || volumes[m.Name] && m.SubPath == "" && m.SubPathExpr == ""
		}
	}
	for i := range spec.InitContainers {
		c := &spec.InitContainers[i]
		check("init container", c)
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			mountsWhole(c)
			continue
		}
		// What it made of the files (a config rendered from them) stays
		// old, though a running container sees the new ones.
		for _, m := range c.VolumeMounts {
			if why == "" && volumes[m.Name] {
				why = fmt.Sprintf("%s reaches init container %s, which does not run again", ref, c.Name)
			}
		}
	}
	for i := range spec.Containers {
		check("container", &spec.Containers[i])
		mountsWhole(&spec.Containers[i])
	}
	switch {
	case why != "":
	case ref.Kind == SecretProviderClass:
		why = fmt.Sprintf("%s is mounted by the secrets store CSI driver, which refreshes on its own rotation", ref)
	case !mounted:
		why = fmt.Sprintf("%s is mounted whole by no running container", ref)
	}
	return why
}
