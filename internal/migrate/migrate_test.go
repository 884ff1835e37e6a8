package migrate

import (
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// goldens are the output for Reloader's own default values and for
// realistic values files; test/chart renders the chart with each.
var goldens = []string{"reloader-default", "ha-namespaces", "alerts-annotations", "argo-openshift"}

func TestValuesPrintsRipplesValuesAndEveryDroppedSetting(t *testing.T) {
	for _, name := range goldens {
		t.Run(name, func(t *testing.T) {
			in, err := os.ReadFile(filepath.Join("testdata", name+".yaml"))
			if err != nil {
				t.Fatal(err)
			}
			res, err := Values(in)
			if err != nil {
				t.Fatalf("Values: %v", err)
			}
			got, err := res.Render()
			if err != nil {
				t.Fatalf("Render: %v", err)
			}
			golden := filepath.Join("testdata", name+".golden")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("migrate-values of %s:\n%s\nwant:\n%s", name, got, want)
			}
		})
	}
}

// base is what every migration sets: Reloader's strategy and log format.
const base = "reloadStrategy: env-vars\nlogFormat: text\n"

// mapping is a values file and what migrate-values makes of it.
type mapping struct {
	name, in string
	// want is ripple's values, but for base.
	want string
	// dropped are the settings reported as not carried over.
	dropped []string
}

func TestValuesMapsEachSetting(t *testing.T) {
	tests := []mapping{
		{name: "an empty file"},
		{name: "defaults left alone", in: "reloader: {rbac: {enabled: true}, deployment: {replicas: 1, labels: {provider: stakater}}}\nimage: {repository: mirror.example/stakater/reloader, tag: v1}"},
		{name: "names", in: "nameOverride: r\nfullnameOverride: rr", want: "nameOverride: r\nfullnameOverride: rr"},
		{name: "pull secrets by name or as objects", in: "global: {imagePullSecrets: [a, {name: b}]}", want: "imagePullSecrets: [{name: a}, {name: b}]"},
		{name: "pull policy", in: "image: {pullPolicy: Always}", want: "image: {pullPolicy: Always}"},
		{name: "another image", in: "image: {name: me/reloader}", dropped: []string{"image.name"}},
		{name: "watch flags", in: "reloader: {autoReloadAll: true, isArgoRollouts: true, reloadOnCreate: true, reloadOnDelete: true, resourceLabelSelector: a=b}",
			want: "autoReloadAll: true\nisArgoRollouts: true\nreloadOnCreate: true\nreloadOnDelete: true\nresourceLabelSelector: a=b"},
		// Reloader's chart compares these with eq ... true: any other type
		// made it fail to render.
		{name: "watch flags not booleans", in: "reloader: {autoReloadAll: 'yes', reloadOnCreate: 'false', reloadOnDelete: 1}",
			dropped: []string{"reloader.autoReloadAll", "reloader.reloadOnCreate", "reloader.reloadOnDelete"}},
		{name: "pprof and CSI", in: "reloader: {enablePProf: true, pprofAddr: ':7070', enableCSIIntegration: true}", want: "enablePprof: true\npprofAddr: ':7070'\ncsiIntegration: true"},
		{name: "metrics by namespace", in: "reloader: {enableMetricsByNamespace: true}", want: "metrics: {countByNamespace: true}"},
		{name: "HA with replicas", in: "reloader: {enableHA: true, deployment: {replicas: 3}}", want: "highAvailability: {enabled: true}\nreplicas: 3"},
		{name: "replicas without HA run one", in: "reloader: {deployment: {replicas: 3}}", dropped: []string{"reloader.deployment.replicas"}},
		{name: "replicas not a number", in: "reloader: {enableHA: true, deployment: {replicas: many}}", want: "highAvailability: {enabled: true}", dropped: []string{"reloader.deployment.replicas"}},
		{name: "ignored secrets", in: "reloader: {ignoreSecrets: true}", want: "resourcesToIgnore: secrets"},
		{name: "ignored ConfigMaps", in: "reloader: {ignoreConfigMaps: true}", want: "resourcesToIgnore: configMaps"},
		{name: "both ignored", in: "reloader: {ignoreConfigMaps: true, ignoreSecrets: true}", want: "resourcesToIgnore: secrets", dropped: []string{"reloader.ignoreConfigMaps"}},
		{name: "ignored jobs", in: "reloader: {ignoreJobs: true, ignoreCronJobs: true}", want: "ignoredWorkloadTypes: [jobs, cronjobs]"},
		// Reloader's chart tests these with if, as Helm counts: the string
		// "false" is set, and turns them on; 0 is not.
		{name: "ignores as strings", in: "reloader: {ignoreSecrets: 'false', ignoreJobs: 'no', ignoreCronJobs: 0}", want: "resourcesToIgnore: secrets\nignoredWorkloadTypes: [jobs]"},
		{name: "ConfigMaps ignored as a string", in: "reloader: {ignoreConfigMaps: 'yes'}", want: "resourcesToIgnore: configMaps"},
		{name: "both ignored as strings", in: "reloader: {ignoreConfigMaps: 'true', ignoreSecrets: 'true'}", want: "resourcesToIgnore: secrets", dropped: []string{"reloader.ignoreConfigMaps"}},
		{name: "HA as a string, with replicas", in: "reloader: {enableHA: 'false', deployment: {replicas: 3}}", want: "highAvailability: {enabled: true}\nreplicas: 3"},
		{name: "annotations strategy", in: "reloader: {reloadStrategy: annotations}", want: "reloadStrategy: annotations"},
		{name: "an unknown strategy", in: "reloader: {reloadStrategy: restart}", want: "reloadStrategy: null", dropped: []string{"reloader.reloadStrategy"}},
		{name: "JSON logs at debug", in: "reloader: {logFormat: json, logLevel: debug}", want: "logFormat: json\nlogLevel: debug"},
		{name: "a fatal log level", in: "reloader: {logLevel: fatal}", want: "logLevel: error"},
		{name: "a log level in capitals", in: "reloader: {logLevel: DEBUG}", want: "logLevel: debug"},
		{name: "logrus's warn", in: "reloader: {logLevel: warn}", want: "logLevel: warn"},
		{name: "an unknown log level", in: "reloader: {logLevel: loud}", dropped: []string{"reloader.logLevel"}},
		{name: "ignored namespaces", in: "reloader: {ignoreNamespaces: 'a, b,,a'}", want: "namespacesToIgnore: [a, b]"},
		{name: "a namespace selector", in: "reloader: {namespaceSelector: 'team=a'}", want: "namespaceSelector: team=a"},
		{name: "namespaces", in: "reloader: {namespaces: [a, b]}", want: "watchNamespaces: [a, b]"},
		// Reloader's chart refuses namespaces with watchGlobally: true, and
		// passes ignoreNamespaces and namespaceSelector only with it: ripple
		// watches every one listed.
		{name: "namespaces with some ignored", in: "reloader: {namespaces: [a, b], ignoreNamespaces: b}", want: "watchNamespaces: [a, b]", dropped: []string{"reloader.ignoreNamespaces"}},
		{name: "namespaces all ignored", in: "reloader: {namespaces: [a], ignoreNamespaces: a}", want: "watchNamespaces: [a]", dropped: []string{"reloader.ignoreNamespaces"}},
		{name: "namespaces and a selector", in: "reloader: {namespaces: [a], namespaceSelector: x=y}", want: "watchNamespaces: [a]", dropped: []string{"reloader.namespaceSelector"}},
		// Reloader's chart adds the namespace it installs into to the list.
		{name: "namespaces and Reloader's namespace", in: "namespace: tools\nreloader: {namespaces: [a, b]}", want: "watchNamespaces: [a, b, tools]", dropped: []string{"namespace"}},
		{name: "namespaces holding Reloader's namespace", in: "namespace: a\nreloader: {namespaces: 'a,b'}", want: "watchNamespaces: [a, b]", dropped: []string{"namespace"}},
		// watchGlobally: false without a list watches Reloader's own
		// namespace only, never the whole cluster.
		{name: "only its own namespace", in: "reloader: {watchGlobally: false, ignoreNamespaces: a, namespaceSelector: x=y}",
			want:    "extraEnv: [{name: KUBERNETES_NAMESPACE, valueFrom: {fieldRef: {fieldPath: metadata.namespace}}}]",
			dropped: []string{"reloader.ignoreNamespaces", "reloader.namespaceSelector"}},
		{name: "only its own namespace, after the other variables", in: "reloader: {watchGlobally: false, deployment: {env: {open: {A: b}}}}",
			want: "extraEnv: [{name: A, value: b}, {name: KUBERNETES_NAMESPACE, valueFrom: {fieldRef: {fieldPath: metadata.namespace}}}]"},
		{name: "only its own namespace, named", in: "namespace: tools\nreloader: {watchGlobally: false}", want: "watchNamespaces: [tools]", dropped: []string{"namespace"}},
		{name: "namespaces not globally", in: "reloader: {watchGlobally: false, namespaces: [a], ignoreNamespaces: a}", want: "watchNamespaces: [a]", dropped: []string{"reloader.ignoreNamespaces"}},
		{name: "custom annotations", in: "reloader: {custom_annotations: {auto: a, configmap_auto: b, secret_auto: c, search: d, match: e, configmap: f, secret: g, ignore: h, pausePeriod: i, pauseTime: j}}",
			want: "annotations: {auto: a, configmapAuto: b, secretAuto: c, autoSearch: d, searchMatch: e, configmap: f, secret: g, ignore: h, pauseDeployment: i, pauseDeploymentTime: j}"},
		{name: "a webhook with custom annotations", in: "reloader: {webhookUrl: 'https://h.example/x', custom_annotations: {auto: a}}", want: "webhookUrl: https://h.example/x\nannotations: {auto: a}"},
		{name: "a webhook Reloader's chart never passed", in: "reloader: {webhookUrl: 'https://h.example/x'}", dropped: []string{"reloader.webhookUrl"}},
		{name: "a ServiceMonitor", in: "reloader: {serviceMonitor: {enabled: true, labels: {r: p}, interval: 1m, timeout: 10s, namespace: mon}}",
			want: "serviceMonitor: {enabled: true, labels: {r: p}, interval: 1m, scrapeTimeout: 10s}", dropped: []string{"reloader.serviceMonitor.namespace"}},
		{name: "a PodMonitor", in: "reloader: {podMonitor: {enabled: true, interval: 1m}}", want: "serviceMonitor: {enabled: true, interval: 1m}"},
		{name: "both monitors", in: "reloader: {serviceMonitor: {enabled: true}, podMonitor: {enabled: true}}", want: "serviceMonitor: {enabled: true}", dropped: []string{"reloader.podMonitor"}},
		{name: "the Service", in: "reloader: {service: {port: 9090, labels: {a: b}, annotations: {c: d}}}", want: "metrics: {service: {labels: {a: b}, annotations: {c: d}}}", dropped: []string{"reloader.service.port"}},
		{name: "identity", in: "reloader: {rbac: {enabled: false, labels: {a: b}}, serviceAccount: {create: false, name: sa, annotations: {a: b}}}",
			want: "rbac: {create: false}\nserviceAccount: {create: false, name: sa, annotations: {a: b}}", dropped: []string{"reloader.rbac.labels.a"}},
		{name: "a PodDisruptionBudget", in: "reloader: {podDisruptionBudget: {enabled: true, minAvailable: 1, maxUnavailable: 1}}",
			want: "podDisruptionBudget: {enabled: true, minAvailable: 1}", dropped: []string{"reloader.podDisruptionBudget.maxUnavailable"}},
		{name: "scheduling and resources", in: `reloader: {deployment: {nodeSelector: {a: b}, affinity: {x: y}, tolerations: [{key: k}], topologySpreadConstraints: [{maxSkew: 1}], priorityClassName: p, resources: {limits: {memory: 1Gi}}}}`,
			want: "nodeSelector: {a: b}\naffinity: {x: y}\ntolerations: [{key: k}]\ntopologySpreadConstraints: [{maxSkew: 1}]\npriorityClassName: p\nresources: {limits: {memory: 1Gi}}"},
		{name: "pod annotations and volumes", in: "reloader: {deployment: {pod: {annotations: {a: b}}, volumes: [{name: v}], volumeMounts: [{name: v}]}}",
			want: "podAnnotations: {a: b}\nextraVolumes: [{name: v}]\nextraVolumeMounts: [{name: v}]"},
		{name: "security contexts", in: "reloader: {deployment: {containerSecurityContext: {privileged: false}, securityContext: {runAsUser: 65534, fsGroup: 2000}}}",
			want: "securityContext: {privileged: false}\npodSecurityContext: {fsGroup: 2000}"},
		{name: "OpenShift's runAsUser: null, which lets the cluster choose", in: "reloader: {deployment: {securityContext: {runAsUser: null}}}",
			want: "podSecurityContext: {runAsUser: null}"},
		{name: "pod labels", in: "reloader: {deployment: {labels: {provider: stakater, version: v1, team: a}}}", want: "podLabels: {team: a}"},
		{name: "labels and a security context that are no map", in: "reloader: {deployment: {labels: [a], securityContext: 1}}",
			dropped: []string{"reloader.deployment.labels", "reloader.deployment.securityContext"}},
		{name: "probes", in: "reloader: {deployment: {livenessProbe: {timeoutSeconds: '3', successThreshold: 1}, readinessProbe: {periodSeconds: 7, failureThreshold: x}}}",
			want:    "livenessProbe: {timeoutSeconds: 3}\nreadinessProbe: {periodSeconds: 7}",
			dropped: []string{"reloader.deployment.livenessProbe.successThreshold", "reloader.deployment.readinessProbe.failureThreshold"}},
		{name: "alerts in the open", in: "reloader: {deployment: {env: {open: {ALERT_ON_RELOAD: 'true', ALERT_SINK: Slack, ALERT_WEBHOOK_URL: 'https://h.example/x', ALERT_ADDITIONAL_INFO: c1, OTHER: 1}}}}",
			want: "alerts: {enabled: true, sink: slack, webhookUrl: 'https://h.example/x', additionalInfo: c1}\nextraEnv: [{name: OTHER, value: '1'}]"},
		{name: "the webhook sink of Reloader's README", in: "reloader: {deployment: {env: {open: {ALERT_SINK: webhook}}}}", want: "alerts: {sink: raw}"},
		{name: "an unknown sink", in: "reloader: {deployment: {env: {open: {ALERT_SINK: pager}}}}", dropped: []string{"reloader.deployment.env.open.ALERT_SINK"}},
		{name: "a webhook URL without a host, which ripple refuses at start", in: "reloader: {deployment: {env: {open: {ALERT_WEBHOOK_URL: 'https:///x'}}}}",
			dropped: []string{"reloader.deployment.env.open.ALERT_WEBHOOK_URL"}},
		{name: "a webhook URL that is no http URL", in: "reloader: {deployment: {env: {open: {ALERT_WEBHOOK_URL: 'ftp://h.example/x'}}}}",
			dropped: []string{"reloader.deployment.env.open.ALERT_WEBHOOK_URL"}},
		{name: "alerts in Reloader's Secret", in: "reloader: {deployment: {env: {secret: {ALERT_ON_RELOAD: 'true', ALERT_WEBHOOK_URL: 'https://h.example/token'}}}}",
			want: "alerts: {enabled: true}", dropped: []string{"reloader.deployment.env.secret.ALERT_WEBHOOK_URL"}},
		{name: "variables from existing Secrets", in: "reloader: {deployment: {env: {existing: {s: {ALERT_WEBHOOK_URL: url, ALERT_SINK: sink, TOKEN: t}}}}}",
			want:    "alerts: {webhookUrlSecret: {name: s, key: url}}\nextraEnv: [{name: TOKEN, valueFrom: {secretKeyRef: {name: s, key: t}}}]",
			dropped: []string{"reloader.deployment.env.existing.s.ALERT_SINK"}},
		{name: "variables that are no map", in: "reloader: {deployment: {env: {open: [A, B], secret: x, existing: {s: notamap, t: {B: b}}, field: 1}}}",
			want:    "extraEnv: [{name: B, valueFrom: {secretKeyRef: {name: t, key: b}}}]",
			dropped: []string{"reloader.deployment.env.existing.s", "reloader.deployment.env.field", "reloader.deployment.env.open", "reloader.deployment.env.secret"}},
		{name: "variables left empty", in: "reloader: {deployment: {env: {open: [], existing: {s: null}, field: {}}}}"},
		{name: "variables from fields", in: "reloader: {deployment: {env: {field: {NODE: spec.nodeName}}}}",
			want: "extraEnv: [{name: NODE, valueFrom: {fieldRef: {fieldPath: spec.nodeName}}}]"},
		{name: "settings ripple has not", in: "reloader: {isOpenshift: true, syncAfterRestart: true, netpol: {enabled: true}, deployment: {gomemlimitOverride: 1GiB}}",
			dropped: []string{"reloader.deployment.gomemlimitOverride", "reloader.isOpenshift", "reloader.netpol.enabled", "reloader.syncAfterRestart"}},
	}
	checkMappings(t, tests)
}

// Keys of labels and annotations hold dots: each must be carried over
// whole or named, quoted, in a comment, never split at its dots and lost.
func TestValuesCarriesOrNamesEveryKeyHoldingADot(t *testing.T) {
	checkMappings(t, []mapping{
		{name: "pod labels", in: `reloader: {deployment: {labels: {team: payments, sidecar.istio.io/inject: "false", networking.example.com/allow-apiserver: "true"}}}`,
			want: `podLabels: {team: payments, sidecar.istio.io/inject: "false", networking.example.com/allow-apiserver: "true"}`},
		{name: "a pod label named as one of Reloader's defaults", in: "reloader: {deployment: {labels: {provider.example.com/team: stakater}}}",
			want: "podLabels: {provider.example.com/team: stakater}"},
		{name: "the Deployment's annotations", in: "reloader: {deployment: {annotations: {plain: x, example.com/owner: y}}}",
			dropped: []string{`reloader.deployment.annotations."example.com/owner"`, "reloader.deployment.annotations.plain"}},
		{name: "match labels", in: "reloader: {matchLabels: {app.kubernetes.io/name: r}}",
			dropped: []string{`reloader.matchLabels."app.kubernetes.io/name"`}},
		{name: "RBAC and ServiceAccount labels", in: "reloader: {rbac: {labels: {example.com/team: a}}, serviceAccount: {labels: {example.com/team: a}}}",
			dropped: []string{`reloader.rbac.labels."example.com/team"`, `reloader.serviceAccount.labels."example.com/team"`}},
		{name: "Reloader's Secret", in: "reloader: {deployment: {env: {secret: {my.token: t}}}}",
			dropped: []string{`reloader.deployment.env.secret."my.token"`}},
		{name: "an existing Secret", in: "reloader: {deployment: {env: {existing: {alerts.example: {ALERT_SINK: sink}}}}}",
			dropped: []string{`reloader.deployment.env.existing."alerts.example".ALERT_SINK`}},
		{name: "a node selector", in: "reloader: {deployment: {nodeSelector: {kubernetes.io/os: linux}}}", want: "nodeSelector: {kubernetes.io/os: linux}"},
	})
}

func checkMappings(t *testing.T, tests []mapping) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Values([]byte(tt.in))
			if err != nil {
				t.Fatalf("Values: %v", err)
			}
			var want map[string]any
			if err := yaml.Unmarshal([]byte(base+tt.want), &want); err != nil {
				t.Fatal(err)
			}
			// A null in want removes that key of base.
			for k, v := range want {
				if v == nil {
					delete(want, k)
				}
			}
			got := roundTrip(t, res.Values)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("values:\n%v\nwant:\n%v", got, want)
			}
			var dropped []string
			for _, d := range res.Dropped {
				dropped = append(dropped, d[:strings.Index(d, ": ")])
			}
			if !reflect.DeepEqual(dropped, tt.dropped) {
				t.Errorf("not carried over: %q, want %q", dropped, tt.dropped)
			}
		})
	}
}

// roundTrip gives values as YAML reads them, ints as float64.
func roundTrip(t *testing.T, v map[string]any) map[string]any {
	t.Helper()
	b, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := yaml.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestValuesTakesValuesOfTheWrongShapeWithoutPanicking(t *testing.T) {
	for _, in := range []string{
		"reloader: 5",
		"reloader: {deployment: []}",
		"reloader: {deployment: {env: {open: [a], secret: 1, existing: {s: [x]}, field: {A: {b: c}}}}}",
		"reloader: {deployment: {labels: [a], securityContext: 1, livenessProbe: [1], replicas: {a: 1}}}",
		"reloader: {namespaces: {a: b}, ignoreNamespaces: [1], custom_annotations: [a], serviceMonitor: 1, podMonitor: {enabled: true}}",
		"global: {imagePullSecrets: [1, [x], {name: a}]}\nimage: [1]",
		"reloader: {enableHA: yes, logLevel: [debug], reloadStrategy: {a: b}, webhookUrl: 1, custom_annotations: {auto: 1}}",
	} {
		t.Run(in, func(t *testing.T) {
			res, err := Values([]byte(in))
			if err != nil {
				return
			}
			if _, err := res.Render(); err != nil {
				t.Errorf("Render: %v", err)
			}
		})
	}
}

func TestValuesNeverPrintsASecretValue(t *testing.T) {
	res, err := Values([]byte("reloader: {deployment: {env: {secret: {ALERT_WEBHOOK_URL: 'https://h.example/s3cr3t', TOKEN: s3cr3t}}}}"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := res.Render()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "s3cr3t") {
		t.Errorf("the output holds a value of Reloader's Secret:\n%s", out)
	}
}

func TestValuesRefusesBadInputWithAClearError(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"not YAML", "reloader: [unclosed", "reading the values as a YAML map"},
		{"not a map", "- a\n- b\n", "reading the values as a YAML map"},
		{"too big", "x: " + strings.Repeat("a", MaxInput), "over 1048576 bytes"},
		{"nested too deep under a setting", "reloader: {deployment: {affinity: " + strings.Repeat("{a: ", 9000) + "1" + strings.Repeat("}", 9000) + "}}", "more than 64 deep"},
		{"lists nested too deep", "x: " + strings.Repeat("[", 65) + strings.Repeat("]", 65), "more than 64 deep"},
		{"unknown keys", "reloader: {shiny: {new: 1}, enableHA: true}\nfoo: 1", "not settings of stakater/Reloader's chart (a typo, or another chart's values?): foo, reloader.shiny.new"},
		{"ripple's own values", "replicas: 2\nwatchNamespaces: [a]", "not settings of stakater/Reloader's chart (a typo, or another chart's values?): replicas, watchNamespaces"},
		// Helm reads the key as written: it sets no enableHA.
		{"a setting's dotted name as one key", "reloader.enableHA: true", `not settings of stakater/Reloader's chart (a typo, or another chart's values?): "reloader.enableHA"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Values([]byte(tt.in))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Values = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

// TestValuesNotesASelectorReloaderReadOtherwise: Reloader's chart quotes
// namespaceSelector, so Reloader took a list of colon terms as one term and
// selected more namespaces than written; ripple, reading it as written,
// would stop rolling some, and the migration must say so.
func TestValuesNotesASelectorReloaderReadOtherwise(t *testing.T) {
	tests := []struct {
		selector string
		noted    bool
	}{
		{"team:platform,env:prod", true},
		{"team:platform", false},
		{"team=platform,env=prod", false},
		{"team:*", false},
		{"team=*", false},
	}
	for _, tt := range tests {
		t.Run(tt.selector, func(t *testing.T) {
			res, err := Values([]byte("reloader: {namespaceSelector: '" + tt.selector + "'}"))
			if err != nil {
				t.Fatal(err)
			}
			noted := slices.ContainsFunc(res.Notes, func(n string) bool {
				return strings.HasPrefix(n, "namespaceSelector: ") && strings.Contains(n, `"env,team=platform"`)
			})
			if noted != tt.noted {
				t.Errorf("noted = %v, want %v: %q", noted, tt.noted, res.Notes)
			}
		})
	}
}

// A selector ripple refuses to start with, carried over, would keep it from
// starting: it is dropped instead, with what Reloader made of it, which
// selects what Reloader did.
func TestValuesDropsASelectorRippleRefuses(t *testing.T) {
	tests := []struct {
		name, in string
		// dropped is the setting dropped, and theirs what the reason says
		// Reloader read it as.
		dropped, theirs string
	}{
		{"a namespace selector with two colons", "reloader: {namespaceSelector: 'team:platform:eu'}", "reloader.namespaceSelector", `"team=platform"`},
		// Reloader's chart quotes it: Reloader took the list as one term.
		{"a namespace selector list with two colons", "reloader: {namespaceSelector: 'team:platform:eu,env:prod'}", "reloader.namespaceSelector", `"team=platform"`},
		{"a resource selector with two colons", "reloader: {resourceLabelSelector: 'reload:true:x'}", "reloader.resourceLabelSelector", `"reload=true"`},
		// Unquoted, it reached Reloader as a list of terms, each read alone.
		{"a resource selector list with two colons", "reloader: {resourceLabelSelector: 'reload:true:x,team:a'}", "reloader.resourceLabelSelector", `"reload=true,team=a"`},
		{"a resource selector that is no selector", "reloader: {resourceLabelSelector: 'a b'}", "reloader.resourceLabelSelector", "as Reloader did"},
		{"a valid resource selector", "reloader: {resourceLabelSelector: 'reload:true'}", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Values([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			var dropped []string
			for _, d := range res.Dropped {
				if strings.Contains(d, "Selector: ripple refuses it at start") && strings.Contains(d, tt.theirs) {
					dropped = append(dropped, d[:strings.Index(d, ": ")])
				}
			}
			if want := []string{tt.dropped}; tt.dropped != "" && !slices.Equal(dropped, want) || tt.dropped == "" && dropped != nil {
				t.Errorf("dropped %q, want %q: %q", dropped, tt.dropped, res.Dropped)
			}
			_, nsCarried := res.Values["namespaceSelector"]
			_, resourceCarried := res.Values["resourceLabelSelector"]
			if tt.dropped != "" && (nsCarried || resourceCarried) {
				t.Errorf("a selector ripple refuses is carried over: %v", res.Values)
			}
		})
	}
}

// Values that name what exists in Reloader's namespace (its own namespace
// to watch, a Secret) work only with ripple installed there, and the
// migration must say so.
func TestValuesNotesWhatWorksOnlyInReloadersNamespace(t *testing.T) {
	tests := []struct {
		name, in string
		// noted are the starts of the notes wanted.
		noted []string
	}{
		{"its own namespace", "reloader: {watchGlobally: false}", []string{"extraEnv: KUBERNETES_NAMESPACE from the pod's namespace"}},
		{"its own namespace, named", "namespace: tools\nreloader: {watchGlobally: false}", nil},
		{"a variable from an existing Secret", "reloader: {deployment: {env: {existing: {s: {TOKEN: t, OTHER: o}}}}}", []string{"extraEnv: read from the Secret s,"}},
		{"the webhook URL from an existing Secret", "reloader: {deployment: {env: {existing: {s: {ALERT_WEBHOOK_URL: url}}}}}", []string{"alerts.webhookUrlSecret: read from the Secret s,"}},
		{"both from two Secrets", "reloader: {deployment: {env: {existing: {s: {ALERT_WEBHOOK_URL: url, TOKEN: t}, u: {A: a}}}}}",
			[]string{"alerts.webhookUrlSecret and extraEnv: read from the Secret s,", "extraEnv: read from the Secret u,"}},
		{"only what ripple's chart sets otherwise", "reloader: {deployment: {env: {existing: {s: {ALERT_SINK: sink}}}}}", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Values([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			var noted []string
			for _, n := range res.Notes {
				if !strings.Contains(n, "install ripple into") {
					continue
				}
				for _, want := range tt.noted {
					if strings.HasPrefix(n, want) {
						noted = append(noted, want)
					}
				}
				if !strings.Contains(n, "copy the Secret") && !strings.Contains(n, "or it watches another") {
					t.Errorf("the note says neither to copy the Secret nor which namespace is watched: %q", n)
				}
			}
			if !slices.Equal(noted, tt.noted) {
				t.Errorf("noted %q, want %q: %q", noted, tt.noted, res.Notes)
			}
		})
	}
}

// Reloader's chart refuses to render namespaces with watchGlobally: true,
// the only setting with which it passes ignoreNamespaces and
// namespaceSelector: the reason for dropping them says so, not that
// Reloader ran and ignored them.
func TestValuesSaysReloadersChartRefusedNamespacesWithWatchGlobally(t *testing.T) {
	tests := []struct {
		name, in string
		// dropped are the settings whose reason says the chart refused them.
		dropped []string
	}{
		{"ignored namespaces", "reloader: {namespaces: [a], ignoreNamespaces: b}", []string{"reloader.ignoreNamespaces"}},
		{"a selector, watchGlobally written", "reloader: {watchGlobally: true, namespaces: [a], namespaceSelector: x=y}", []string{"reloader.namespaceSelector"}},
		{"both", "reloader: {namespaces: 'a,b', ignoreNamespaces: b, namespaceSelector: x=y}", []string{"reloader.ignoreNamespaces", "reloader.namespaceSelector"}},
		// With watchGlobally: false the chart renders, and passes neither.
		{"not globally", "reloader: {watchGlobally: false, namespaces: [a], ignoreNamespaces: b}", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Values([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			var dropped []string
			for _, d := range res.Dropped {
				if strings.Contains(d, ": Reloader's chart refused to render it with namespaces") {
					dropped = append(dropped, d[:strings.Index(d, ": ")])
				}
			}
			if !slices.Equal(dropped, tt.dropped) {
				t.Errorf("dropped as refused by Reloader's chart %q, want %q: %q", dropped, tt.dropped, res.Dropped)
			}
		})
	}
}

// A name Reloader's objects took, carried over, makes ripple's take it
// too: beside a running Reloader in its namespace, Helm refuses them, and
// the migration says so.
func TestValuesNotesANameReloaderTook(t *testing.T) {
	tests := []struct {
		in, noted string
	}{
		{"fullnameOverride: reloader", "fullnameOverride: reloader names"},
		{"reloader: {serviceAccount: {name: reloader}}", "serviceAccount.name: reloader names"},
		{"reloader: {serviceAccount: {create: false, name: reloader}}", ""},
		{"nameOverride: r", ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			res, err := Values([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if tt.noted == "" {
				if slices.ContainsFunc(res.Notes, func(n string) bool {
					return strings.Contains(n, " names ") && strings.Contains(n, "as it named Reloader's")
				}) {
					t.Errorf("a name that collides with nothing is noted: %q", res.Notes)
				}
				return
			}
			if !slices.ContainsFunc(res.Notes, func(n string) bool { return strings.HasPrefix(n, tt.noted) }) {
				t.Errorf("want a note starting %q: %q", tt.noted, res.Notes)
			}
		})
	}
}

// Reloader's chart passes ignoreNamespaces as written and Reloader keeps
// the spaces around an entry, which then names no namespace: Reloader
// rolled workloads there. ripple trims the entry and ignores the
// namespace, and the migration must say so.
func TestValuesNotesANamespaceToIgnoreReloaderMatchedNone(t *testing.T) {
	tests := []struct {
		name, in string
		// noted are the namespaces a note says ripple now ignores.
		noted []string
	}{
		{"a space after the comma", "reloader: {ignoreNamespaces: 'kube-system, monitoring'}", []string{"monitoring"}},
		{"no spaces", "reloader: {ignoreNamespaces: 'kube-system,monitoring'}", nil},
		{"spaces at either end", "reloader: {ignoreNamespaces: ' kube-system ,monitoring  , a'}", []string{"kube-system", "monitoring", "a"}},
		{"a name also written without spaces", "reloader: {ignoreNamespaces: 'monitoring, monitoring'}", nil},
		{"a name twice with spaces", "reloader: {ignoreNamespaces: 'a, monitoring, monitoring '}", []string{"monitoring"}},
		{"ignores not carried over, with namespaces listed", "reloader: {namespaces: [a], ignoreNamespaces: 'a, b'}", nil},
		{"ignores not carried over, without watchGlobally", "reloader: {watchGlobally: false, ignoreNamespaces: 'a, b'}", nil},
		{"a YAML list, which Reloader's chart passed as one entry", "reloader: {ignoreNamespaces: [kube-system, monitoring]}", []string{"kube-system", "monitoring"}},
	}
	const prefix = "namespacesToIgnore: ripple ignores "
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Values([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			var noted []string
			for _, n := range res.Notes {
				if name, ok := strings.CutPrefix(n, prefix); ok {
					noted = append(noted, name[:strings.Index(name, ",")])
				}
			}
			if !slices.Equal(noted, tt.noted) {
				t.Errorf("noted %q, want %q: %q", noted, tt.noted, res.Notes)
			}
		})
	}
}

// Reloader reads custom annotation names as given, one name for two
// annotations included; ripple refuses to start with such names, and the
// migration must say so rather than install a ripple that never starts.
func TestValuesNotesAnnotationNamesRippleRefuses(t *testing.T) {
	tests := []struct {
		in    string
		noted bool
		// env is the environment migrate-values runs in, which must not
		// change its output.
		env map[string]string
	}{
		{"reloader: {custom_annotations: {configmap: reload, secret: reload}}", true, nil},
		{"reloader: {custom_annotations: {auto: 'not a name!'}}", true, nil},
		{"reloader: {custom_annotations: {pauseTime: deployment.reloader.stakater.com/pause-period}}", true, nil},
		{"reloader: {custom_annotations: {configmap: cm-reload, secret: secret-reload}}", false, nil},
		{"reloader: {}", false, nil},
		{"reloader: {custom_annotations: {configmap: cm-reload}}", false, map[string]string{"ALERT_ON_RELOAD": "true", "KUBERNETES_NAMESPACE": "a b"}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			res, err := Values([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			noted := slices.ContainsFunc(res.Notes, func(n string) bool { return strings.HasPrefix(n, "annotations: ripple refuses") })
			if noted != tt.noted {
				t.Errorf("noted = %v, want %v: %q", noted, tt.noted, res.Notes)
			}
		})
	}
}
