package annotations

import "github.com/ripple-controller/ripple/internal/refs"

// Annotations that users put on workloads and on ConfigMaps/Secrets. The
// values are Reloader's names; Keys lets a flag rename each of them.
const (
	// Auto on a workload: true (any spelling strconv.ParseBool accepts)
	// tracks every ConfigMap and Secret its pod spec references. Any other
	// non-empty value opts out of --auto-reload-all.
	Auto = "reloader.stakater.com/auto"
	// ConfigMapAuto on a workload: like Auto, for ConfigMaps only. Either
	// one true is enough.
	ConfigMapAuto = "configmap.reloader.stakater.com/auto"
	// SecretAuto on a workload: like Auto, for Secrets only.
	SecretAuto = "secret.reloader.stakater.com/auto"
	// Search on a workload: exactly "true" tracks referenced objects that
	// carry Match.
	Search = "reloader.stakater.com/search"
	// Match on a ConfigMap or Secret: exactly "true" makes it trigger
	// workloads with Search.
	Match = "reloader.stakater.com/match"
	// ConfigMapReload on a workload: comma-separated regular expressions
	// of ConfigMap names, each between "^" and "$" as Reloader reads it,
	// that trigger it, referenced or not.
	ConfigMapReload = "configmap.reloader.stakater.com/reload"
	// SecretReload on a workload: like ConfigMapReload, for Secrets.
	SecretReload = "secret.reloader.stakater.com/reload"
	// Ignore on a ConfigMap or Secret: exactly "true" means it never
	// triggers anything.
	Ignore = "reloader.stakater.com/ignore"
	// ConfigMapExclude on a workload's metadata (never its pod template):
	// comma-separated ConfigMap names that never trigger it.
	ConfigMapExclude = "configmaps.exclude.reloader.stakater.com/reload"
	// SecretExclude on a workload's metadata: comma-separated Secret names
	// that never trigger it.
	SecretExclude = "secrets.exclude.reloader.stakater.com/reload"
)

// Annotations on a workload for SecretProviderClasses, read only with
// --enable-csi-integration. Reloader offers no flag to rename them, so
// neither does ripple. Auto and Search apply to them as to ConfigMaps.
const (
	// SecretProviderClassAuto on a workload: like Auto, for the
	// SecretProviderClasses its secrets store CSI volumes name.
	SecretProviderClassAuto = "secretproviderclass.reloader.stakater.com/auto"
	// SecretProviderClassReload on a workload: like ConfigMapReload, for
	// SecretProviderClass names.
	SecretProviderClassReload = "secretproviderclass.reloader.stakater.com/reload"
	// SecretProviderClassExclude on a workload's metadata: comma-separated
	// SecretProviderClass names that never trigger it.
	SecretProviderClassExclude = "secretproviderclasses.exclude.reloader.stakater.com/reload"
)

// Annotations that pace a workload's rollouts, Reloader's names; flags
// rename them (--pause-deployment-annotation,
// --pause-deployment-time-annotation).
const (
	// PausePeriod on a workload's metadata: a Go duration ("5m"). A change
	// that would roll the workload starts a pause of that length instead,
	// and when it ends the workload rolls once with every change made
	// during it. --pause-period sets it for every workload without one.
	PausePeriod = "deployment.reloader.stakater.com/pause-period"
	// PausedAt is written by ripple on a paused workload's metadata: when
	// the pause began, API server time in RFC 3339. Kept on the object, the
	// pause ends on time after a restart or a leader change.
	PausedAt = "deployment.reloader.stakater.com/paused-at"
)

// Annotations that choose how a workload rolls. They cannot be renamed.
const (
	// ReloadStrategy on a workload: "annotations" rolls it by stamping its
	// pod template with ConfigDigest, "env-vars" by setting Reloader's
	// STAKATER_<NAME>_<KIND> variable on the container that uses the
	// changed object, "refresh" (with --enable-pod-refresh) stamps its
	// running pods with Refreshed instead of rolling when the changed
	// objects reach them only as whole volumes, and rolls by annotations
	// otherwise. --reload-strategy sets the default.
	ReloadStrategy = "ripple.dev/reload-strategy"
	// KeyPrecision on a workload: "true" rolls it only when a key its pod
	// spec reads changes (env valueFrom, volume or projected items); an
	// object it reads whole (envFrom, a volume without items) or only names
	// in a reload list counts every key. "false" rolls on any key, as
	// Reloader does. --key-precision sets the default.
	KeyPrecision = "ripple.dev/key-precision"
	// MinRolloutInterval on a workload: a Go duration; a change within it
	// of the workload's last rollout waits for its end, and the changes
	// made meanwhile roll once. --min-rollout-interval sets the default.
	MinRolloutInterval = "ripple.dev/min-rollout-interval"
	// CronJobStrategy on a CronJob: "job" (the default) creates a Job from
	// its jobTemplate when its config changes, as Reloader does; "template"
	// only stamps the jobTemplate, so the next scheduled run picks the
	// config up and nothing runs now. --cronjob-strategy sets the default.
	CronJobStrategy = "ripple.dev/cronjob-strategy"
	// RolloutStrategy on an Argo Rollout, Reloader's annotation with
	// Reloader's values: "rollout" (the default) rolls it through its pod
	// template, a new revision as for a Deployment; "restart" sets its
	// spec.restartAt, and Argo restarts its pods without a new revision. A
	// Rollout with spec.workloadRef always restarts: its pod template is
	// the referenced Deployment's, which ripple does not write.
	RolloutStrategy = "reloader.stakater.com/rollout-strategy"
)

// Annotations that ripple writes. They are ripple's own and cannot be renamed.
const (
	// ConfigDigest sits in a workload's pod template. Its value is a keyed
	// digest of all the config the workload tracks; changing it is what makes
	// Kubernetes roll the workload.
	ConfigDigest = "ripple.dev/config-digest"
	// Refreshed is written by ripple on each running pod of a workload under
	// the refresh strategy: the stamp of the config its volumes now hold.
	// Any change of a pod makes the kubelet sync it, which rewrites its
	// ConfigMap and Secret volumes at once.
	Refreshed = "ripple.dev/refreshed"
	// PodsConfigDigest sits in a workload's metadata, written with the
	// record when ripple changes the pods without changing their template
	// (a refresh in place, an Argo Rollout's restart, a suspended CronJob's
	// change, which its next run reads): the stamp of the config they run
	// from then on, which the template's ConfigDigest, older, does not name. A lost or written-back record is read against
	// the later of the two.
	PodsConfigDigest = "ripple.dev/pods-config-digest"
	// Recorded sits in a workload's metadata and holds the per-object digests
	// ripple last saw. Comparing against it makes ripple level-triggered: a
	// restart or a missed event converges instead of rolling again.
	Recorded = "ripple.dev/recorded"
	// ReloadCause sits on a Job ripple created or recreated and names the
	// change it ran for.
	ReloadCause = "ripple.dev/reload-cause"
	// Recreate is both an annotation and a finalizer on a Job that ripple
	// deletes to recreate it. The annotation holds what the new Job needs
	// (the stamp and the cause); the finalizer keeps the old Job, and with
	// it the spec to recreate, until its pods are gone.
	Recreate = "ripple.dev/recreate"
	// Run sits on a CronJob from the write of a change's record until the
	// Job ripple runs for it exists, and names that Job (with its stamp
	// and cause): written first, so that a stale read or a refused write
	// starts no Job, and a restart in between creates it once.
	Run = "ripple.dev/run"
)

// Fixed lists the annotations ripple reads or writes under their own names
// whatever the flags: a renamed key that took one of these would read a
// value meant for another purpose (or ripple's own writes) as its own.
var Fixed = []string{
	SecretProviderClassAuto, SecretProviderClassReload, SecretProviderClassExclude,
	ReloadStrategy, KeyPrecision, MinRolloutInterval, CronJobStrategy, RolloutStrategy,
	ConfigDigest, Refreshed, PodsConfigDigest, Recorded, ReloadCause, Recreate, Run,
}

// Keys holds the annotation names in use; flags may rename any of them.
type Keys struct {
	Auto             string
	ConfigMapAuto    string
	SecretAuto       string
	Search           string
	Match            string
	ConfigMapReload  string
	SecretReload     string
	Ignore           string
	ConfigMapExclude string
	SecretExclude    string
	// The SecretProviderClass keys are empty, and the kind is never
	// tracked, unless --enable-csi-integration sets them (WithCSI).
	SecretProviderClassAuto    string
	SecretProviderClassReload  string
	SecretProviderClassExclude string
	PausePeriod                string
	PausedAt                   string
}

// WithCSI returns the keys with the SecretProviderClass annotations set.
func (k Keys) WithCSI() Keys {
	k.SecretProviderClassAuto = SecretProviderClassAuto
	k.SecretProviderClassReload = SecretProviderClassReload
	k.SecretProviderClassExclude = SecretProviderClassExclude
	return k
}

// csi reports whether the SecretProviderClass annotations are read at all.
func (k Keys) csi() bool { return k.SecretProviderClassReload != "" }

// DefaultKeys returns Reloader's annotation names.
func DefaultKeys() Keys {
	return Keys{
		Auto:             Auto,
		ConfigMapAuto:    ConfigMapAuto,
		SecretAuto:       SecretAuto,
		Search:           Search,
		Match:            Match,
		ConfigMapReload:  ConfigMapReload,
		SecretReload:     SecretReload,
		Ignore:           Ignore,
		ConfigMapExclude: ConfigMapExclude,
		SecretExclude:    SecretExclude,
		PausePeriod:      PausePeriod,
		PausedAt:         PausedAt,
	}
}

// kindKeys are the workload keys that concern one kind of config object.
type kindKeys struct {
	reload, auto, exclude string
}

func (k Keys) forKind(kind refs.Kind) kindKeys {
	switch kind {
	case refs.Secret:
		return kindKeys{reload: k.SecretReload, auto: k.SecretAuto, exclude: k.SecretExclude}
	case refs.SecretProviderClass:
		return kindKeys{reload: k.SecretProviderClassReload, auto: k.SecretProviderClassAuto, exclude: k.SecretProviderClassExclude}
	}
	return kindKeys{reload: k.ConfigMapReload, auto: k.ConfigMapAuto, exclude: k.ConfigMapExclude}
}

// fallsBack reports whether a workload's policy for one kind is read from
// its pod template: as in Reloader, when the metadata has none of the
// kind's reload list, auto, the kind's typed auto and search. The exclude
// lists play no part; they are read from the metadata only.
func (k Keys) fallsBack(kk kindKeys, metadata map[string]string) bool {
	for _, key := range []string{kk.reload, k.Auto, kk.auto, k.Search} {
		if _, ok := metadata[key]; ok {
			return false
		}
	}
	return true
}
