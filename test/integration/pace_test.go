package integration

import (
	"fmt"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ripple-controller/ripple/internal/annotations"
)

// markAvailable writes the status the Deployment controller writes when a
// rollout is done; no controller manager runs in these specs.
func markAvailable(d *appsv1.Deployment) {
	GinkgoHelper()
	Expect(k8s.Get(suiteCtx, client.ObjectKeyFromObject(d), d)).To(Succeed())
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1}
	Expect(k8s.Status().Update(suiteCtx, d)).To(Succeed())
}

// markStatefulSet writes st as the StatefulSet controller would, having
// seen the current generation; no controller manager runs in these specs.
func markStatefulSet(s *appsv1.StatefulSet, st appsv1.StatefulSetStatus) {
	GinkgoHelper()
	Expect(k8s.Get(suiteCtx, client.ObjectKeyFromObject(s), s)).To(Succeed())
	st.ObservedGeneration = s.Generation
	s.Status = st
	Expect(k8s.Status().Update(suiteCtx, s)).To(Succeed())
}

// oneRolls waits until one of the two workloads rolled, under a limit of
// one rollout at a time, and returns its index, then the other's.
func oneRolls(before []state) (first, second int) {
	GinkgoHelper()
	Eventually(func() int { return before[0].Rollouts() + before[1].Rollouts() }, 10*time.Second).Should(Equal(1))
	if before[1].Rollouts() == 1 {
		return 1, 0
	}
	return 0, 1
}

// wave creates n Deployments that read the ConfigMap.
func wave(ns, configMap string, n int) []*appsv1.Deployment {
	GinkgoHelper()
	deps := make([]*appsv1.Deployment, n)
	for i := range deps {
		deps[i] = createDeployment(ns, fmt.Sprintf("%s-%d", configMap, i), auto, envFromConfigMap(configMap))
	}
	return deps
}

// rolledOf lists which of the Deployments rolled since their states.
func rolledOf(deps []*appsv1.Deployment, before []state) func() []*appsv1.Deployment {
	return func() []*appsv1.Deployment {
		var out []*appsv1.Deployment
		for i, b := range before {
			if b.Rollouts() > 0 {
				out = append(out, deps[i])
			}
		}
		return out
	}
}

func recordAll(deps []*appsv1.Deployment) []state {
	GinkgoHelper()
	out := make([]state, len(deps))
	for i, d := range deps {
		out[i] = recorded(d)
	}
	return out
}

// pacedWave is a change of ConfigMap cfg that n Deployments use, under
// --max-rollouts-in-progress=limit (and args), once limit of them rolled
// and the rest wait; addr serves ripple's metrics.
type pacedWave struct {
	cm     *corev1.ConfigMap
	deps   []*appsv1.Deployment
	before []state
	addr   string
	rolled func() []*appsv1.Deployment
}

func startPacedWave(ns string, n, limit int, args ...string) pacedWave {
	GinkgoHelper()
	w := pacedWave{cm: createConfigMap(ns, "cfg", map[string]string{"k": "1"}), deps: wave(ns, "cfg", n), addr: freeAddress()}
	_, w.before, w.rolled = startRolling(w.cm, w.deps, limit,
		append(args, fmt.Sprintf("--max-rollouts-in-progress=%d", limit), "--metrics-bind-address="+w.addr)...)
	Eventually(metric(w.addr, "ripple_rollouts_queued"), 5*time.Second).Should(Equal(float64(n - limit)))
	return w
}

// restartArgs pace one rollout at a time, whose slot a restart of ripple
// restores: its --rollout-timeout outlasts the spec.
var restartArgs = []string{"--max-rollouts-in-progress=1", "--rollout-timeout=5m"}

// startRolling starts ripple with args, changes cm, which deps use, and
// waits until limit of them rolled; rolled tells which have rolled since
// their states before.
func startRolling(cm *corev1.ConfigMap, deps []*appsv1.Deployment, limit int, args ...string) (
	r *rippleInstance, before []state, rolled func() []*appsv1.Deployment) {
	GinkgoHelper()
	r = startRipple(args...)
	before = recordAll(deps)
	setData(cm, "k", "2")
	rolled = rolledOf(deps, before)
	Eventually(func() int { return len(rolled()) }, 10*time.Second).Should(Equal(limit))
	return r, before, rolled
}

var _ = Describe("Paced rollouts", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace(nil) })

	It("starts at most --max-rollouts-in-progress rollouts of one change, and the next as earlier ones become available", func() {
		w := startPacedWave(ns, 5, 2)
		deps, before, addr, rolled := w.deps, w.before, w.addr, w.rolled
		requeues := metric(addr, `controller_runtime_reconcile_total{controller="deployments",result="requeue_after"}`)
		waited := requeues()
		Consistently(func() int { return len(rolled()) }, quiet).Should(Equal(2), "no third while two are in progress")
		Expect(requeues()-waited).To(BeNumerically("<", 6), "the three waiting are woken when a slot frees, not asking again and again")
		Eventually(metric(addr, "ripple_rollouts_in_progress"), 5*time.Second).Should(Equal(2.0))

		for _, d := range rolled() {
			markAvailable(d)
		}
		Eventually(func() int { return len(rolled()) }, 10*time.Second).Should(Equal(4))
		Consistently(func() int { return len(rolled()) }, quiet).Should(Equal(4))

		for _, d := range rolled() {
			markAvailable(d)
		}
		Eventually(func() int { return len(rolled()) }, 10*time.Second).Should(Equal(5))
		for i, d := range deps {
			Consistently(before[i].Rollouts, quiet/4).Should(Equal(1), "%s rolls once", d.Name)
		}
		Eventually(metric(addr, "ripple_rollouts_queued"), 5*time.Second).Should(BeZero())
	})

	It("gives no slot to a Deployment its owner paused, also after a restart, so the rest of the wave rolls without waiting for --rollout-timeout", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		deps := wave(ns, "cfg", 3)
		update(deps[0], func(d *appsv1.Deployment) { d.Spec.Paused = true })
		first := startRipple("--max-rollouts-in-progress=1")
		before := recordAll(deps)
		setData(cm, "k", "2")
		Eventually(before[0].Rollouts, 10*time.Second).Should(Equal(1), "the paused Deployment's template is stamped, for when its owner resumes it")
		Eventually(func() int { return before[1].Rollouts() + before[2].Rollouts() }, 10*time.Second).Should(Equal(1))
		first.stop()
		startRipple("--max-rollouts-in-progress=1")
		for _, d := range rolledOf(deps[1:], before[1:])() {
			markAvailable(d)
		}
		Eventually(func() int { return before[1].Rollouts() + before[2].Rollouts() }, 10*time.Second).Should(Equal(2))
		Expect(eventsFor(deps[0])()).NotTo(ContainElement(HavePrefix("RolloutTimedOut")))
	})

	It("still counts a rollout in progress after ripple restarts, and starts the next once it is available", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		deps := wave(ns, "cfg", 3)
		first, _, rolled := startRolling(cm, deps, 1, restartArgs...)
		first.stop()

		startRipple(restartArgs...)
		Consistently(func() int { return len(rolled()) }, quiet).Should(Equal(1), "no second while the first, started before the restart, is in progress")
		markAvailable(rolled()[0])
		Eventually(func() int { return len(rolled()) }, 10*time.Second).Should(Equal(2))
		Consistently(func() int { return len(rolled()) }, quiet).Should(Equal(2))
	})

	It("still counts a rollout in progress after ripple restarts when its record was written again without a rollout since", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		var deps []*appsv1.Deployment
		for i := range 3 {
			deps = append(deps, createDeployment(ns, fmt.Sprintf("app-%d", i), map[string]string{annotations.ConfigMapReload: "cfg,later"}))
		}
		first, before, rolled := startRolling(cm, deps, 1, restartArgs...)
		holder := rolled()[0]
		createConfigMap(ns, "later", map[string]string{"k": "1"})
		Eventually(func() string { return stateOf(holder).Recorded }, 10*time.Second).Should(ContainSubstring("ConfigMap/later="),
			"its creation is recorded")
		Consistently(before[slices.Index(deps, holder)].Rollouts, quiet).Should(Equal(1), "and rolls nothing")
		first.stop()

		startRipple(restartArgs...)
		Consistently(func() int { return len(rolled()) }, quiet).Should(Equal(1), "no second while the first, started before the restart, is in progress")
		markAvailable(holder)
		Eventually(func() int { return len(rolled()) }, 10*time.Second).Should(Equal(2))
	})

	It("writes a change into a Deployment it paused without waiting for a slot, so the pause's end rolls it once", func() {
		cfgA := createConfigMap(ns, "cfg-a", map[string]string{"k": "1"})
		cfgB := createConfigMap(ns, "cfg-b", map[string]string{"k": "1"})
		slow := createSecret(ns, "slow", map[string]string{"k": "1"})
		paused := createDeployment(ns, "paused", pauseFor("8s"), envFromConfigMap("cfg-a"), envFromConfigMap("cfg-b"), envFromSecret("slow"))
		other := createDeployment(ns, "other", auto, envFromConfigMap("cfg-b"))
		reads := newHeldReads("/namespaces/" + ns + "/secrets/slow")
		reads.holding.Store(false)
		withRippleTransport(reads.wrap)
		startRipple(restartArgs...)
		before := recordAll([]*appsv1.Deployment{paused, other})
		setData(cfgA, "k", "2")
		Eventually(specPaused(paused), 10*time.Second).Should(BeTrue())
		// Busy reading slow, the paused Deployment asks for a slot of
		// cfg-b's change only after other took the only one.
		reads.holding.Store(true)
		setSecretData(slow, "k", "2")
		Eventually(reads.arrived, 10*time.Second).Should(Receive())
		setData(cfgB, "k", "2")
		Eventually(before[1].Rollouts, 10*time.Second).Should(Equal(1))

		close(reads.release)

		Eventually(specPaused(paused), 20*time.Second).Should(BeFalse(), "the pause ends")
		markAvailable(other)
		Consistently(specPaused(paused), quiet).Should(BeFalse(), "not paused again for cfg-b's change")
		pauses := func() []string {
			return slices.DeleteFunc(eventsFor(paused)(), func(e string) bool { return !strings.HasPrefix(e, "Reloaded: Paused for") })
		}
		Consistently(pauses, quiet).Should(HaveLen(1), "one pause and one rollout, with every change made during it")
	})

	It("no longer counts a queued workload in ripple_rollouts_queued once it is deleted", func() {
		w := startPacedWave(ns, 3, 1)
		deps, addr, rolled := w.deps, w.addr, w.rolled
		for _, d := range deps {
			if d.Name != rolled()[0].Name {
				Expect(k8s.Delete(suiteCtx, d)).To(Succeed())
			}
		}
		Eventually(metric(addr, "ripple_rollouts_queued"), 5*time.Second).Should(BeZero())
	})

	It("moves on after --rollout-timeout and says so on the rollout that did not become available", func() {
		w := startPacedWave(ns, 2, 1, "--rollout-timeout=2s")
		rolled := w.rolled
		first := rolled()[0]
		Eventually(func() int { return len(rolled()) }, 10*time.Second).Should(Equal(2), "the second starts once the first times out")
		Eventually(eventsFor(first), 5*time.Second).Should(ContainElement(HavePrefix("RolloutTimedOut: Not available 2s after its rollout")))
	})

	It("frees the slot of a rollout that never becomes available at --rollout-timeout, with nobody waiting", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", auto, envFromConfigMap("cfg"))
		addr := freeAddress()
		startRipple("--max-rollouts-in-progress=1", "--rollout-timeout=2s", "--metrics-bind-address="+addr)
		before := recorded(dep)

		setData(cm, "k", "2")

		Eventually(before.Rollouts, 10*time.Second).Should(Equal(1))
		Eventually(eventsFor(dep), 10*time.Second).Should(ContainElement(HavePrefix("RolloutTimedOut: Not available 2s after its rollout")))
		Eventually(metric(addr, "ripple_rollouts_in_progress"), 5*time.Second).Should(BeZero())
	})

	It("counts --rollout-timeout from the end of the pause a paced rollout starts with", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		deps := []*appsv1.Deployment{
			createDeployment(ns, "a", pauseFor("8s"), envFromConfigMap("cfg")),
			createDeployment(ns, "b", pauseFor("8s"), envFromConfigMap("cfg")),
		}
		startRipple("--max-rollouts-in-progress=1", "--rollout-timeout=2s")
		before := recordAll(deps)

		setData(cm, "k", "2")

		rolled := rolledOf(deps, before)
		Eventually(func() int { return len(rolled()) }, 10*time.Second).Should(Equal(1))
		first := rolled()[0]
		Consistently(func() int { return len(rolled()) }, 6*time.Second).Should(Equal(1),
			"the second waits through the first's pause, though the waiting one asks again every 5s")
		Expect(eventsFor(first)()).NotTo(ContainElement(HavePrefix("RolloutTimedOut")), "paused, not late")
		Eventually(eventsFor(first), 10*time.Second).Should(ContainElement(HavePrefix("RolloutTimedOut: Not available 2s after its rollout")))
		Eventually(func() int { return len(rolled()) }, 10*time.Second).Should(Equal(2))
	})

	It("counts --rollout-timeout of a change made during a pause from the end of that pause", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", pauseFor("8s"), envFromConfigMap("cfg"))
		startRipple("--max-rollouts-in-progress=1", "--rollout-timeout=2s")
		before := recorded(dep)
		setData(cm, "k", "2")
		Eventually(pausedAt(dep), 10*time.Second).ShouldNot(BeEmpty())

		setData(cm, "k", "3")

		Eventually(before.Rollouts, 10*time.Second).Should(Equal(2), "the second change reaches the paused Deployment")
		Consistently(eventsFor(dep), 4*time.Second).ShouldNot(ContainElement(HavePrefix("RolloutTimedOut")), "paused, not late")
	})

	It("gives a Deployment and a StatefulSet of the same name a slot each", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		dep := createDeployment(ns, "web", auto, envFromConfigMap("cfg"))
		sts := createStatefulSet(ns, "web", auto, envFromConfigMap("cfg"))
		startRipple("--max-rollouts-in-progress=2")
		beforeDep, beforeSts := recorded(dep), recorded(sts)

		setData(cm, "k", "2")

		Eventually(beforeDep.Rollouts, 10*time.Second).Should(Equal(1))
		Eventually(beforeSts.Rollouts, 10*time.Second).Should(Equal(1), "the StatefulSet rolls while the Deployment is in progress")
	})

	It("stops counting the waiters of a change that is undone while they wait", func() {
		w := startPacedWave(ns, 4, 1)
		cm, addr, rolled := w.cm, w.addr, w.rolled

		setData(cm, "k", "1")

		Eventually(metric(addr, "ripple_rollouts_queued"), 5*time.Second).Should(BeZero(), "the three that waited have nothing to roll")
		Consistently(func() int { return len(rolled()) }, quiet).Should(Equal(1))
	})

	It("keeps a StatefulSet's hold while it waits for a slot, and rolls it once a slot frees", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		sets := []*appsv1.StatefulSet{
			createStatefulSet(ns, "a", pauseFor("2s"), envFromConfigMap("cfg")),
			createStatefulSet(ns, "b", pauseFor("2s"), envFromConfigMap("cfg")),
		}
		startRipple("--max-rollouts-in-progress=1")
		before := []state{recorded(sets[0]), recorded(sets[1])}

		setData(cm, "k", "2")

		first, second := oneRolls(before)
		held := pausedAt(sets[second])()
		Expect(held).NotTo(BeEmpty())
		Consistently(pausedAt(sets[second]), 3*time.Second).Should(Equal(held), "its hold neither ends nor starts over while it waits")
		Expect(before[second].Rollouts()).To(BeZero())

		markStatefulSet(sets[first], appsv1.StatefulSetStatus{Replicas: 1, ReadyReplicas: 1, UpdatedReplicas: 1, AvailableReplicas: 1,
			CurrentRevision: "r", UpdateRevision: "r"})

		Eventually(before[second].Rollouts, 10*time.Second).Should(Equal(1))
		Expect(eventsFor(sets[second])()).To(ContainElement(HavePrefix("ReloadPaused:")))
	})

	DescribeTable("frees a StatefulSet's slot once its controller has no pod left to replace, so the next of the wave rolls",
		func(strategy appsv1.StatefulSetUpdateStrategy) {
			cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
			sets := []*appsv1.StatefulSet{
				createStatefulSet(ns, "a", auto, envFromConfigMap("cfg")),
				createStatefulSet(ns, "b", auto, envFromConfigMap("cfg")),
			}
			for _, s := range sets {
				s.Spec.UpdateStrategy = strategy
				Expect(k8s.Update(suiteCtx, s)).To(Succeed())
			}
			startRipple("--max-rollouts-in-progress=1", "--rollout-timeout=10m")
			before := []state{recorded(sets[0]), recorded(sets[1])}

			setData(cm, "k", "2")

			first, second := oneRolls(before)
			Consistently(before[second].Rollouts, quiet).Should(BeZero(), "the second waits while its controller has not seen the first's change")
			// The change seen, the one pod (below the partition, or waiting
			// to be deleted) not replaced.
			markStatefulSet(sets[first], appsv1.StatefulSetStatus{Replicas: 1, ReadyReplicas: 1, AvailableReplicas: 1,
				CurrentReplicas: 1, CurrentRevision: "old", UpdateRevision: "new"})

			Eventually(before[second].Rollouts, 10*time.Second).Should(Equal(1), "long before --rollout-timeout")
		},
		Entry("OnDelete", appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}),
		Entry("a partition above its one pod", appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType,
			RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptr.To[int32](1)}}),
	)

	It("never holds up a rollout of another change", func() {
		a := createConfigMap(ns, "a", map[string]string{"k": "1"})
		b := createConfigMap(ns, "b", map[string]string{"k": "1"})
		waveA := wave(ns, "a", 3)
		waveB := wave(ns, "b", 1)
		startRipple("--max-rollouts-in-progress=1")
		beforeA, beforeB := recordAll(waveA), recordAll(waveB)

		setData(a, "k", "2")
		Eventually(func() int { return len(rolledOf(waveA, beforeA)()) }, 10*time.Second).Should(Equal(1))
		setData(b, "k", "2")

		Eventually(beforeB[0].Rollouts, 10*time.Second).Should(Equal(1), "b's change rolls while a's wave waits")
		Expect(rolledOf(waveA, beforeA)()).To(HaveLen(1))
	})

	It("rolls a workload at most once per its minimum interval, with every change made meanwhile", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", map[string]string{annotations.Auto: "true", annotations.MinRolloutInterval: "4s"}, envFromConfigMap("cfg"))
		startRipple()
		before := recorded(dep)
		setData(cm, "k", "2")
		Eventually(before.Rollouts, 10*time.Second).Should(Equal(1), "the first change rolls at once")

		setData(cm, "k", "3")
		setData(cm, "k", "4")

		Consistently(before.Rollouts, 2*time.Second).Should(Equal(1), "held within the interval")
		Eventually(before.Rollouts, 10*time.Second).Should(Equal(2), "one rollout for both changes when it is over")
		Consistently(before.Rollouts, quiet).Should(Equal(2))
		Expect(eventsFor(dep)()).To(ContainElement(HavePrefix("ReloadSkipped: Held: its last rollout was less than 4s ago")))
		Expect(stateOf(dep).Recorded).To(ContainSubstring("ConfigMap/cfg="))
	})

	It("writes each change into a Deployment its owner paused at once, whatever its minimum interval, as no rollout starts until they resume it", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", map[string]string{annotations.Auto: "true", annotations.MinRolloutInterval: "30s"}, envFromConfigMap("cfg"))
		update(dep, func(d *appsv1.Deployment) { d.Spec.Paused = true })
		startRipple()
		before := recorded(dep)
		setData(cm, "k", "2")
		Eventually(before.Rollouts, 10*time.Second).Should(Equal(1))

		setData(cm, "k", "3")

		Eventually(before.Rollouts, 10*time.Second).Should(Equal(2), "the second change is in the template when the owner resumes it")
		Expect(eventsFor(dep)()).NotTo(ContainElement(HavePrefix("ReloadSkipped: Held")))
	})
})
