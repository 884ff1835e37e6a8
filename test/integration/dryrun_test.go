package integration

import (
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"

	"github.com/ripple-controller/ripple/internal/annotations"
)

var _ = Describe("--dry-run", func() {
	It("reports a change as a WouldReload Event and a log line, writes nothing, and leaves the change for a real run to roll", func() {
		ns := newNamespace(nil)
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("cfg"))
		sts := createStatefulSet(ns, "sts", auto, envFromConfigMap("cfg"))
		first := startRipple()
		depBefore, stsBefore := recorded(dep), recorded(sts)
		first.stop()

		dry := startRipple("--dry-run")
		setData(cm, "k", "2")

		for _, obj := range []struct {
			name   string
			events func() []string
		}{{"dep", eventsFor(dep)}, {"sts", eventsFor(sts)}} {
			Eventually(obj.events, "10s").Should(ContainElement("WouldReload: Would roll because ConfigMap/cfg changed; --dry-run changed nothing"), obj.name)
		}
		Eventually(dry.logs).Should(gbytes.Say("Would reload workload"))
		expectNoWrite(dep, depBefore)
		expectNoWrite(sts, stsBefore)
		dry.stop()

		startRipple()
		expectRolledOnce(dep, depBefore)
		expectRolledOnce(sts, stsBefore)
	})

	It("reports a StatefulSet with a pause period as one that would roll, holding nothing", func() {
		ns := newNamespace(nil)
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		sts := createStatefulSet(ns, "sts", map[string]string{annotations.Auto: "true", annotations.PausePeriod: "1h"}, envFromConfigMap("cfg"))
		first := startRipple()
		before := recorded(sts)
		first.stop()

		startRipple("--dry-run")
		setData(cm, "k", "2")

		Eventually(eventsFor(sts), "10s").Should(ContainElement(HavePrefix("WouldReload: ")))
		Expect(eventsFor(sts)()).NotTo(ContainElement(HavePrefix("ReloadPaused")))
		expectNoWrite(sts, before)
	})

	It("ends no StatefulSet hold that is over and says none ended, reporting the change held", func() {
		ns := newNamespace(nil)
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		sts := createStatefulSet(ns, "sts", map[string]string{annotations.Auto: "true", annotations.PausePeriod: "2s"}, envFromConfigMap("cfg"))
		first := startRipple()
		recorded(sts)
		setData(cm, "k", "2")
		Eventually(eventsFor(sts), "10s").Should(ContainElement(HavePrefix("ReloadPaused: ")))
		first.stop()
		heldAt, err := time.Parse(time.RFC3339, pausedAt(sts)())
		Expect(err).NotTo(HaveOccurred())
		waitServerPast(ns, heldAt.Unix()+2)

		dry := startRipple("--dry-run")

		Eventually(eventsFor(sts), "10s").Should(ContainElement(HavePrefix("WouldReload: ")))
		Consistently(eventsFor(sts), quiet).ShouldNot(ContainElement(HavePrefix("PauseEnded: ")), "--dry-run ended no hold")
		Expect(string(dry.logs.Contents())).NotTo(ContainSubstring("Ended a pause"))
		Expect(pausedAt(sts)()).To(Equal(heldAt.Format(time.RFC3339)), "the hold is still there")
	})

	It("reports a CronJob's Job a real run left to create as one it would create: no alert, no Reloaded, no Job", func() {
		ns := newBatchNamespace()
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		cj := createCronJob(ns, "nightly", auto, envFromConfigMap("cfg"))
		live := startRipple()
		before := expectRecorded(cj)
		allow := refuseJobs(ns)
		setData(cm, "k", "2")
		waitFor(eventsFor(cj)).Should(ContainElement(And(HavePrefix("ReloadFailed: "), ContainSubstring("frozen by the test"))))
		waitFor(recordOf(cj)).ShouldNot(Equal(before))
		live.stop()
		allow()
		h := newHook(http.StatusOK)
		alertTo("raw", h.URL+"/hook")

		startRipple("--dry-run")

		waitFor(eventsFor(cj)).Should(ContainElement(HavePrefix("WouldReload: Would create Job nightly-")))
		Consistently(h.bodies, quiet).Should(BeEmpty(), "--dry-run sends no alert")
		Expect(eventsFor(cj)()).NotTo(ContainElement(HavePrefix("Reloaded: ")), "--dry-run created no Job")
		Expect(jobsIn(ns)()).To(BeEmpty())
	})

	It("rolls nothing it first sees and records nothing on it", func() {
		ns := newNamespace(nil)
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("cfg"))
		before := stateOf(dep)
		const firstSight = "Recording the config of a workload seen for the first time"
		dry := startRipple("--dry-run", "--log-level=debug")
		Eventually(dry.logs, "10s").Should(gbytes.Say(firstSight))
		setData(cm, "k", "2")

		// A workload that was never recorded has no past config to
		// compare with: the change is its first sight again, which rolls
		// nothing.
		Eventually(dry.logs, "10s").Should(gbytes.Say(firstSight))
		expectNoWrite(dep, before)
		Expect(eventsFor(dep)()).NotTo(ContainElement(HavePrefix("WouldReload")))
	})

	It("does not reconcile a workload it never records at each of its status updates", func() {
		ns := newNamespace(nil)
		createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("cfg"))
		const firstSight = "Recording the config of a workload seen for the first time"
		dry := startRipple("--dry-run", "--log-level=debug")
		Eventually(dry.logs, "10s").Should(gbytes.Say(firstSight))

		for range 5 {
			markAvailable(dep)
		}
		Consistently(dry.logs, quiet).ShouldNot(gbytes.Say(firstSight))
	})
})
