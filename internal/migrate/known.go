package migrate

import (
	"fmt"
	"slices"
	"strings"
)

// reloaderSettings are the values stakater/Reloader's chart reads (its
// values.yaml and every .Values path of its templates, at commit
// 655a2b3814baadb69d3d1e105242d6cc8875d7cb). Anything under one of them is
// that setting's own content: a map of labels, an affinity, a probe.
var reloaderSettings = []string{
	"global.imageRegistry", "global.imagePullSecrets", "kubernetes.host",
	"nameOverride", "fullnameOverride", "namespace", "image",
	"reloader.autoReloadAll", "reloader.isArgoRollouts", "reloader.isOpenshift",
	"reloader.ignoreSecrets", "reloader.ignoreConfigMaps", "reloader.ignoreJobs", "reloader.ignoreCronJobs",
	"reloader.reloadOnCreate", "reloader.reloadOnDelete", "reloader.syncAfterRestart", "reloader.reloadStrategy",
	"reloader.ignoreNamespaces", "reloader.namespaceSelector", "reloader.resourceLabelSelector",
	"reloader.logFormat", "reloader.logLevel", "reloader.watchGlobally", "reloader.namespaces",
	"reloader.enableHA", "reloader.enablePProf", "reloader.enableCSIIntegration", "reloader.pprofAddr",
	"reloader.readOnlyRootFileSystem", "reloader.legacy.rbac", "reloader.matchLabels",
	"reloader.enableMetricsByNamespace", "reloader.webhookUrl",
	"reloader.deployment.dnsConfig", "reloader.deployment.replicas", "reloader.deployment.revisionHistoryLimit",
	"reloader.deployment.hostUsers", "reloader.deployment.nodeSelector", "reloader.deployment.affinity",
	"reloader.deployment.volumeMounts", "reloader.deployment.volumes", "reloader.deployment.securityContext",
	"reloader.deployment.containerSecurityContext", "reloader.deployment.tolerations",
	"reloader.deployment.topologySpreadConstraints", "reloader.deployment.annotations", "reloader.deployment.labels",
	"reloader.deployment.env.open", "reloader.deployment.env.secret", "reloader.deployment.env.field",
	"reloader.deployment.env.existing", "reloader.deployment.livenessProbe", "reloader.deployment.readinessProbe",
	"reloader.deployment.resources", "reloader.deployment.pod.annotations", "reloader.deployment.priorityClassName",
	"reloader.deployment.runtimeClassName", "reloader.deployment.schedulerName",
	"reloader.deployment.gomaxprocsOverride", "reloader.deployment.gomemlimitOverride",
	"reloader.deployment.automountServiceAccountToken",
	"reloader.service", "reloader.rbac.enabled", "reloader.rbac.labels",
	"reloader.serviceAccount.create", "reloader.serviceAccount.labels", "reloader.serviceAccount.annotations",
	"reloader.serviceAccount.name", "reloader.serviceAccount.automountServiceAccountToken",
	"reloader.custom_annotations.auto", "reloader.custom_annotations.configmap", "reloader.custom_annotations.configmap_auto",
	"reloader.custom_annotations.secret", "reloader.custom_annotations.secret_auto", "reloader.custom_annotations.search",
	"reloader.custom_annotations.match", "reloader.custom_annotations.ignore", "reloader.custom_annotations.pausePeriod",
	"reloader.custom_annotations.pauseTime",
	"reloader.serviceMonitor", "reloader.podMonitor",
	"reloader.podDisruptionBudget.enabled", "reloader.podDisruptionBudget.minAvailable",
	"reloader.podDisruptionBudget.maxUnavailable",
	"reloader.netpol", "reloader.verticalPodAutoscaler",
}

// known reports whether p is one of Reloader's settings, inside one, or a
// map that holds some (left empty). A key holding dots is none, even one
// that spells a setting: Helm keeps "reloader.enableHA" at the top as a
// key of its own, which Reloader's chart never reads.
func known(p path) bool {
	for q := p; len(q) > 0; q = q[:len(q)-1] {
		if slices.Contains(reloaderSettings, q.String()) {
			return true
		}
	}
	prefix := p.String() + "."
	return slices.ContainsFunc(reloaderSettings, func(s string) bool { return strings.HasPrefix(s, prefix) })
}

// unknownKeys fails on values that are no setting of Reloader's chart: a
// typo there did nothing in Reloader, and would do nothing in ripple.
func unknownKeys(src map[string]any) error {
	var bad []string
	for _, p := range leaves(src, nil) {
		if !known(p) {
			bad = append(bad, p.String())
		}
	}
	if len(bad) == 0 {
		return nil
	}
	slices.Sort(bad)
	return fmt.Errorf("%w: %s", ErrUnknownKeys, strings.Join(bad, ", "))
}
