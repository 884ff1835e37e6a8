package migrate

import (
	"encoding/csv"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/ripple-controller/ripple/internal/options"
)

// noSuchSetting is why most settings are dropped.
const noSuchSetting = "ripple's chart has no such setting"

// reloaderDefaults are the non-empty defaults of Reloader's chart: a
// setting left at its default is neither carried over nor reported. This
// package's tables name settings as path.String renders their paths.
var reloaderDefaults = map[string]any{
	"kubernetes.host":                                         "https://kubernetes.default",
	"image.pullPolicy":                                        "IfNotPresent",
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
	"reloader.matchLabels":                   "ripple's chart selects its pods by its own labels; podLabels adds labels",
	"reloader.deployment.livenessProbe":      "ripple's probes take initialDelaySeconds, periodSeconds, timeoutSeconds and failureThreshold",
	"reloader.deployment.readinessProbe":     "ripple's probes take initialDelaySeconds, periodSeconds, timeoutSeconds and failureThreshold",
	"reloader.legacy":                        "ripple's RBAC is least-privilege, with no legacy form",
	"reloader.deployment.gomemlimitOverride": "ripple paces its collector itself; extraEnv can set GOMEMLIMIT",
	"reloader.deployment.gomaxprocsOverride": "extraEnv can set GOMAXPROCS",
	"reloader.service.port":                  "ripple's metrics Service serves on metrics.port",
	"reloader.podDisruptionBudget":           "ripple's PodDisruptionBudget takes minAvailable",
	"kubernetes.host":                        "Reloader's chart does not use it",
	"namespace":                              "ripple installs into the release namespace (helm --namespace)",
	"image":                                  "ripple runs its own image: set image.repository to where you pull ripple from",
	"global.imageRegistry":                   "ripple runs its own image: set image.repository to where you pull ripple from",
}

// silent are settings never reported: Reloader's version, in its image
// tag and its pods' labels, means nothing to ripple.
func silent(p path) bool {
	name := p.String()
	return name == "image.tag" || name == "reloader.deployment.labels.version"
}

func (m *mapper) settings() {
	m.carry(at("nameOverride"), at("nameOverride"))
	m.carryName(at("fullnameOverride"), at("fullnameOverride"), "ripple's Deployment and ServiceAccount")
	m.carry(at("image.pullPolicy"), at("image.pullPolicy"))
	m.pullSecrets()
	for _, k := range []string{"autoReloadAll", "isArgoRollouts", "reloadOnCreate", "reloadOnDelete"} {
		m.carryEqTrue(path{"reloader", k}, path{k})
	}
	m.carry(at("reloader.pprofAddr"), at("pprofAddr"))
	if v, ok := m.changed(at("reloader.resourceLabelSelector")); ok && !m.refusedSelector(at("reloader.resourceLabelSelector"), v, false) {
		m.set(at("resourceLabelSelector"), v)
	}
	m.carry(at("reloader.enablePProf"), at("enablePprof"))
	m.carry(at("reloader.enableCSIIntegration"), at("csiIntegration"))
	m.carry(at("reloader.enableMetricsByNamespace"), at("metrics.countByNamespace"))
	if _, ok := m.get(at("reloader.readOnlyRootFileSystem")); ok {
		m.note("readOnlyRootFileSystem: ripple's root file system is always read-only")
	}
	m.replicas()
	m.ignored()
	m.strategy()
	m.logging()
	ownNamespace := m.namespaces()
	m.annotations()
	m.monitoring()
	m.identity()
	m.pod()
	m.probes()
	m.env()
	if ownNamespace {
		m.watchOwnNamespace()
	}
}

func (m *mapper) pullSecrets() {
	v, ok := m.get(at("global.imagePullSecrets"))
	list, isList := v.([]any)
	if !ok || !isList {
		return
	}
	// Reloader takes names as they are or as {name: ...}; ripple the latter.
	out := make([]any, 0, len(list))
	for _, s := range list {
		if name, isName := s.(string); isName {
			s = map[string]any{"name": name}
		}
		out = append(out, s)
	}
	m.set(at("imagePullSecrets"), out)
}

// carryEqTrue carries a setting Reloader's chart tests with eq ... true:
// true turns it on; any other type made the chart fail to render, so no
// Reloader ran with it, and ripple's chart, whose schema wants a boolean,
// would refuse it too.
func (m *mapper) carryEqTrue(from, to path) {
	v, ok := m.changed(from)
	switch b, isBool := v.(bool); {
	case !ok:
	case isBool:
		m.set(to, b)
	default:
		m.drop(from, "not a boolean: Reloader's chart compares it with true and refused to render it")
	}
}

// replicas follows Reloader's chart, which runs one replica unless enableHA.
// The chart tests enableHA, and the ignore settings below, with if: any
// value Helm counts as set, the string "false" too, turns them on.
func (m *mapper) replicas() {
	_, ha := m.get(at("reloader.enableHA"))
	if ha {
		m.set(at("highAvailability.enabled"), true)
	}
	replicas := at("reloader.deployment.replicas")
	n, set := m.changed(replicas)
	switch {
	case !set:
	case !isCount(n):
		m.drop(replicas, "not a number of replicas")
	case !ha && n.(float64) > 1:
		m.drop(replicas, "Reloader's chart runs one replica without enableHA, and so does this")
	case set:
		m.set(at("replicas"), n)
	}
}

func isCount(v any) bool {
	f, ok := v.(float64)
	return ok && f >= 0 && f == float64(int(f))
}

func (m *mapper) ignored() {
	_, secrets := m.get(at("reloader.ignoreSecrets"))
	_, configMaps := m.get(at("reloader.ignoreConfigMaps"))
	switch {
	case secrets && configMaps:
		m.drop(at("reloader.ignoreConfigMaps"), "ripple ignores one kind at most: resourcesToIgnore: secrets is carried over")
		m.set(at("resourcesToIgnore"), "secrets")
	case secrets:
		m.set(at("resourcesToIgnore"), "secrets")
	case configMaps:
		m.set(at("resourcesToIgnore"), "configMaps")
	}
	var types []any
	if _, on := m.get(at("reloader.ignoreJobs")); on {
		types = append(types, "jobs")
	}
	if _, on := m.get(at("reloader.ignoreCronJobs")); on {
		types = append(types, "cronjobs")
	}
	if types != nil {
		m.set(at("ignoredWorkloadTypes"), types)
	}
}

func (m *mapper) strategy() {
	v, _ := m.get(at("reloader.reloadStrategy"))
	switch v {
	case nil, "", "default", "env-vars":
		m.set(at("reloadStrategy"), "env-vars")
		m.note("reloadStrategy: env-vars is Reloader's default; ripple takes over the STAKATER_ variables Reloader set, so nothing rolls on the switch (ripple's own default, annotations, is in the README)")
	case "annotations":
		m.set(at("reloadStrategy"), "annotations")
	default:
		m.drop(at("reloader.reloadStrategy"), fmt.Sprintf("%v is not a strategy ripple knows", v))
	}
}

func (m *mapper) logging() {
	if f, _ := m.get(at("reloader.logFormat")); f == "json" {
		m.set(at("logFormat"), "json")
	} else {
		m.set(at("logFormat"), "text")
		m.note("logFormat: text, as Reloader logs unless logFormat is json")
	}
	raw, _ := m.get(at("reloader.logLevel"))
	// Reloader's logrus reads the level in any case, and warn as warning.
	switch v := strings.ToLower(fmt.Sprint(raw)); {
	case raw == nil, v == "", v == "info":
	case v == "trace", v == "debug", v == "warning", v == "warn", v == "error":
		m.set(at("logLevel"), v)
	case v == "fatal", v == "panic":
		m.set(at("logLevel"), "error")
		m.note("logLevel: error, ripple's quietest, for Reloader's %v", raw)
	default:
		m.drop(at("reloader.logLevel"), fmt.Sprintf("%v is not a level ripple knows", raw))
	}
}

// namespaces follows Reloader's chart and Reloader: namespaces gives
// --namespaces, plus the namespace Reloader's chart installs into;
// ignoreNamespaces and namespaceSelector only reach Reloader with
// watchGlobally, and the chart refuses to render namespaces with
// watchGlobally, so no Reloader ran with a list and either of them;
// watchGlobally: false without a list watches Reloader's own namespace.
// It reports whether ripple is to watch the namespace it runs in, which
// only settings can add, after the rest of extraEnv.
func (m *mapper) namespaces() (ownNamespace bool) {
	ignoreNamespaces, namespaceSelector := at("reloader.ignoreNamespaces"), at("reloader.namespaceSelector")
	global, _ := m.get(at("reloader.watchGlobally"))
	watch := m.names(at("reloader.namespaces"))
	ignore := m.names(ignoreNamespaces)
	selector, hasSelector := m.get(namespaceSelector)
	// Reloader's namespace value is still reported as not carried over.
	installed, _ := lookup(m.src, at("namespace")).(string)
	installed = strings.TrimSpace(installed)
	const onlyGlobal = "Reloader's chart passes it only with watchGlobally: true, so it did nothing"
	const listed = "Reloader's chart refused to render it with namespaces (which need watchGlobally: false, and with that it passes neither ignoreNamespaces nor namespaceSelector); ripple watches the namespaces listed"
	if global == false {
		if ignore != nil {
			m.drop(ignoreNamespaces, onlyGlobal)
		}
		if hasSelector {
			m.drop(namespaceSelector, onlyGlobal)
		}
		ignore, hasSelector = nil, false
	}
	switch {
	case watch != nil:
		if ignore != nil {
			m.drop(ignoreNamespaces, listed)
		}
		if hasSelector {
			m.drop(namespaceSelector, listed)
		}
		if installed == "" {
			m.set(at("watchNamespaces"), watch)
			m.note("watchNamespaces: Reloader's chart also watches the namespace it is installed in; add that one if workloads there use reloads")
			return false
		}
		if !slices.Contains(watch, any(installed)) {
			watch = append(watch, installed)
		}
		m.set(at("watchNamespaces"), watch)
		m.note("watchNamespaces: with %s, the namespace Reloader's chart was installed in, which it also watches", installed)
		return false
	case global == false && installed != "":
		m.set(at("watchNamespaces"), []any{installed})
		m.note("watchNamespaces: %s alone, the namespace Reloader's chart was installed in and, with watchGlobally: false, the only one it watched", installed)
		return false
	case global == false:
		// Installed elsewhere, ripple would watch a namespace Reloader never
		// did, and roll none of the workloads Reloader rolled.
		m.note("extraEnv: KUBERNETES_NAMESPACE from the pod's namespace, so that ripple, like Reloader with watchGlobally: false, watches only the namespace it runs in: install ripple into Reloader's namespace, or it watches another; the chart still grants its rights cluster-wide: for Roles in that namespace only, set watchNamespaces to it instead")
		return true
	case ignore != nil:
		m.set(at("namespacesToIgnore"), ignore)
		raw, _ := m.get(ignoreNamespaces)
		m.untrimmed(raw)
	}
	if hasSelector && !m.refusedSelector(namespaceSelector, selector, true) {
		m.set(at("namespaceSelector"), selector)
		if v, ok := selector.(string); ok {
			m.selectorRead(v)
		}
	}
	return false
}

// refusedSelector drops a selector ripple refuses to start with, which
// Reloader took: carried over, it would keep ripple from starting at all.
// Reloader's chart quotes namespaceSelector, so Reloader took it as one
// term, and passes resourceLabelSelector as it is, a line of CSV terms.
func (m *mapper) refusedSelector(p path, v any, quoted bool) bool {
	s, ok := v.(string)
	if !ok {
		return false
	}
	_, refused := options.ParseSelector(s)
	if refused == nil {
		return false
	}
	terms := []string{s}
	if !quoted {
		var err error
		if terms, err = csv.NewReader(strings.NewReader(s)).Read(); err != nil {
			m.drop(p, "ripple refuses it at start, as Reloader did (it is no line of comma-separated terms)")
			return true
		}
	}
	for i, t := range terms {
		terms[i] = reloaderSelector(t)
	}
	theirs := strings.Join(terms, ",")
	if _, err := labels.Parse(theirs); err != nil {
		m.drop(p, fmt.Sprintf("ripple refuses it at start, as Reloader did (it read it as %q, no label selector)", theirs))
		return true
	}
	m.drop(p, fmt.Sprintf("ripple refuses it at start (%v), where Reloader read it as %q: set that to select what Reloader did", refused, theirs))
	return true
}

// selectorRead notes a namespaceSelector that Reloader read otherwise than
// written, and ripple reads as written. Reloader's chart quotes the value,
// so Reloader took it as one term: of "team:platform,env:prod" it kept
// "team=platform,env", every namespace of the team with any env label.
func (m *mapper) selectorRead(v string) {
	theirs, err := labels.Parse(reloaderSelector(v))
	if err != nil {
		return
	}
	ours, err := options.ParseSelector(v)
	if err != nil || ours == nil || ours.String() == theirs.String() {
		return
	}
	m.note("namespaceSelector: Reloader read %q as %q, ripple reads it as written, %q: it may select fewer namespaces than Reloader did",
		v, theirs.String(), ours.String())
}

// reloaderSelector is what Reloader made of one term of its selector flag.
func reloaderSelector(term string) string {
	out := term
	if strings.Contains(term, ":") {
		if parts := strings.Split(term, ":"); parts[1] == "*" {
			out = parts[0]
		} else {
			out = parts[0] + "=" + parts[1]
		}
	}
	if parts := strings.Split(term, "="); len(parts) > 1 && parts[1] == "*" {
		out = parts[0]
	}
	return out
}

// watchOwnNamespace adds, last, the variable Reloader's chart sets with
// watchGlobally: false and no namespaces: ripple watches the namespace in
// KUBERNETES_NAMESPACE when no --namespaces is given, as Reloader does.
func (m *mapper) watchOwnNamespace() {
	extra, _ := m.res.Values["extraEnv"].([]any)
	m.set(at("extraEnv"), append(extra, map[string]any{"name": "KUBERNETES_NAMESPACE", "valueFrom": map[string]any{
		"fieldRef": map[string]any{"fieldPath": "metadata.namespace"},
	}}))
}

// untrimmed notes each entry of ignoreNamespaces that Reloader matched no
// namespace with, and ripple, trimming it, ignores: Reloader's chart
// passes the value as written, pflag reads the flag as a line of CSV,
// keeping the spaces around an entry, and Reloader compares names exactly.
// Workloads Reloader rolled there would silently stop rolling. A YAML list
// the chart renders as "[a b]": one entry, which names no namespace.
func (m *mapper) untrimmed(v any) {
	if list, ok := v.([]any); ok {
		for _, name := range list {
			m.note("namespacesToIgnore: ripple ignores %v, where Reloader rolled workloads: its chart passed the list as one entry, %q, which matched no namespace (take %v out of the list to keep them rolling)",
				name, fmt.Sprint(list), name)
		}
		return
	}
	s, ok := v.(string)
	if !ok {
		return
	}
	theirs, err := csv.NewReader(strings.NewReader(s)).Read()
	if err != nil {
		// Reloader refused the flag and never started.
		return
	}
	noted := map[string]bool{}
	for _, entry := range theirs {
		name := strings.TrimSpace(entry)
		if name == entry || name == "" || noted[name] || slices.Contains(theirs, name) {
			continue
		}
		noted[name] = true
		m.note("namespacesToIgnore: ripple ignores %s, where Reloader rolled workloads: it read the entry %q with its spaces and matched no namespace with it (take %s out of the list to keep them rolling)",
			name, entry, name)
	}
}

// names reads a list, or a comma-separated string, of names; any other
// value is dropped.
func (m *mapper) names(p path) []any {
	v, set := m.get(p)
	if !set {
		return nil
	}
	var parts []string
	switch t := v.(type) {
	case string:
		parts = strings.Split(t, ",")
	case []any:
		for _, e := range t {
			s, ok := e.(string)
			if !ok {
				m.drop(p, "not a list of namespace names")
				return nil
			}
			parts = append(parts, s)
		}
	default:
		m.drop(p, "not a list of namespace names")
		return nil
	}
	var out []any
	for _, e := range parts {
		if e = strings.TrimSpace(e); e != "" && !slices.Contains(out, any(e)) {
			out = append(out, e)
		}
	}
	return out
}

// customAnnotations are Reloader's custom_annotations keys, ripple's, and
// the flag ripple's chart passes each as.
var customAnnotations = [][3]string{
	{"auto", "auto", "auto-annotation"}, {"configmap_auto", "configmapAuto", "configmap-auto-annotation"},
	{"secret_auto", "secretAuto", "secret-auto-annotation"}, {"search", "autoSearch", "auto-search-annotation"},
	{"match", "searchMatch", "search-match-annotation"}, {"configmap", "configmap", "configmap-annotation"},
	{"secret", "secret", "secret-annotation"}, {"ignore", "ignore", "ignore-annotation"},
	{"pausePeriod", "pauseDeployment", "pause-deployment-annotation"},
	{"pauseTime", "pauseDeploymentTime", "pause-deployment-time-annotation"},
}

func (m *mapper) annotations() {
	customPath, webhookURL := at("reloader.custom_annotations"), at("reloader.webhookUrl")
	custom, withCustom := m.get(customPath)
	var flags []string
	for _, a := range customAnnotations {
		m.carry(customPath.child(a[0]), path{"annotations", a[1]})
		if v, ok := m.changed(customPath.child(a[0])); ok {
			flags = append(flags, fmt.Sprintf("--%s=%v", a[2], v))
		}
	}
	m.refusedAnnotations(flags)
	_, isMap := custom.(map[string]any)
	if _, ok := m.get(webhookURL); !ok {
		return
	}
	// Reloader's chart passes --webhook-url only inside its
	// custom_annotations block: without one, Reloader rolled workloads.
	if withCustom && isMap {
		m.carry(webhookURL, at("webhookUrl"))
		return
	}
	m.drop(webhookURL, "Reloader's chart passes it only with custom_annotations set, so your Reloader rolls workloads; with it, ripple would roll none")
}

// refusedAnnotations notes names ripple refuses to start with (one name
// for two annotations, say), which Reloader took.
func (m *mapper) refusedAnnotations(flags []string) {
	fs := pflag.NewFlagSet("annotations", pflag.ContinueOnError)
	// The flags alone: not the variables of the shell migrate-values runs in.
	p := options.NewParserEnv(fs, func(string) string { return "" })
	err := fs.Parse(flags)
	if err == nil {
		_, err = p.Options()
	}
	if err != nil {
		m.note("annotations: ripple refuses to start with these names, where Reloader read one annotation for two purposes or took any name: %s", strings.ReplaceAll(err.Error(), "\n", "; "))
	}
}

func (m *mapper) monitoring() {
	m.carry(at("reloader.serviceMonitor.enabled"), at("serviceMonitor.enabled"))
	m.carry(at("reloader.serviceMonitor.labels"), at("serviceMonitor.labels"))
	m.carry(at("reloader.serviceMonitor.interval"), at("serviceMonitor.interval"))
	m.carry(at("reloader.serviceMonitor.timeout"), at("serviceMonitor.scrapeTimeout"))
	if on, _ := m.get(at("reloader.podMonitor.enabled")); on == true {
		if _, both := m.res.Values["serviceMonitor"]; both {
			m.drop(at("reloader.podMonitor"), "ripple's ServiceMonitor, carried over, scrapes the same metrics")
			return
		}
		m.set(at("serviceMonitor.enabled"), true)
		m.carry(at("reloader.podMonitor.labels"), at("serviceMonitor.labels"))
		m.carry(at("reloader.podMonitor.interval"), at("serviceMonitor.interval"))
		m.carry(at("reloader.podMonitor.timeout"), at("serviceMonitor.scrapeTimeout"))
		m.note("serviceMonitor: for Reloader's podMonitor; ripple's chart scrapes its metrics Service")
	}
	m.carry(at("reloader.service.annotations"), at("metrics.service.annotations"))
	m.carry(at("reloader.service.labels"), at("metrics.service.labels"))
}

// carryName carries a name Reloader's objects took: installed beside a
// running Reloader, as the README's switch does, in its namespace, ripple's
// objects would take the same names, and Helm refuses to install over them.
func (m *mapper) carryName(from, to path, what string) {
	if v, ok := m.changed(from); ok {
		m.set(to, v)
		m.note("%s: %v names %s as it named Reloader's; installed in Reloader's namespace while it runs, Helm refuses objects that exist: change it there", to, v, what)
	}
}

func (m *mapper) identity() {
	m.carry(at("reloader.rbac.enabled"), at("rbac.create"))
	m.carry(at("reloader.serviceAccount.create"), at("serviceAccount.create"))
	name := at("reloader.serviceAccount.name")
	if create, _ := m.get(at("reloader.serviceAccount.create")); create == false {
		// ripple creates none: the name is that of one that exists.
		m.carry(name, at("serviceAccount.name"))
	} else {
		m.carryName(name, at("serviceAccount.name"), "ripple's ServiceAccount")
	}
	m.carry(at("reloader.serviceAccount.annotations"), at("serviceAccount.annotations"))
	m.carry(at("reloader.podDisruptionBudget.enabled"), at("podDisruptionBudget.enabled"))
	m.carry(at("reloader.podDisruptionBudget.minAvailable"), at("podDisruptionBudget.minAvailable"))
}

func (m *mapper) pod() {
	d := at("reloader.deployment")
	for _, k := range []string{"nodeSelector", "affinity", "tolerations", "topologySpreadConstraints", "priorityClassName", "resources"} {
		m.carry(d.child(k), path{k})
	}
	m.carry(d.child("pod", "annotations"), at("podAnnotations"))
	m.carry(d.child("volumes"), at("extraVolumes"))
	m.carry(d.child("volumeMounts"), at("extraVolumeMounts"))
	// Helm merges maps with the chart's defaults: these add to ripple's
	// security contexts rather than replace them.
	m.carry(d.child("containerSecurityContext"), at("securityContext"))
	m.carryChangedLeaves(d.child("securityContext"), at("podSecurityContext"))
	if m.carryChangedLeaves(d.child("labels"), at("podLabels")) {
		m.note("podLabels: Reloader's deployment.labels, on ripple's pods")
	}
}

// carryChangedLeaves copies each value under from that is not Reloader's
// default to the same place under to, a null that removes a default of
// Reloader's too (OpenShift's runAsUser: null, which lets the cluster
// choose the user), which then removes ripple's.
func (m *mapper) carryChangedLeaves(from, to path) bool {
	v, set := m.get(from)
	if _, isMap := v.(map[string]any); !isMap {
		if set {
			m.drop(from, "not a map")
		}
		return false
	}
	carried := false
	for _, leaf := range leaves(v, nil) {
		full := from.child(leaf...)
		lv := lookup(v, leaf)
		_, nulled := reloaderDefaults[full.String()]
		nulled = nulled && lv == nil
		if (nulled || !empty(lv)) && !isDefault(full, lv) && !silent(full) {
			m.set(to.child(leaf...), lv)
			carried = true
		}
	}
	return carried
}

// probeTimings are the probe settings both charts have.
var probeTimings = []string{"initialDelaySeconds", "periodSeconds", "timeoutSeconds", "failureThreshold"}

func (m *mapper) probes() {
	for _, probe := range []string{"livenessProbe", "readinessProbe"} {
		for _, k := range probeTimings {
			from := path{"reloader", "deployment", probe, k}
			v, ok := m.get(from)
			if !ok {
				continue
			}
			// Reloader's chart prints them as they are, so "5" works too.
			n, err := strconv.Atoi(fmt.Sprint(v))
			if err != nil || n < 0 {
				m.drop(from, "not a whole number of seconds or times")
				continue
			}
			m.set(path{probe, k}, n)
		}
	}
}
