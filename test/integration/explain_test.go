package integration

import (
	"bytes"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/ripple-controller/ripple/internal/annotations"
	"github.com/ripple-controller/ripple/internal/cli"
	"github.com/ripple-controller/ripple/test/cluster"
)

// The README's explain section shows these outputs: keep them in step.
const (
	explainedConfigMap = `ConfigMap shop/app-config
WORKLOAD           ROLLS  WHY
DaemonSet/agent    no     untracked: no annotation opts the workload in to ConfigMap changes; uses it: env FROM_app_config of container app
Deployment/pinned  yes    reload-list: configmap.reloader.stakater.com/reload names it
Deployment/web     yes    auto: reloader.stakater.com/auto=true; uses it: envFrom of container app
StatefulSet/db     no     excluded: configmaps.exclude.reloader.stakater.com/reload names it; uses it: volume cm-app-config
`
	explainedDeployment = `Deployment shop/web
  Rolls by the annotations strategy.
OBJECT                ROLLS  WHY
ConfigMap/app-config  yes    auto: reloader.stakater.com/auto=true; uses it: envFrom of container app
Secret/creds          no     ignored: the Secret carries reloader.stakater.com/ignore=true; uses it: envFrom of container app
`
)

var _ = Describe("ripple explain", Ordered, func() {
	const ns = "shop"
	var (
		kubeconfig  string
		cm          *corev1.ConfigMap
		web, pinned *appsv1.Deployment
		db          *appsv1.StatefulSet
		agent       *appsv1.DaemonSet
	)

	// explain runs `ripple explain` as the binary does, with the
	// kubeconfig of a user whose context's namespace is shop.
	explain := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := cli.Explain(suiteCtx, append(args, "--kubeconfig="+kubeconfig), &out)
		return out.String(), err
	}

	BeforeAll(func() {
		kubeconfig = filepath.Join(GinkgoT().TempDir(), "kubeconfig")
		Expect(cluster.WriteKubeconfig(kubeconfig, restConfig, ns)).To(Succeed())
		Expect(k8s.Create(suiteCtx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		DeferCleanup(func() { emptyAndDelete(ns) })
		cm = createConfigMap(ns, "app-config", map[string]string{"k": "1"})
		createSecret(ns, "creds", map[string]string{"k": "1"}, map[string]string{annotations.Ignore: "true"})
		web = createDeployment(ns, "web", auto, envFromConfigMap("app-config"), envFromSecret("creds"))
		pinned = createDeployment(ns, "pinned", map[string]string{annotations.ConfigMapReload: "app-config"})
		db = createStatefulSet(ns, "db", map[string]string{annotations.Auto: "true", annotations.ConfigMapExclude: "app-config"}, volumeConfigMap("app-config"))
		agent = createDaemonSet(ns, "agent", nil, envConfigMapKey("app-config"))
		createDeployment(ns, "unrelated", auto, envFromConfigMap("other"))
	})

	It("prints which workloads a change of a ConfigMap rolls and why, in the kubeconfig's namespace", func() {
		Expect(explain("configmap", "app-config")).To(Equal(explainedConfigMap))
	})

	It("prints which objects roll a workload and why", func() {
		Expect(explain("deploy", "web", "-n", ns)).To(Equal(explainedDeployment))
	})

	It("rolls exactly the workloads it said yes for", func() {
		startRipple()
		webBefore, pinnedBefore, dbBefore := recorded(web), recorded(pinned), recorded(db)
		agentBefore := withRollouts(agent, stateOf(agent))

		setData(cm, "k", "2")

		expectRolledOnce(web, webBefore)
		expectRolledOnce(pinned, pinnedBefore)
		expectNoRollout(db, dbBefore)
		expectNoRollout(agent, agentBefore)
	})

	It("says what its flags scope out, as the controller's same flags do", func() {
		Expect(explain("configmap", "app-config", "--resources-to-ignore=configMaps")).To(HavePrefix(
			"ConfigMap shop/app-config\n  Not rolled: --resources-to-ignore ignores ConfigMaps.\n"))
		Expect(explain("secret", "absent", "--namespaces-to-ignore=shop")).To(Equal(
			"Secret shop/absent\n  It does not exist: without --reload-on-create its creation is only recorded, but for a workload whose record kept it since its deletion, which it rolls unless it brings back the data the pods run.\n  Not rolled: --namespaces-to-ignore lists the namespace.\nNo workload is related to it.\n"))
	})

	It("says what a CronJob's Job, a suspended CronJob, an ignored object, a missing one and --dry-run do, as the controller does", func() {
		other := newNamespace(nil)
		createConfigMap(other, "cfg", map[string]string{"k": "1"})
		createSecret(other, "creds", map[string]string{"k": "1"}, map[string]string{annotations.Ignore: "true"})
		cj := createCronJob(other, "nightly", auto, envFromConfigMap("cfg"))
		update(cj, func(c *batchv1.CronJob) { c.Spec.Suspend = ptr.To(true) })
		job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: other, Name: "nightly-1", Annotations: auto,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "CronJob", Name: cj.Name, UID: cj.UID, Controller: ptr.To(true)}}},
			Spec: batchv1.JobSpec{Template: jobPod([]podMod{envFromConfigMap("cfg")})}}
		Expect(k8s.Create(suiteCtx, job)).To(Succeed())
		createDeployment(other, "web", auto, envFromConfigMap("cfg"), envFromSecret("creds"), envFromConfigMap("later"))
		createDeployment(other, "bystander", auto, envFromConfigMap("unrelated"))

		out, err := explain("configmap", "cfg", "-n", other)
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(SatisfyAll(
			MatchRegexp(`(?m)^CronJob/nightly +no +auto: .*; recorded, not rolled: the CronJob is suspended`),
			MatchRegexp(`(?m)^Deployment/web +yes +auto: `),
			Not(ContainSubstring("Job/nightly-1")), Not(ContainSubstring("bystander"))))

		Expect(explain("secret", "creds", "-n", other)).To(SatisfyAll(
			MatchRegexp(`(?m)^Deployment/web +no +ignored: `), Not(ContainSubstring("bystander")), Not(ContainSubstring("CronJob"))))
		Expect(explain("job", "nightly-1", "-n", other)).To(ContainSubstring("Not rolled: its CronJob owns it"))
		Expect(explain("cronjob", "nightly", "-n", other)).To(ContainSubstring(
			"Rolls by the job strategy of " + annotations.CronJobStrategy + ", which leaves its pod template alone."))
		Expect(explain("configmap", "later", "-n", other)).To(SatisfyAll(
			ContainSubstring("It does not exist: without --reload-on-create"),
			MatchRegexp(`(?m)^Deployment/web +no .*; it does not exist, and its creation is only recorded$`)))
		Expect(explain("configmap", "later", "-n", other, "--reload-on-create")).To(SatisfyAll(
			ContainSubstring("It does not exist: this is what its creation would do"), MatchRegexp(`(?m)^Deployment/web +yes `)))
		Expect(explain("configmap", "cfg", "-n", other, "--dry-run")).To(SatisfyAll(
			ContainSubstring("Not rolled: under --dry-run"), MatchRegexp(`(?m)^Deployment/web +no `)))
	})

	It("says a deleted object rolls, when recreated with other data, the workloads whose record kept it, as the controller does", func() {
		other := newNamespace(nil)
		cm := createConfigMap(other, "cfg", map[string]string{"k": "1"})
		kept := createDeployment(other, "kept", auto, envFromConfigMap("cfg"))
		startRipple()
		keptBefore := recorded(kept)
		Expect(k8s.Delete(suiteCtx, cm)).To(Succeed())
		late := createDeployment(other, "late", auto, envFromConfigMap("cfg"))
		lateBefore := recorded(late)

		Expect(explain("configmap", "cfg", "-n", other)).To(SatisfyAll(
			MatchRegexp(`(?m)^Deployment/kept +yes .*its record keeps it since its deletion, so its recreation rolls it unless`),
			MatchRegexp(`(?m)^Deployment/late +no .*its creation is only recorded$`)))
		Expect(explain("deployment", "kept", "-n", other)).To(MatchRegexp(`(?m)^ConfigMap/cfg +yes .*its record keeps it`))

		createConfigMap(other, "cfg", map[string]string{"k": "2"})
		expectRolledOnce(kept, keptBefore)
		expectNoRollout(late, lateBefore)
	})

	It("says a workload with a pause period rolls once, when the pause a change starts ends", func() {
		other := newNamespace(nil)
		createDeployment(other, "paused", pauseFor("5m"), envFromConfigMap("cfg"))
		Expect(explain("deployment", "paused", "-n", other)).To(ContainSubstring(
			"Rolls by the annotations strategy, once a pause of 5m0s that a change starts ends, with every change made meanwhile."))
	})

	It("refuses a kind ripple does not roll, a missing workload and a wrong number of arguments", func() {
		_, err := explain("pod", "web")
		Expect(err).To(MatchError(ContainSubstring(`ripple rolls no "pod"`)))
		_, err = explain("deployment", "absent")
		Expect(err).To(MatchError(ContainSubstring(`reading Deployment shop/absent: deployments.apps "absent" not found`)))
		_, err = explain("configmap")
		Expect(err).To(MatchError(HavePrefix("usage: ripple explain")))
		_, err = explain("deployments", "web", "--ignored-workload-types=deployments")
		Expect(err).To(MatchError(ContainSubstring(`ripple rolls no "deployments"`)))
	})
})

// explainIn runs `ripple explain` with a kubeconfig whose context's
// namespace is ns.
func explainIn(ns string, args ...string) string {
	GinkgoHelper()
	kubeconfig := filepath.Join(GinkgoT().TempDir(), "kubeconfig")
	Expect(cluster.WriteKubeconfig(kubeconfig, restConfig, ns)).To(Succeed())
	var out bytes.Buffer
	Expect(cli.Explain(suiteCtx, append(args, "--kubeconfig="+kubeconfig), &out)).To(Succeed())
	return out.String()
}

var _ = Describe("ripple explain, on what flags and annotations narrow", func() {
	It("says a ConfigMap outside --resource-label-selector or --namespaces rolls nothing", func() {
		ns := newNamespace(nil)
		createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		createDeployment(ns, "dep", auto, volumeConfigMap("cfg"))

		Expect(explainIn(ns, "configmap", "cfg", "--resource-label-selector=reload=yes")).To(
			ContainSubstring("Not rolled: its labels do not match --resource-label-selector=reload=yes."))
		Expect(explainIn(ns, "configmap", "cfg", "--namespaces=elsewhere")).To(
			ContainSubstring("Not rolled: ripple watches only the namespaces elsewhere (--namespaces)."))
	})

	It("lists the objects a workload's reload list matches by pattern", func() {
		ns := newNamespace(nil)
		createConfigMap(ns, "cfg-a", map[string]string{"k": "1"})
		createDeployment(ns, "dep", map[string]string{annotations.ConfigMapReload: "cfg-.*"})

		Expect(explainIn(ns, "deployment", "dep")).To(MatchRegexp(`(?m)^ConfigMap/cfg-a +yes `))
	})

	It("says which keys a workload with key precision reads", func() {
		ns := newNamespace(nil)
		createConfigMap(ns, "cfg", map[string]string{"k": "1", "other": "1"})
		createDeployment(ns, "dep", map[string]string{annotations.Auto: "true", annotations.KeyPrecision: "true"}, envConfigMapKey("cfg"))

		Expect(explainIn(ns, "deployment", "dep")).To(MatchRegexp(`(?m)^ConfigMap/cfg +yes .*; only keys k`))
	})
})

var _ = Describe("ripple explain, on deleted workloads and objects", func() {
	It("says a workload being deleted rolls nothing", func() {
		ns := newNamespace(nil)
		createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		createDeployment(ns, "staying", auto, envFromConfigMap("cfg"))
		going := createDeployment(ns, "going", auto, envFromConfigMap("cfg"))
		update(going, func(d *appsv1.Deployment) { d.Finalizers = append(d.Finalizers, "test.ripple.dev/hold") })
		DeferCleanup(func() { update(going, func(d *appsv1.Deployment) { d.Finalizers = nil }) })
		Expect(k8s.Delete(suiteCtx, going)).To(Succeed())

		Expect(explainIn(ns, "configmap", "cfg")).To(SatisfyAll(
			MatchRegexp(`(?m)^Deployment/staying +yes `), Not(ContainSubstring("Deployment/going"))))
		Expect(explainIn(ns, "deployment", "going")).To(Equal(
			"Deployment " + ns + "/going\n  Not rolled: it is being deleted.\nNo object is related to it.\n"))
	})

	It("says a deleted Secret rolls, when recreated with other data, the workload whose record kept it, and says it is missing on the lines that do not roll", func() {
		ns := newNamespace(nil)
		creds := createSecret(ns, "creds", map[string]string{"k": "1"})
		kept := createDeployment(ns, "kept", auto, envFromSecret("creds"))
		createDaemonSet(ns, "agent", nil, envFromSecret("creds"))
		startRipple()
		keptBefore := recorded(kept)
		Expect(k8s.Delete(suiteCtx, creds)).To(Succeed())

		Expect(explainIn(ns, "secret", "creds")).To(SatisfyAll(
			MatchRegexp(`(?m)^Deployment/kept +yes .*; it does not exist: its record keeps it since its deletion, so its recreation rolls it unless`),
			// The untracked DaemonSet's line is its verdict alone.
			MatchRegexp(`(?m)^DaemonSet/agent +no +untracked: [^;]*; uses it: envFrom of container app$`)))
		Expect(explainIn(ns, "deployment", "kept")).To(MatchRegexp(`(?m)^Secret/creds +yes .*its record keeps it since its deletion`))
		Expect(explainIn(ns, "deployment", "kept", "--reload-on-create")).To(
			MatchRegexp(`(?m)^Secret/creds +yes .*; It does not exist: this is what its creation would do \(--reload-on-create\)$`))
		Expect(explainIn(ns, "daemonset", "agent")).To(
			MatchRegexp(`(?m)^Secret/creds +no +untracked: .*; uses it: envFrom of container app; It does not exist: without --reload-on-create its creation is only recorded, but for a workload whose record kept it`))

		createSecret(ns, "creds", map[string]string{"k": "2"})
		expectRolledOnce(kept, keptBefore)
	})

	It("lists a deleted object that a workload's reload pattern matched and its record keeps", func() {
		ns := newNamespace(nil)
		cfg := createConfigMap(ns, "cfg-a", map[string]string{"k": "1"})
		pat := createDeployment(ns, "pat", map[string]string{annotations.ConfigMapReload: "cfg-.*"})
		startRipple()
		patBefore := recorded(pat)
		Expect(k8s.Delete(suiteCtx, cfg)).To(Succeed())

		Expect(explainIn(ns, "configmap", "cfg-a")).To(MatchRegexp(`(?m)^Deployment/pat +yes .*its record keeps it since its deletion`))
		// Both directions of explain should agree on the same pair.
		Expect(explainIn(ns, "deployment", "pat")).To(MatchRegexp(`(?m)^ConfigMap/cfg-a +yes .*its record keeps it since its deletion`))

		createConfigMap(ns, "cfg-a", map[string]string{"k": "2"})
		expectRolledOnce(pat, patBefore)
	})
})
