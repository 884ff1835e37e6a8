package integration

import (
	"bytes"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
			"Secret shop/absent\n  It does not exist: this is what its creation would do.\n  Not rolled: --namespaces-to-ignore lists the namespace.\nNo workload is related to it.\n"))
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
