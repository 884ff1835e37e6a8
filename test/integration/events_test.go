package integration

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
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
})
