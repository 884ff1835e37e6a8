package integration

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

var _ = Describe("Events", func() {
	It("puts a Reloaded Event on each rolled workload, naming the object that changed", func() {
		ns := newNamespace(nil)
		cm := createConfigMap(ns, "app-config", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("app-config"))
		sts := createStatefulSet(ns, "sts", auto, volumeConfigMap("app-config"))
		startRipple()
		depBefore, stsBefore := recorded(dep), recorded(sts)

		setData(cm, "k", "2")

		expectRolledOnce(dep, depBefore)
		expectRolledOnce(sts, stsBefore)
		for _, w := range []client.Object{dep, sts} {
			Eventually(eventsFor(w), "10s").Should(ContainElement("Reloaded: Rolled because ConfigMap/app-config changed"))
		}
	})

	It("writes the Reloaded Event of each rollout it makes as it stops", func() {
		ns := newNamespace(nil)
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		deps := make([]*appsv1.Deployment, 30)
		for i := range deps {
			deps[i] = createDeployment(ns, fmt.Sprintf("dep-%d", i), auto, volumeConfigMap("cfg"))
		}
		r := startRipple("--debounce=0s")
		befores := make([]state, len(deps))
		for i, d := range deps {
			befores[i] = recorded(d)
		}

		setData(cm, "k", "2")
		Eventually(befores[0].Rollouts, "10s").Should(Equal(1))
		r.stop()

		for i, d := range deps {
			if befores[i].Rollouts() > 0 {
				Expect(eventsFor(d)()).To(ContainElement("Reloaded: Rolled because ConfigMap/cfg changed"), d.Name)
			}
		}
	})
})
