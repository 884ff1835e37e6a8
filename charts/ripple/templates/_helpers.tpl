{{/* Names, labels and the decisions every template shares. */}}

{{- define "ripple.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "ripple.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/*
The full name and a suffix, as (list . "suffix"), for an object whose name must
fit a DNS label, 63 characters, as a Service's must: the full name is cut so
that the whole fits. The other suffixed names (-digest-key, -leader,
-leader-election, -dashboard) name kinds that take up to 253 characters and
keep the full name whole: cutting them would rename the key Secret or the
Lease of an existing installation on upgrade.
*/}}
{{- define "ripple.suffixedName" -}}
{{- $suffix := printf "-%s" (last .) }}
{{- include "ripple.fullname" (first .) | trunc (int (sub 63 (len $suffix))) | trimSuffix "-" }}{{ $suffix }}
{{- end }}

{{/* The metrics Service; its name is also the job label a ServiceMonitor gives ripple's series. */}}
{{- define "ripple.metricsServiceName" -}}
{{- include "ripple.suffixedName" (list . "metrics") }}
{{- end }}

{{- define "ripple.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "ripple.selectorLabels" -}}
app.kubernetes.io/name: {{ include "ripple.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "ripple.labels" -}}
helm.sh/chart: {{ include "ripple.chart" . }}
{{ include "ripple.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/component: controller
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{- define "ripple.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "ripple.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "ripple.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/* "true" when leader election is on: explicitly, or "auto" with several replicas. */}}
{{- define "ripple.ha" -}}
{{- $ha := .Values.highAvailability.enabled }}
{{- if eq (toString $ha) "auto" }}
{{- if gt (int .Values.replicas) 1 }}true{{ end }}
{{- else if $ha }}true{{ end }}
{{- end }}

{{- define "ripple.leaseName" -}}
{{- default (printf "%s-leader" (include "ripple.fullname" .)) .Values.highAvailability.leaderElection.id }}
{{- end }}

{{- define "ripple.leaseNamespace" -}}
{{- default .Release.Namespace .Values.highAvailability.leaderElection.namespace }}
{{- end }}

{{/* "true" when ripple ignores Secrets, or ConfigMaps (--resources-to-ignore is case-insensitive). */}}
{{- define "ripple.ignoresSecrets" -}}
{{- if eq (lower .Values.resourcesToIgnore) "secrets" }}true{{ end }}
{{- end }}
{{- define "ripple.ignoresConfigMaps" -}}
{{- if eq (lower .Values.resourcesToIgnore) "configmaps" }}true{{ end }}
{{- end }}

{{/* The digest key Secret as namespace/name: the one ripple creates, or an existing one. */}}
{{- define "ripple.digestKeySecret" -}}
{{- if .Values.digestKey.create }}
{{- printf "%s/%s-digest-key" .Release.Namespace (include "ripple.fullname" .) }}
{{- else if contains "/" .Values.digestKey.existingSecret }}
{{- .Values.digestKey.existingSecret }}
{{- else }}
{{- printf "%s/%s" .Release.Namespace .Values.digestKey.existingSecret }}
{{- end }}
{{- end }}

{{/* Fails the render on combinations that cannot work. */}}
{{- define "ripple.validate" -}}
{{- if and .Values.prometheusRule.enabled (not .Values.metrics.enabled) }}
{{- fail "prometheusRule needs metrics.enabled: its alerts read ripple's metrics, and RippleDown would fire for good" }}
{{- end }}
{{- if and .Values.prometheusRule.enabled (not .Values.serviceMonitor.enabled) (not .Values.prometheusRule.job) }}
{{- fail "prometheusRule selects ripple's series by the job label serviceMonitor.enabled gives them: enable it, or set prometheusRule.job to the job your scrape gives them; otherwise RippleDown fires for good" }}
{{- end }}
{{- if and .Values.watchNamespaces .Values.namespaceSelector }}
{{- fail "namespaceSelector only applies to the whole cluster, and needs to list and watch Namespaces, a cluster-scoped right that watchNamespaces grants none of: use one or the other" }}
{{- end }}
{{- if and .Values.watchNamespaces .Values.namespacesToIgnore }}
{{- fail "namespacesToIgnore only applies to the whole cluster: with watchNamespaces ripple ignores it, as Reloader does; use one or the other" }}
{{- end }}
{{- if and (not .Values.digestKey.create) (not .Values.digestKey.existingSecret) }}
{{- fail "digestKey.create=false needs digestKey.existingSecret: ripple always keys its digests" }}
{{- end }}
{{- if and .Values.alerts.enabled (not .Values.alerts.webhookUrl) (not .Values.alerts.webhookUrlSecret.name) }}
{{- fail "alerts.enabled needs alerts.webhookUrl or alerts.webhookUrlSecret.name: the webhook alerts go to" }}
{{- end }}
{{- if and (gt (int .Values.replicas) 1) (not (include "ripple.ha" .)) }}
{{- fail "replicas above 1 need highAvailability.enabled (auto or true): without leader election every replica would roll workloads" }}
{{- end }}
{{- if eq (include "ripple.workloadResources" .) "[]" }}
{{- fail "ignoredWorkloadTypes ignores every workload kind ripple would roll, so it would roll nothing: ripple refuses to start with it" }}
{{- end }}
{{- if and (eq .Values.reloadStrategy "refresh") (not .Values.podRefresh) }}
{{- fail "reloadStrategy: refresh needs podRefresh: true (--enable-pod-refresh), which grants ripple list and patch on pods: ripple refuses to start without it" }}
{{- end }}
{{- /* ripple's longest pause, rollout interval and debounce (annotations.MaxPeriod), in nanoseconds. */}}
{{- $day := 86400000000000 }}
{{- range $name, $d := dict "pausePeriod" .Values.pausePeriod "pacing.minRolloutInterval" .Values.pacing.minRolloutInterval "debounce" .Values.debounce }}
{{- $ns := include "ripple.nanoseconds" $d }}
{{- if or (eq $ns "over") (gt (int64 $ns) $day) }}
{{- fail (printf "%s %s is over 24h, the longest ripple takes: it refuses to start with it" $name $d) }}
{{- end }}
{{- end }}
{{- $le := .Values.highAvailability.leaderElection }}
{{- range $name, $d := dict "debounce" .Values.debounce "pacing.rolloutTimeout" .Values.pacing.rolloutTimeout "highAvailability.leaderElection.leaseDuration" $le.leaseDuration "highAvailability.leaderElection.renewDeadline" $le.renewDeadline "highAvailability.leaderElection.retryPeriod" $le.retryPeriod }}
{{- if eq (include "ripple.nanoseconds" $d) "over" }}
{{- fail (printf "%s %s is longer than a Go duration holds (about 2562047h): ripple refuses to start with it" $name $d) }}
{{- end }}
{{- end }}
{{- /* The schema's pattern refuses 0s; this is for what rounds down to 0, such as 0.1ns. */}}
{{- if eq (include "ripple.nanoseconds" .Values.pacing.rolloutTimeout) "0" }}
{{- fail (printf "pacing.rolloutTimeout %s is 0: ripple refuses to start unless it is positive" .Values.pacing.rolloutTimeout) }}
{{- end }}
{{- if include "ripple.ha" . }}
{{- $lease := int64 (include "ripple.nanoseconds" $le.leaseDuration) }}
{{- $renew := int64 (include "ripple.nanoseconds" $le.renewDeadline) }}
{{- $retry := int64 (include "ripple.nanoseconds" $le.retryPeriod) }}
{{- if or (le $lease $renew) (le $renew $retry) (le $retry 0) }}
{{- fail (printf "highAvailability.leaderElection: leaseDuration (%s) must exceed renewDeadline (%s), which must exceed retryPeriod (%s), above 0: ripple refuses to start otherwise" $le.leaseDuration $le.renewDeadline $le.retryPeriod) }}
{{- end }}
{{- end }}
{{- end }}

{{/*
The nanoseconds of a Go duration of the form the schema allows ("0", or
components such as 1h or 2.5s), counted as Go's time.ParseDuration counts
them; "over" when that is more than a Go duration holds, where ripple's flag
parsing fails.
*/}}
{{- define "ripple.nanoseconds" -}}
{{- $max := 9223372036854775807 }}
{{- $units := dict "ns" 1 "us" 1000 "µs" 1000 "ms" 1000000 "s" 1000000000 "m" 60000000000 "h" 3600000000000 }}
{{- $total := 0 }}
{{- $over := false }}
{{- range regexFindAll "[0-9]+(\\.[0-9]+)?(ns|us|µs|ms|s|m|h)" (toString .) -1 }}
{{- $unit := int64 (get $units (regexFind "[^0-9.]+$" .)) }}
{{- /* Without leading zeros: strings starting with 0 would be read as octal. */}}
{{- $whole := regexReplaceAll "^0+" (regexFind "^[0-9]+" .) "" }}
{{- $frac := regexFind "\\.[0-9]+" . | trimPrefix "." | trunc 18 }}
{{- if or (gt (len $whole) 19) (and (eq (len $whole) 19) (gt $whole "9223372036854775807")) }}
{{- $over = true }}
{{- else }}
{{- $v := int64 (default "0" $whole) }}
{{- if gt $v (div $max $unit) }}
{{- $over = true }}
{{- else }}
{{- $v = mul $v $unit }}
{{- if $frac }}
{{- $f := float64 (default "0" (regexReplaceAll "^0+" $frac "")) }}
{{- $scale := float64 (printf "1%s" (repeat (len $frac) "0")) }}
{{- $v = add $v (int64 (mulf $f (divf (float64 $unit) $scale))) }}
{{- end }}
{{- if or (lt $v 0) (gt $v (sub $max $total)) }}
{{- $over = true }}
{{- else }}
{{- $total = add $total $v }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
{{- if $over }}over{{ else }}{{ $total }}{{ end }}
{{- end }}

{{/* The workload kinds that are turned on and not ignored, as API resource names. */}}
{{- define "ripple.workloadResources" -}}
{{- $ignored := list }}
{{- range .Values.ignoredWorkloadTypes }}{{ $ignored = append $ignored (lower .) }}{{ end }}
{{- $kinds := list "deployments" "statefulsets" "daemonsets" "cronjobs" "jobs" }}
{{- if .Values.isArgoRollouts }}{{ $kinds = append $kinds "rollouts" }}{{ end }}
{{- $out := list }}
{{- range $kinds }}
{{- if not (has . $ignored) }}{{ $out = append $out . }}{{ end }}
{{- end }}
{{- toJson $out }}
{{- end }}

{{/*
The rules ripple needs in every namespace it watches, following its flags:
workloads it may roll, the config objects it watches, and the Events it
reports on workloads (through the events.k8s.io API, which ripple only
creates: it never patches a series).
*/}}
{{- define "ripple.watchRules" -}}
{{- $workloads := include "ripple.workloadResources" . | fromJsonArray }}
{{- $apps := list }}
{{- range $workloads }}{{ if has . (list "deployments" "statefulsets" "daemonsets") }}{{ $apps = append $apps . }}{{ end }}{{ end }}
{{- if $apps }}
- apiGroups: ["apps"]
  resources: {{ toJson $apps }}
  verbs: ["get", "list", "watch", "patch"]
{{- end }}
{{- /* A Rollout with workloadRef takes its pod template from a Deployment, which ripple reads but does not write. */}}
{{- if and (has "rollouts" $workloads) (not (has "deployments" $workloads)) }}
- apiGroups: ["apps"]
  resources: ["deployments"]
  verbs: ["get", "list", "watch"]
{{- end }}
{{- if has "rollouts" $workloads }}
- apiGroups: ["argoproj.io"]
  resources: ["rollouts"]
  verbs: ["get", "list", "watch", "patch"]
{{- end }}
{{- if has "cronjobs" $workloads }}
- apiGroups: ["batch"]
  resources: ["cronjobs"]
  verbs: ["get", "list", "watch", "patch"]
{{- end }}
{{- /* A CronJob's change creates a Job, once none of the CronJob's runs (under concurrencyPolicy Forbid); a Job's change deletes and recreates it. With Jobs ignored, ripple caches none: it lists a CronJob's Jobs from the API server, to see whether one runs and to resume a pending run, and creates its run. */}}
{{- if has "jobs" $workloads }}
- apiGroups: ["batch"]
  resources: ["jobs"]
  verbs: ["get", "list", "watch", "patch", "delete", "create"]
{{- else if has "cronjobs" $workloads }}
- apiGroups: ["batch"]
  resources: ["jobs"]
  verbs: ["list", "create"]
{{- end }}
{{- $config := list }}
{{- if not (include "ripple.ignoresConfigMaps" .) }}{{ $config = append $config "configmaps" }}{{ end }}
{{- if not (include "ripple.ignoresSecrets" .) }}{{ $config = append $config "secrets" }}{{ end }}
- apiGroups: [""]
  resources: {{ toJson $config }}
  verbs: ["get", "list", "watch"]
{{- /* With CSI integration, the statuses the secrets store CSI driver writes. */}}
{{- if .Values.csiIntegration }}
- apiGroups: ["secrets-store.csi.x-k8s.io"]
  resources: ["secretproviderclasspodstatuses"]
  verbs: ["get", "list", "watch"]
{{- end }}
{{- /* The refresh strategy lists a workload's pods (metadata) and patches an annotation on each. */}}
{{- if .Values.podRefresh }}
- apiGroups: [""]
  resources: ["pods"]
  verbs: ["list", "patch"]
{{- end }}
- apiGroups: ["events.k8s.io"]
  resources: ["events"]
  verbs: ["create"]
{{- end }}

{{/* ripple's command line, from the values. */}}
{{- define "ripple.args" -}}
{{- $v := .Values }}
{{- $args := list }}
{{- with $v.kubeconfig }}{{ $args = append $args (printf "--kubeconfig=%s" .) }}{{ end }}
{{- with $v.watchNamespaces }}{{ $args = append $args (printf "--namespaces=%s" (join "," .)) }}{{ end }}
{{- with $v.namespacesToIgnore }}{{ $args = append $args (printf "--namespaces-to-ignore=%s" (join "," .)) }}{{ end }}
{{- with $v.namespaceSelector }}{{ $args = append $args (printf "--namespace-selector=%s" .) }}{{ end }}
{{- with $v.resourceLabelSelector }}{{ $args = append $args (printf "--resource-label-selector=%s" .) }}{{ end }}
{{- with $v.resourcesToIgnore }}{{ $args = append $args (printf "--resources-to-ignore=%s" .) }}{{ end }}
{{- with $v.ignoredWorkloadTypes }}{{ $args = append $args (printf "--ignored-workload-types=%s" (join "," .)) }}{{ end }}
{{- if $v.isArgoRollouts }}{{ $args = append $args "--is-Argo-Rollouts=true" }}{{ end }}
{{- if ne $v.cronjobStrategy "job" }}{{ $args = append $args (printf "--cronjob-strategy=%s" $v.cronjobStrategy) }}{{ end }}
{{- if $v.autoReloadAll }}{{ $args = append $args "--auto-reload-all" }}{{ end }}
{{- if $v.reloadOnCreate }}{{ $args = append $args "--reload-on-create" }}{{ end }}
{{- if $v.reloadOnDelete }}{{ $args = append $args "--reload-on-delete" }}{{ end }}
{{- if $v.csiIntegration }}{{ $args = append $args "--enable-csi-integration" }}{{ end }}
{{- $args = append $args (printf "--debounce=%s" $v.debounce) }}
{{- if ne $v.reloadStrategy "annotations" }}{{ $args = append $args (printf "--reload-strategy=%s" $v.reloadStrategy) }}{{ end }}
{{- with $v.pausePeriod }}{{ $args = append $args (printf "--pause-period=%s" .) }}{{ end }}
{{- with $v.webhookUrl }}{{ $args = append $args (printf "--webhook-url=%s" .) }}{{ end }}
{{- if $v.dryRun }}{{ $args = append $args "--dry-run" }}{{ end }}
{{- if $v.keyPrecision }}{{ $args = append $args "--key-precision" }}{{ end }}
{{- if $v.podRefresh }}{{ $args = append $args "--enable-pod-refresh" }}{{ end }}
{{- with $v.pacing }}
{{- if .maxRolloutsInProgress }}{{ $args = append $args (printf "--max-rollouts-in-progress=%d" (int .maxRolloutsInProgress)) }}{{ end }}
{{- if ne .rolloutTimeout "5m" }}{{ $args = append $args (printf "--rollout-timeout=%s" .rolloutTimeout) }}{{ end }}
{{- with .minRolloutInterval }}{{ $args = append $args (printf "--min-rollout-interval=%s" .) }}{{ end }}
{{- end }}
{{- $a := $v.annotations }}
{{- with $a.auto }}{{ $args = append $args (printf "--auto-annotation=%s" .) }}{{ end }}
{{- with $a.configmapAuto }}{{ $args = append $args (printf "--configmap-auto-annotation=%s" .) }}{{ end }}
{{- with $a.secretAuto }}{{ $args = append $args (printf "--secret-auto-annotation=%s" .) }}{{ end }}
{{- with $a.autoSearch }}{{ $args = append $args (printf "--auto-search-annotation=%s" .) }}{{ end }}
{{- with $a.searchMatch }}{{ $args = append $args (printf "--search-match-annotation=%s" .) }}{{ end }}
{{- with $a.configmap }}{{ $args = append $args (printf "--configmap-annotation=%s" .) }}{{ end }}
{{- with $a.secret }}{{ $args = append $args (printf "--secret-annotation=%s" .) }}{{ end }}
{{- with $a.ignore }}{{ $args = append $args (printf "--ignore-annotation=%s" .) }}{{ end }}
{{- with $a.configmapExclude }}{{ $args = append $args (printf "--configmap-exclude-annotation=%s" .) }}{{ end }}
{{- with $a.secretExclude }}{{ $args = append $args (printf "--secret-exclude-annotation=%s" .) }}{{ end }}
{{- with $a.pauseDeployment }}{{ $args = append $args (printf "--pause-deployment-annotation=%s" .) }}{{ end }}
{{- with $a.pauseDeploymentTime }}{{ $args = append $args (printf "--pause-deployment-time-annotation=%s" .) }}{{ end }}
{{- $args = append $args (printf "--hmac-key-secret=%s" (include "ripple.digestKeySecret" .)) }}
{{- if include "ripple.ha" . }}
{{- $le := $v.highAvailability.leaderElection }}
{{- $args = append $args "--enable-ha" }}
{{- $args = append $args (printf "--leader-election-id=%s" (include "ripple.leaseName" .)) }}
{{- $args = append $args (printf "--leader-election-namespace=%s" (default "$(POD_NAMESPACE)" $le.namespace)) }}
{{- $args = append $args (printf "--leader-election-lease-duration=%s" $le.leaseDuration) }}
{{- $args = append $args (printf "--leader-election-renew-deadline=%s" $le.renewDeadline) }}
{{- $args = append $args (printf "--leader-election-retry-period=%s" $le.retryPeriod) }}
{{- end }}
{{- $args = append $args (printf "--log-format=%s" $v.logFormat) }}
{{- $args = append $args (printf "--log-level=%s" $v.logLevel) }}
{{- $args = append $args (printf "--workers=%d" (int $v.workers)) }}
{{- $args = append $args (printf "--kube-api-qps=%v" $v.kubeAPI.qps) }}
{{- $args = append $args (printf "--kube-api-burst=%d" (int $v.kubeAPI.burst)) }}
{{- if $v.metrics.enabled }}
{{- $args = append $args (printf "--metrics-bind-address=:%d" (int $v.metrics.port)) }}
{{- else }}
{{- $args = append $args "--metrics-bind-address=0" }}
{{- end }}
{{- $args = append $args (printf "--health-probe-bind-address=:%d" (int $v.health.port)) }}
{{- if $v.enablePprof }}{{ $args = concat $args (list "--enable-pprof" (printf "--pprof-addr=%s" $v.pprofAddr)) }}{{ end }}
{{- range $v.extraArgs }}{{ $args = append $args . }}{{ end }}
{{- toYaml $args }}
{{- end }}
