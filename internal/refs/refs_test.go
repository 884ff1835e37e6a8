package refs

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func cmVolume(name string) corev1.Volume {
	return corev1.Volume{Name: "v-" + name, VolumeSource: corev1.VolumeSource{
		ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: name}}}}
}

func secretVolume(name string) corev1.Volume {
	return corev1.Volume{Name: "v-" + name, VolumeSource: corev1.VolumeSource{
		Secret: &corev1.SecretVolumeSource{SecretName: name}}}
}

func projected(sources ...corev1.VolumeProjection) corev1.Volume {
	return corev1.Volume{Name: "projected", VolumeSource: corev1.VolumeSource{
		Projected: &corev1.ProjectedVolumeSource{Sources: sources}}}
}

func projectedCM(name string) corev1.VolumeProjection {
	return corev1.VolumeProjection{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: name}}}
}

func projectedSecret(name string) corev1.VolumeProjection {
	return corev1.VolumeProjection{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: name}}}
}

func envCM(name string) corev1.EnvVar {
	return corev1.EnvVar{Name: "E", ValueFrom: &corev1.EnvVarSource{
		ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: "k"}}}
}

func envSecret(name string) corev1.EnvVar {
	return corev1.EnvVar{Name: "E", ValueFrom: &corev1.EnvVarSource{
		SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: "k"}}}
}

func envFromCM(name string) corev1.EnvFromSource {
	return corev1.EnvFromSource{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: name}}}
}

func envFromSecret(name string) corev1.EnvFromSource {
	return corev1.EnvFromSource{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: name}}}
}

func cm(name string) Ref     { return Ref{Kind: ConfigMap, Name: name} }
func secret(name string) Ref { return Ref{Kind: Secret, Name: name} }

func TestFromPodSpec_FindsEveryKindOfReference(t *testing.T) {
	cases := []struct {
		name string
		spec corev1.PodSpec
		want []Ref
	}{
		{"empty pod spec", corev1.PodSpec{}, nil},
		{"configMap volume", corev1.PodSpec{Volumes: []corev1.Volume{cmVolume("a")}}, []Ref{cm("a")}},
		{"secret volume", corev1.PodSpec{Volumes: []corev1.Volume{secretVolume("a")}}, []Ref{secret("a")}},
		{"projected configMap and secret", corev1.PodSpec{Volumes: []corev1.Volume{projected(
			projectedCM("p-cm"), projectedSecret("p-secret"),
			corev1.VolumeProjection{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}},
		)}}, []Ref{cm("p-cm"), secret("p-secret")}},
		{"other volume types are not refs", corev1.PodSpec{Volumes: []corev1.Volume{
			{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		}}, nil},
		{"container env valueFrom", corev1.PodSpec{Containers: []corev1.Container{{
			Env: []corev1.EnvVar{{Name: "PLAIN", Value: "x"}, envCM("env-cm"), envSecret("env-secret"),
				{Name: "F", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}},
		}}}, []Ref{cm("env-cm"), secret("env-secret")}},
		{"container envFrom", corev1.PodSpec{Containers: []corev1.Container{{
			EnvFrom: []corev1.EnvFromSource{envFromCM("from-cm"), envFromSecret("from-secret")},
		}}}, []Ref{cm("from-cm"), secret("from-secret")}},
		{"init container env and envFrom", corev1.PodSpec{InitContainers: []corev1.Container{{
			Env:     []corev1.EnvVar{envSecret("init-secret")},
			EnvFrom: []corev1.EnvFromSource{envFromCM("init-cm")},
		}}}, []Ref{cm("init-cm"), secret("init-secret")}},
		{"ephemeral container env and envFrom", corev1.PodSpec{EphemeralContainers: []corev1.EphemeralContainer{{
			EphemeralContainerCommon: corev1.EphemeralContainerCommon{
				Env:     []corev1.EnvVar{envCM("eph-cm")},
				EnvFrom: []corev1.EnvFromSource{envFromSecret("eph-secret")},
			},
		}}}, []Ref{cm("eph-cm"), secret("eph-secret")}},
		{"every container of each list", corev1.PodSpec{Containers: []corev1.Container{
			{Env: []corev1.EnvVar{envCM("first")}},
			{Env: []corev1.EnvVar{envCM("second")}},
		}}, []Ref{cm("first"), cm("second")}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := FromPodSpec(&c.spec); !slices.Equal(got, c.want) {
				t.Errorf("FromPodSpec = %v, want %v", got, c.want)
			}
		})
	}
}

func TestFromPodSpec_SortedDeduplicatedAndEmptyNamesSkipped(t *testing.T) {
	spec := corev1.PodSpec{
		Volumes: []corev1.Volume{
			secretVolume("z"), cmVolume("b"), cmVolume(""), secretVolume(""),
			projected(projectedCM("a"), projectedSecret("z"), projectedCM("")),
		},
		InitContainers: []corev1.Container{{Env: []corev1.EnvVar{envCM("b"), envSecret("")}}},
		Containers: []corev1.Container{
			{EnvFrom: []corev1.EnvFromSource{envFromCM("a"), envFromSecret("a"), envFromCM("")}},
			{Env: []corev1.EnvVar{envCM("c"), envCM("")}},
		},
		EphemeralContainers: []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
			EnvFrom: []corev1.EnvFromSource{envFromSecret("z"), envFromSecret("")},
		}}},
	}
	want := []Ref{cm("a"), cm("b"), cm("c"), secret("a"), secret("z")}
	if got := FromPodSpec(&spec); !slices.Equal(got, want) {
		t.Errorf("FromPodSpec = %v, want %v", got, want)
	}
}

func TestFromPodSpec_SameNameDifferentKindsAreDistinct(t *testing.T) {
	spec := corev1.PodSpec{Volumes: []corev1.Volume{cmVolume("app"), secretVolume("app")}}
	want := []Ref{cm("app"), secret("app")}
	if got := FromPodSpec(&spec); !slices.Equal(got, want) {
		t.Errorf("FromPodSpec = %v, want %v", got, want)
	}
}

func TestFromPodSpec_DoesNotModifyTheSpec(t *testing.T) {
	spec := corev1.PodSpec{Volumes: []corev1.Volume{secretVolume("b"), cmVolume("a")}}
	before := spec.DeepCopy()
	FromPodSpec(&spec)
	if spec.Volumes[0].Secret.SecretName != before.Volumes[0].Secret.SecretName || spec.Volumes[1].ConfigMap.Name != "a" {
		t.Errorf("FromPodSpec reordered or changed the pod spec")
	}
}

func TestRef_StringAndCompare(t *testing.T) {
	if s := secret("db").String(); s != "Secret/db" {
		t.Errorf("String() = %q, want Secret/db", s)
	}
	cases := []struct {
		a, b Ref
		want int
	}{
		{cm("a"), cm("a"), 0},
		{cm("a"), cm("b"), -1},
		{cm("b"), cm("a"), 1},
		{cm("z"), secret("a"), -1},
		{secret("a"), cm("z"), 1},
	}
	for _, c := range cases {
		if got := Compare(c.a, c.b); got != c.want {
			t.Errorf("Compare(%v, %v) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
	if !slices.Equal(Kinds, []Kind{ConfigMap, Secret}) {
		t.Errorf("Kinds = %v", Kinds)
	}
}

func csiVolume(driver string, attrs map[string]string) corev1.Volume {
	return corev1.Volume{Name: "csi", VolumeSource: corev1.VolumeSource{
		CSI: &corev1.CSIVolumeSource{Driver: driver, VolumeAttributes: attrs}}}
}

func TestFromPodSpec_FindsTheSecretProviderClassOfSecretsStoreCSIVolumes(t *testing.T) {
	spc := func(name string) Ref { return Ref{Kind: SecretProviderClass, Name: name} }
	cases := []struct {
		name string
		vol  corev1.Volume
		want []Ref
	}{
		{"secrets store volume", csiVolume(CSIDriver, map[string]string{CSIClassAttribute: "vault"}), []Ref{spc("vault")}},
		{"a fork of the driver, as Reloader reads it", csiVolume("secrets-store-gke.csi.k8s.io", map[string]string{CSIClassAttribute: "vault"}), []Ref{spc("vault")}},
		{"another CSI driver, naming no class", csiVolume("ebs.csi.aws.com", map[string]string{"type": "gp3"}), nil},
		{"no class attribute", csiVolume(CSIDriver, nil), nil},
		{"empty class attribute", csiVolume(CSIDriver, map[string]string{CSIClassAttribute: ""}), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := FromPodSpec(&corev1.PodSpec{Volumes: []corev1.Volume{tc.vol}})
			if !slices.Equal(got, tc.want) {
				t.Errorf("FromPodSpec = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestUsedByPicksTheContainerThatUsesTheObjectAsReloaderDoes(t *testing.T) {
	cm := Ref{Kind: ConfigMap, Name: "app"}
	mount := func(vol string) []corev1.VolumeMount {
		return []corev1.VolumeMount{{Name: vol, MountPath: "/etc/" + vol}}
	}
	envFrom := []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "app"}}}}
	cmVolume := corev1.Volume{Name: "conf", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "app"}}}}
	for _, tc := range []struct {
		name string
		spec corev1.PodSpec
		want string
	}{
		{"no containers", corev1.PodSpec{}, ""},
		{"a volume mount wins over env", corev1.PodSpec{
			Volumes:    []corev1.Volume{cmVolume},
			Containers: []corev1.Container{{Name: "a", EnvFrom: envFrom}, {Name: "b", VolumeMounts: mount("conf")}},
		}, "b"},
		{"env when nothing mounts it", corev1.PodSpec{
			Containers: []corev1.Container{{Name: "a"}, {Name: "b", EnvFrom: envFrom}},
		}, "b"},
		{"a Secret of the same name is another object", corev1.PodSpec{
			Containers: []corev1.Container{{Name: "a"}, {Name: "b", EnvFrom: []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "app"}}}}}},
		}, "a"},
		{"used only by an init container: the first container", corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "init", EnvFrom: envFrom}},
			Containers:     []corev1.Container{{Name: "a"}, {Name: "b"}},
		}, "a"},
		{"named by an annotation only: the first container", corev1.PodSpec{
			Containers: []corev1.Container{{Name: "a"}},
		}, "a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := UsedBy(&tc.spec, cm); got != tc.want {
				t.Errorf("UsedBy = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestUsesSaysWhereThePodSpecUsesTheObject(t *testing.T) {
	cm := Ref{Kind: ConfigMap, Name: "cfg"}
	envFrom := corev1.EnvFromSource{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}
	tests := []struct {
		name string
		spec corev1.PodSpec
		want []string
	}{
		{"unused", corev1.PodSpec{Volumes: []corev1.Volume{cmVolume("other")}}, nil},
		{"a volume and a projected source", corev1.PodSpec{Volumes: []corev1.Volume{cmVolume("cfg"), projected(projectedCM("cfg"))}},
			[]string{"volume v-cfg", "volume projected"}},
		{"env and envFrom, init containers first", corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "setup", Env: []corev1.EnvVar{envCM("cfg")}}},
			Containers:     []corev1.Container{{Name: "app", EnvFrom: []corev1.EnvFromSource{envFrom, envFrom}, Env: []corev1.EnvVar{envCM("cfg"), envSecret("cfg")}}}},
			[]string{"env E of init container setup", "env E of container app", "envFrom of container app"}},
		{"a Secret of the same name is another object", corev1.PodSpec{Volumes: []corev1.Volume{secretVolume("cfg")}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Uses(&tt.spec, cm); !slices.Equal(got, tt.want) {
				t.Errorf("Uses = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestKeysUsedListsTheKeysAPodSpecReads(t *testing.T) {
	cm := Ref{Kind: ConfigMap, Name: "cfg"}
	items := func(v corev1.Volume, keys ...string) corev1.Volume {
		for _, k := range keys {
			v.ConfigMap.Items = append(v.ConfigMap.Items, corev1.KeyToPath{Key: k, Path: k})
		}
		return v
	}
	envKey := func(key string) corev1.EnvVar {
		e := envCM("cfg")
		e.ValueFrom.ConfigMapKeyRef.Key = key
		return e
	}
	projectedItems := projected(projectedCM("cfg"))
	projectedItems.Projected.Sources[0].ConfigMap.Items = []corev1.KeyToPath{{Key: "p", Path: "p"}}
	envFrom := corev1.EnvFromSource{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}
	tests := []struct {
		name string
		spec corev1.PodSpec
		keys []string
		all  bool
	}{
		{"env keys of every container, sorted once", corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "i", Env: []corev1.EnvVar{envKey("b")}}},
			Containers:     []corev1.Container{{Name: "c", Env: []corev1.EnvVar{envKey("a"), envKey("b")}}}}, []string{"a", "b"}, false},
		{"an init container's env key", corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "i", Env: []corev1.EnvVar{envKey("init")}}},
			Containers:     []corev1.Container{{Name: "c", Env: []corev1.EnvVar{envKey("app")}}}}, []string{"app", "init"}, false},
		{"an init container's envFrom reads every key", corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "i", EnvFrom: []corev1.EnvFromSource{envFrom}}},
			Containers:     []corev1.Container{{Name: "c", Env: []corev1.EnvVar{envKey("app")}}}}, nil, true},
		{"volume and projected items", corev1.PodSpec{Volumes: []corev1.Volume{items(cmVolume("cfg"), "v"), projectedItems}}, []string{"p", "v"}, false},
		{"a whole volume reads every key", corev1.PodSpec{Volumes: []corev1.Volume{cmVolume("cfg")},
			Containers: []corev1.Container{{Name: "c", Env: []corev1.EnvVar{envKey("a")}}}}, nil, true},
		{"envFrom reads every key", corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Env: []corev1.EnvVar{envKey("a")}, EnvFrom: []corev1.EnvFromSource{envFrom}}}}, nil, true},
		{"a whole projected source reads every key", corev1.PodSpec{Volumes: []corev1.Volume{projected(projectedCM("cfg"))}}, nil, true},
		{"unused: all of it, for a reload list", corev1.PodSpec{Volumes: []corev1.Volume{items(cmVolume("other"), "a")}}, nil, true},
		{"a Secret of the same name is another object", corev1.PodSpec{Volumes: []corev1.Volume{secretVolume("cfg")},
			Containers: []corev1.Container{{Name: "c", Env: []corev1.EnvVar{envKey("a")}}}}, []string{"a"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			keys, all := KeysUsed(&tt.spec, cm)
			if !slices.Equal(keys, tt.keys) || all != tt.all {
				t.Errorf("KeysUsed = %q, %v; want %q, %v", keys, all, tt.keys, tt.all)
			}
		})
	}
}

func TestNotRefreshable_OnlyAVolumeARunningContainerMountsWholeIsRefreshedInPlace(t *testing.T) {
	ref := Ref{Kind: ConfigMap, Name: "cfg"}
	volume := corev1.Volume{Name: "v", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}}
	whole := []corev1.VolumeMount{{Name: "v", MountPath: "/etc/cfg"}}
	always := corev1.ContainerRestartPolicyAlways
	tests := []struct {
		name       string
		spec       corev1.PodSpec
		refresh    bool
		reasonPart string
	}{
		{"a container mounts it whole", corev1.PodSpec{Volumes: []corev1.Volume{volume},
			Containers: []corev1.Container{{Name: "app", VolumeMounts: whole}}}, true, ""},
		{"a sidecar init container mounts it whole", corev1.PodSpec{Volumes: []corev1.Volume{volume},
			InitContainers: []corev1.Container{{Name: "side", RestartPolicy: &always, VolumeMounts: whole}},
			Containers:     []corev1.Container{{Name: "app"}}}, true, ""},
		{"only an init container mounts it", corev1.PodSpec{Volumes: []corev1.Volume{volume},
			InitContainers: []corev1.Container{{Name: "render", VolumeMounts: whole}},
			Containers:     []corev1.Container{{Name: "app"}}}, false, "init container render, which does not run again"},
		{"an init container and a container both mount it whole", corev1.PodSpec{Volumes: []corev1.Volume{volume},
			InitContainers: []corev1.Container{{Name: "render", VolumeMounts: whole}},
			Containers:     []corev1.Container{{Name: "app", VolumeMounts: whole}}}, false, "init container render, which does not run again"},
		{"no container mounts it", corev1.PodSpec{Volumes: []corev1.Volume{volume},
			Containers: []corev1.Container{{Name: "app"}}}, false, "no running container"},
		{"the pod spec does not use it", corev1.PodSpec{Containers: []corev1.Container{{Name: "app"}}}, false, "no running container"},
		{"a subPath mount", corev1.PodSpec{Volumes: []corev1.Volume{volume},
			Containers: []corev1.Container{{Name: "app", VolumeMounts: []corev1.VolumeMount{{Name: "v", MountPath: "/f", SubPath: "k"}}}}}, false, "subPath"},
		{"a subPathExpr mount beside a whole one", corev1.PodSpec{Volumes: []corev1.Volume{volume},
			Containers: []corev1.Container{{Name: "app", VolumeMounts: whole},
				{Name: "side", VolumeMounts: []corev1.VolumeMount{{Name: "v", MountPath: "/f", SubPathExpr: "$(POD_NAME)"}}}}}, false, "subPath"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			why := NotRefreshable(&tt.spec, ref)
			if (why == "") != tt.refresh || !strings.Contains(why, tt.reasonPart) {
				t.Fatalf("NotRefreshable = %q, want refreshable %v (reason with %q)", why, tt.refresh, tt.reasonPart)
			}
		})
	}
}
