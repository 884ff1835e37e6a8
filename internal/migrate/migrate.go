package migrate

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// MaxInput bounds the values file read: Reloader's own is about 10 KiB.
const MaxInput = 1 << 20

// Result is ripple's values and the comments that go with them.
type Result struct {
	Values map[string]any
	// Notes explain a value that was carried over with a change.
	Notes []string
	// Dropped names each setting that was not carried over, and why.
	Dropped []string
}

// noSuchSetting is why most settings are dropped.
const noSuchSetting = "ripple's chart has no such setting"

// reloaderDefaults are the non-empty defaults of Reloader's chart: a
// setting left at its default is not reported as dropped.
var reloaderDefaults = map[string]any{
	"kubernetes.host":                                         "https://kubernetes.default",
	"reloader.deployment.labels.provider":                     "stakater",
	"reloader.deployment.labels.group":                        "com.stakater.platform",
	"reloader.reloadStrategy":                                 "default",
	"reloader.logLevel":                                       "info",
	"reloader.watchGlobally":                                  true,
	"reloader.pprofAddr":                                      ":6060",
	"reloader.deployment.replicas":                            float64(1),
	"reloader.deployment.revisionHistoryLimit":                float64(2),
	"reloader.deployment.securityContext.runAsNonRoot":        true,
	"reloader.deployment.securityContext.runAsUser":           float64(65534),
	"reloader.deployment.securityContext.seccompProfile.type": "RuntimeDefault",
	"reloader.rbac.enabled":                                   true,
	"reloader.serviceAccount.create":                          true,
	"reloader.serviceMonitor.honorLabels":                     true,
	"reloader.podMonitor.honorLabels":                         true,
	"reloader.verticalPodAutoscaler.updatePolicy.updateMode":  "Auto",
}

// reasons are why a setting with a ripple-specific answer is dropped.
var reasons = map[string]string{
	"reloader.isOpenshift":                   "ripple does not roll OpenShift DeploymentConfigs",
	"reloader.syncAfterRestart":              "ripple compares every tracked object with its record at each start, so nothing needs it",
	"reloader.deployment.securityContext":    "ripple's image runs as 65532; podSecurityContext sets the pod's",
	"reloader.deployment.labels":             "podLabels and commonLabels set ripple's labels",
	"reloader.deployment.env.secret":         "extraEnv takes variables from a Secret you make",
	"reloader.deployment.env.field":          "extraEnv takes valueFrom.fieldRef entries",
	"reloader.deployment.env.existing":       "extraEnv takes valueFrom.secretKeyRef entries",
	"reloader.deployment.livenessProbe":      "livenessProbe sets the timings of ripple's own probe",
	"reloader.deployment.readinessProbe":     "readinessProbe sets the timings of ripple's own probe",
	"reloader.podMonitor":                    "ripple's chart has a ServiceMonitor (serviceMonitor.enabled)",
	"reloader.legacy":                        "ripple's RBAC is least-privilege, with no legacy form",
	"reloader.readOnlyRootFileSystem":        "ripple's root file system is always read-only",
	"reloader.deployment.gomemlimitOverride": "ripple paces its collector itself; extraEnv can set GOMEMLIMIT",
	"reloader.deployment.gomaxprocsOverride": "extraEnv can set GOMAXPROCS",
}

// Values reads Reloader's chart values and returns ripple's.
func Values(in []byte) (Result, error) {
	if len(in) > MaxInput {
		return Result{}, fmt.Errorf("the values file is %d bytes, more than the %d a chart's values can be", len(in), MaxInput)
	}
	var src map[string]any
	if err := yaml.Unmarshal(in, &src); err != nil {
		return Result{}, fmt.Errorf("reading the values: %w", err)
	}
	m := &mapper{src: src, used: map[string]bool{}, res: Result{Values: map[string]any{}}}
	m.settings()
	m.deployment()
	m.dropRest()
	sort.Strings(m.res.Dropped)
	return m.res, nil
}

// Render prints the comments, then ripple's values as YAML.
func (r Result) Render() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("# ripple values carried over from stakater/Reloader's chart values by `ripple migrate-values`.\n")
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "# note: %s\n", n)
	}
	for _, d := range r.Dropped {
		fmt.Fprintf(&b, "# not carried over: %s\n", d)
	}
	if len(r.Values) == 0 {
		b.WriteString("{}\n")
		return b.Bytes(), nil
	}
	out, err := yaml.Marshal(r.Values)
	if err != nil {
		return nil, fmt.Errorf("encoding ripple's values: %w", err)
	}
	b.Write(out)
	return b.Bytes(), nil
}

type mapper struct {
	src  map[string]any
	used map[string]bool
	res  Result
}

// get returns the value at a dotted path, and whether it is set, and
// marks it carried over.
func (m *mapper) get(path string) (any, bool) {
	v, ok := m.getRaw(path)
	if !ok {
		return nil, false
	}
	m.used[path] = true
	return v, !empty(v)
}

// set puts v at a dotted path of ripple's values.
func (m *mapper) set(path string, v any) {
	keys := strings.Split(path, ".")
	cur := m.res.Values
	for _, k := range keys[:len(keys)-1] {
		next, ok := cur[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			cur[k] = next
		}
		cur = next
	}
	cur[keys[len(keys)-1]] = v
}

// carry copies a value set to other than Reloader's default from one path
// to the other.
func (m *mapper) carry(from, to string) {
	if v, ok := m.get(from); ok && !reflect.DeepEqual(v, reloaderDefaults[from]) {
		m.set(to, v)
	}
}

func (m *mapper) note(format string, args ...any) {
	m.res.Notes = append(m.res.Notes, fmt.Sprintf(format, args...))
}

func (m *mapper) drop(path, why string) {
	m.res.Dropped = append(m.res.Dropped, path+": "+why)
}

func (m *mapper) settings() {
	m.carry("nameOverride", "nameOverride")
	m.carry("fullnameOverride", "fullnameOverride")
	m.carry("global.imagePullSecrets", "imagePullSecrets")
	for _, k := range []string{"autoReloadAll", "isArgoRollouts", "reloadOnCreate", "reloadOnDelete", "namespaceSelector", "resourceLabelSelector", "webhookUrl", "pprofAddr"} {
		m.carry("reloader."+k, k)
	}
	m.carry("reloader.enablePProf", "enablePprof")
	m.carry("reloader.enableCSIIntegration", "csiIntegration")
	m.carry("reloader.enableMetricsByNamespace", "metrics.countByNamespace")
	if v, ok := m.get("reloader.enableHA"); ok && v == true {
		m.set("highAvailability.enabled", true)
	}
	m.ignored()
	m.strategy()
	m.logging()
	m.namespaces()
	m.annotations()
	m.monitoring()
}

func (m *mapper) ignored() {
	if v, _ := m.get("reloader.ignoreSecrets"); v == true {
		m.set("resourcesToIgnore", "secrets")
	}
	if v, _ := m.get("reloader.ignoreConfigMaps"); v == true {
		m.set("resourcesToIgnore", "configMaps")
	}
	var types []any
	if v, _ := m.get("reloader.ignoreJobs"); v == true {
		types = append(types, "jobs")
	}
	if v, _ := m.get("reloader.ignoreCronJobs"); v == true {
		types = append(types, "cronjobs")
	}
	if types != nil {
		m.set("ignoredWorkloadTypes", types)
	}
}

func (m *mapper) strategy() {
	v, _ := m.get("reloader.reloadStrategy")
	switch v {
	case nil, "", "default", "env-vars":
		m.set("reloadStrategy", "env-vars")
		m.note("reloadStrategy: env-vars is Reloader's default; ripple takes over the STAKATER_ variables Reloader set, so nothing rolls on the switch (ripple's own default, annotations, is in the README)")
	case "annotations":
		m.set("reloadStrategy", "annotations")
	default:
		m.drop("reloader.reloadStrategy", fmt.Sprintf("%v is not a strategy ripple knows", v))
	}
}

func (m *mapper) logging() {
	if f, _ := m.get("reloader.logFormat"); f == "json" {
		m.set("logFormat", "json")
	} else {
		m.set("logFormat", "text")
		m.note("logFormat: text, as Reloader logs unless logFormat is json")
	}
	switch v, _ := m.get("reloader.logLevel"); v {
	case nil, "", "info":
	case "trace", "debug", "warning", "error":
		m.set("logLevel", v)
	case "fatal", "panic":
		m.set("logLevel", "error")
		m.note("logLevel: error, ripple's quietest, for Reloader's %v", v)
	default:
		m.drop("reloader.logLevel", fmt.Sprintf("%v is not a level ripple knows", v))
	}
}

func (m *mapper) namespaces() {
	global, _ := m.get("reloader.watchGlobally")
	ns, listed := m.get("reloader.namespaces")
	switch {
	case listed:
		m.set("watchNamespaces", ns)
	case global == false:
		m.drop("reloader.watchGlobally", "false without namespaces watches Reloader's own namespace: set watchNamespaces to it")
	}
	if v, ok := m.get("reloader.ignoreNamespaces"); ok {
		var list []any
		for _, n := range strings.Split(fmt.Sprint(v), ",") {
			if n = strings.TrimSpace(n); n != "" {
				list = append(list, n)
			}
		}
		m.set("namespacesToIgnore", list)
	}
}

// customAnnotations are Reloader's custom_annotations keys and ripple's.
var customAnnotations = [][2]string{
	{"auto", "auto"}, {"configmap_auto", "configmapAuto"}, {"secret_auto", "secretAuto"},
	{"search", "autoSearch"}, {"match", "searchMatch"}, {"configmap", "configmap"}, {"secret", "secret"},
	{"ignore", "ignore"}, {"pausePeriod", "pauseDeployment"}, {"pauseTime", "pauseDeploymentTime"},
}

func (m *mapper) annotations() {
	for _, a := range customAnnotations {
		m.carry("reloader.custom_annotations."+a[0], "annotations."+a[1])
	}
}

func (m *mapper) monitoring() {
	m.carry("reloader.serviceMonitor.enabled", "serviceMonitor.enabled")
	m.carry("reloader.serviceMonitor.labels", "serviceMonitor.labels")
	m.carry("reloader.serviceMonitor.interval", "serviceMonitor.interval")
	m.carry("reloader.serviceMonitor.timeout", "serviceMonitor.scrapeTimeout")
	m.carry("reloader.rbac.enabled", "rbac.create")
	m.carry("reloader.serviceAccount.create", "serviceAccount.create")
	m.carry("reloader.serviceAccount.name", "serviceAccount.name")
	m.carry("reloader.serviceAccount.annotations", "serviceAccount.annotations")
	m.carry("reloader.podDisruptionBudget.enabled", "podDisruptionBudget.enabled")
	m.carry("reloader.podDisruptionBudget.minAvailable", "podDisruptionBudget.minAvailable")
}

func (m *mapper) deployment() {
	d := "reloader.deployment."
	for _, k := range []string{"replicas", "nodeSelector", "affinity", "tolerations", "topologySpreadConstraints", "priorityClassName", "resources"} {
		m.carry(d+k, k)
	}
	m.carry(d+"pod.annotations", "podAnnotations")
	m.carry(d+"volumes", "extraVolumes")
	m.carry(d+"volumeMounts", "extraVolumeMounts")
	if v, ok := m.get(d + "containerSecurityContext"); ok {
		m.set("securityContext", v)
		m.note("securityContext replaces ripple's default, which drops every capability and makes the root file system read-only")
	}
	if v, ok := m.get(d + "env.open"); ok {
		if env, isMap := v.(map[string]any); isMap {
			names := make([]string, 0, len(env))
			for n := range env {
				names = append(names, n)
			}
			slices.Sort(names)
			var list []any
			for _, n := range names {
				list = append(list, map[string]any{"name": n, "value": fmt.Sprint(env[n])})
			}
			m.set("extraEnv", list)
		}
	}
}

// dropRest reports every set value nothing carried over.
func (m *mapper) dropRest() {
	for _, path := range leaves(m.src, "") {
		if m.carried(path) {
			continue
		}
		v, _ := m.getRaw(path)
		if empty(v) || reflect.DeepEqual(reloaderDefaults[path], v) || silent(path) {
			continue
		}
		m.drop(path, reasonFor(path))
	}
}

// carried reports whether the path or a map holding it was carried over.
func (m *mapper) carried(path string) bool {
	for p := path; p != ""; p = parent(p) {
		if m.used[p] {
			return true
		}
	}
	return false
}

func (m *mapper) getRaw(path string) (any, bool) {
	var cur any = m.src
	for _, k := range strings.Split(path, ".") {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = mm[k]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// silent are settings never reported: ripple runs its own image, and
// Reloader labels its pods with its own version.
func silent(path string) bool {
	return path == "image" || strings.HasPrefix(path, "image.") || path == "reloader.deployment.labels.version"
}

func reasonFor(path string) string {
	for p := path; p != ""; p = parent(p) {
		if why, ok := reasons[p]; ok {
			return why
		}
	}
	return noSuchSetting
}

func parent(path string) string {
	i := strings.LastIndexByte(path, '.')
	if i < 0 {
		return ""
	}
	return path[:i]
}

// leaves lists the dotted paths of every value that is not a map.
func leaves(v any, prefix string) []string {
	mm, ok := v.(map[string]any)
	if !ok || (len(mm) == 0 && prefix != "") {
		return []string{prefix}
	}
	var out []string
	for k, child := range mm {
		p := k
		if prefix != "" {
			p = prefix + "." + k
		}
		out = append(out, leaves(child, p)...)
	}
	return out
}

func empty(v any) bool {
	switch t := v.(type) {
	case nil:
		return true
	case bool:
		return !t
	case string:
		return t == ""
	case []any:
		return len(t) == 0
	case map[string]any:
		return len(t) == 0
	}
	return false
}

// ErrUsage is returned for a command line migrate-values cannot run.
var ErrUsage = errors.New("usage: ripple migrate-values FILE (or - for standard input)")
