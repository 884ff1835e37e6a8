package integration

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ripple-controller/ripple/internal/annotations"
)

// pauseFor opts a workload in with a pause period.
func pauseFor(period string) map[string]string {
	return map[string]string{annotations.Auto: "true", annotations.PausePeriod: period}
}

// pausedAt reads the pause annotation ripple writes.
// holdChange makes a workload with a 4 s pause period that uses ConfigMap
// cfg and what mods add, starts ripple, changes cfg, and returns once the
// workload holds the change, with its state before it.
func holdChange(ns string, create creator, mods ...podMod) (*corev1.ConfigMap, client.Object, state, *rippleInstance) {
	GinkgoHelper()
	cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
	obj := create(ns, "held", pauseFor("4s"), append([]podMod{envFromConfigMap("cfg")}, mods...)...)
	r := startRipple()
	before := recorded(obj)
	setData(cm, "k", "2")
	Eventually(pausedAt(obj), 10*time.Second).ShouldNot(BeEmpty())
	return cm, obj, before, r
}

func pausedAt(obj client.Object) func() string {
	return func() string {
		GinkgoHelper()
		Expect(k8s.Get(suiteCtx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
		return obj.GetAnnotations()[annotations.PausedAt]
	}
}

// specPaused reads a Deployment's spec.paused.
func specPaused(dep *appsv1.Deployment) func() bool {
	return func() bool {
		GinkgoHelper()
		Expect(k8s.Get(suiteCtx, client.ObjectKeyFromObject(dep), dep)).To(Succeed())
		return dep.Spec.Paused
	}
}

// pauseStep is one version of a Deployment as a watch saw it.
type pauseStep struct {
	Paused, Annotated bool
	Stamp             string
}

// pauseHistory records, through a watch from s, every version of the
// Deployment, so a spec sees a pause however soon it ended.
func pauseHistory(dep *appsv1.Deployment, s state) func() []pauseStep {
	GinkgoHelper()
	ctx, cancel := context.WithCancel(suiteCtx)
	DeferCleanup(cancel)
	w, err := watcher.Watch(ctx, &appsv1.DeploymentList{}, client.InNamespace(dep.Namespace),
		client.MatchingFields{"metadata.name": dep.Name},
		&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: s.ResourceVersion}})
	Expect(err).NotTo(HaveOccurred())
	var mu sync.Mutex
	var steps []pauseStep
	go func() {
		defer GinkgoRecover()
		for ev := range w.ResultChan() {
			d, ok := ev.Object.(*appsv1.Deployment)
			if !ok {
				continue
			}
			_, annotated := d.Annotations[annotations.PausedAt]
			mu.Lock()
			steps = append(steps, pauseStep{Paused: d.Spec.Paused, Annotated: annotated, Stamp: stampOf(&d.Spec.Template)})
			mu.Unlock()
		}
	}()
	return func() []pauseStep {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(steps)
	}
}

// pausedThenResumed finds the first version ripple paused and reports
// whether a later one is resumed with the annotation removed.
func pausedThenResumed(steps []pauseStep) (first int, resumed bool) {
	first = slices.IndexFunc(steps, func(s pauseStep) bool { return s.Paused && s.Annotated })
	if first < 0 {
		return -1, false
	}
	return first, slices.ContainsFunc(steps[first:], func(s pauseStep) bool { return !s.Paused && !s.Annotated })
}

// expectPausedThenResumed waits for ripple to pause the Deployment after
// before and then, within the period and a margin, to resume it. It returns
// the versions up to the one ripple paused.
func expectPausedThenResumed(dep *appsv1.Deployment, before state, within time.Duration) []pauseStep {
	GinkgoHelper()
	history := pauseHistory(dep, before)
	Eventually(func() bool { _, ok := pausedThenResumed(history()); return ok }, 10*time.Second+within).Should(BeTrue(),
		"ripple pauses the Deployment, then resumes it and removes its pause annotation when the period ends")
	steps := history()
	first, _ := pausedThenResumed(steps)
	return steps[:first+1]
}

// relabelUntil writes a label of the Deployment as fast as four unthrottled
// clients can until done returns.
func relabelUntil(dep *appsv1.Deployment, done func()) {
	GinkgoHelper()
	cfg := rest.CopyConfig(restConfig)
	cfg.QPS = -1
	c, err := client.New(cfg, client.Options{})
	Expect(err).NotTo(HaveOccurred())
	ctx, cancel := context.WithCancel(suiteCtx)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				patch := fmt.Sprintf(`{"metadata":{"labels":{"writer-%d":"%d"}}}`, w, i)
				obj := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: dep.Namespace, Name: dep.Name}}
				_ = c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, []byte(patch)))
			}
		})
	}
	done()
	cancel()
	wg.Wait()
}

// pausedThenStopped starts ripple on a Deployment with a pause period,
// changes its ConfigMap, waits for ripple to pause it and stops ripple.
func pausedThenStopped(ns, period string) (*corev1.ConfigMap, *appsv1.Deployment) {
	GinkgoHelper()
	cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
	dep := createDeployment(ns, "dep", pauseFor(period), envFromConfigMap("cfg"))
	first := startRipple()
	recorded(dep)
	setData(cm, "k", "2")
	Eventually(specPaused(dep), 10*time.Second).Should(BeTrue())
	first.stop()
	return cm, dep
}

var _ = Describe("Pause periods", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace(nil) })

	It("pauses a Deployment with its reload and resumes it when the period ends (Reloader's pause-period case)", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", pauseFor("3s"), envFromConfigMap("cfg"))
		startRipple()
		before := recorded(dep)

		setData(cm, "k", "2")

		expectPausedThenResumed(dep, before, 10*time.Second)
		expectRolledOnce(dep, before)
		Expect(eventsFor(dep)()).To(ContainElement(HavePrefix("Reloaded: Paused for 3s because ConfigMap/cfg changed")))
		Eventually(eventsFor(dep), 5*time.Second).Should(ContainElement(HavePrefix("PauseEnded: ")))
	})

	It("does not pause a Deployment without a pause period (Reloader's negative case)", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", auto, envFromConfigMap("cfg"))
		startRipple()
		before := recorded(dep)

		setData(cm, "k", "2")

		expectRolledOnce(dep, before)
		Consistently(specPaused(dep), quiet).Should(BeFalse())
		Expect(pausedAt(dep)()).To(BeEmpty())
	})

	It("writes every change of the period to the paused Deployment and keeps the pause's start, so it rolls once", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		sec := createSecret(ns, "creds", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", pauseFor("6s"), envFromConfigMap("cfg"), envFromSecret("creds"))
		startRipple()
		before := recorded(dep)

		setData(cm, "k", "2")
		Eventually(pausedAt(dep), 10*time.Second).ShouldNot(BeEmpty())
		start := pausedAt(dep)()
		setSecretData(sec, "k", "2")

		Eventually(func() string { return stateOf(dep).Recorded }, 10*time.Second).Should(Not(Equal(before.Recorded)))
		Eventually(before.Rollouts, 10*time.Second).Should(Equal(2), "both changes reach the template while the rollout is held")
		Expect(pausedAt(dep)()).To(Equal(start), "a change during the pause does not extend it")
		Expect(specPaused(dep)()).To(BeTrue())
		Eventually(specPaused(dep), 15*time.Second).Should(BeFalse())
	})

	It("pauses a Deployment resumed by hand during its pause again at the next change, as Reloader does", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", pauseFor("1h"), envFromConfigMap("cfg"))
		startRipple()
		recorded(dep)
		setData(cm, "k", "2")
		Eventually(specPaused(dep), 10*time.Second).Should(BeTrue())

		update(dep, func(d *appsv1.Deployment) { d.Spec.Paused = false })
		Eventually(eventsFor(dep), 10*time.Second).Should(ContainElement(HavePrefix("PauseEnded: ")), "the resume by hand ends the pause")
		Eventually(pausedAt(dep), 10*time.Second).Should(BeEmpty())
		setData(cm, "k", "3")

		// Only ripple's pause sets spec.paused here: a new one began.
		Eventually(specPaused(dep), 10*time.Second).Should(BeTrue())
		Expect(pausedAt(dep)()).NotTo(BeEmpty())
	})

	It("reports under --dry-run the change of a Deployment resumed by hand during a pause", func() {
		cm, dep := pausedThenStopped(ns, "1h")
		update(dep, func(d *appsv1.Deployment) { d.Spec.Paused = false })

		startRipple("--dry-run")
		setData(cm, "k", "3")
		Eventually(eventsFor(dep), 10*time.Second).Should(ContainElement(HavePrefix("WouldReload: ")))
		Expect(eventsFor(dep)()).NotTo(ContainElement(HavePrefix("PauseEnded: ")))
	})

	It("leaves a Deployment its owner paused to its owner", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", pauseFor("2s"), envFromConfigMap("cfg"))
		update(dep, func(d *appsv1.Deployment) { d.Spec.Paused = true })
		startRipple()
		before := recorded(dep)

		setData(cm, "k", "2")

		expectRolledOnce(dep, before)
		Consistently(specPaused(dep), quiet+2*time.Second).Should(BeTrue(), "ripple never resumes what it did not pause")
		Expect(pausedAt(dep)()).To(BeEmpty())
	})

	DescribeTable("holds the changes of a workload that cannot pause and rolls them once when the period ends",
		func(create creator) {
			sec := createSecret(ns, "creds", map[string]string{"k": "1"})
			_, obj, before, _ := holdChange(ns, create, envFromSecret("creds"))
			setSecretData(sec, "k", "2")
			Consistently(before.Rollouts, 2*time.Second).Should(BeZero(), "nothing rolls during the pause")
			Eventually(eventsFor(obj), 5*time.Second).Should(ContainElement(HavePrefix("ReloadPaused: ConfigMap/cfg changed; the workload rolls in 4s")))

			Eventually(before.Rollouts, 10*time.Second).Should(Equal(1), "one rollout when the period ends")
			Consistently(before.Rollouts, quiet).Should(Equal(1), "and no pause of its own after it")
			Expect(pausedAt(obj)()).To(BeEmpty())
			Expect(stateOf(obj).Recorded).To(SatisfyAll(ContainSubstring("ConfigMap/cfg="), ContainSubstring("Secret/creds=")))
		},
		Entry("a StatefulSet", statefulSet),
		Entry("a DaemonSet", daemonSet),
	)

	It("resumes a Deployment paused before a restart of ripple, at the end of its period", func() {
		_, dep := pausedThenStopped(ns, "5s")

		startRipple()

		Eventually(specPaused(dep), 15*time.Second).Should(BeFalse(), "the pause is kept on the object, not in memory")
		Expect(pausedAt(dep)()).To(BeEmpty())
	})

	It("resumes a Deployment it paused when a restart puts its namespace in --namespaces-to-ignore", func() {
		_, dep := pausedThenStopped(ns, "3s")

		startRipple("--namespaces-to-ignore=" + ns)

		Eventually(specPaused(dep), 15*time.Second).Should(BeFalse(), "a pause never outlasts its period")
		Expect(pausedAt(dep)()).To(BeEmpty())
	})

	It("resumes a Deployment whose resume lost a race to a write that queues nothing", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", pauseFor("3s"), envFromConfigMap("cfg"))
		startRipple()
		recorded(dep)
		setData(cm, "k", "2")
		Eventually(pausedAt(dep), 10*time.Second).ShouldNot(BeEmpty())
		end := mustParseTime(pausedAt(dep)()).Unix() + 3

		// ripple resumes under the version it read; label writes move the
		// version under it, and the predicates drop them.
		relabelUntil(dep, func() { waitServerPast(ns, end+1) })

		Eventually(specPaused(dep), 10*time.Second).Should(BeFalse(), "a resume refused for a conflict is retried")
		Expect(pausedAt(dep)()).To(BeEmpty())
	})

	It("resumes a Deployment whose pause ended while ripple was down as soon as ripple starts", func() {
		// The pause's start is written in whole seconds, so a 1s pause can
		// end within milliseconds of the rollout, before a poll sees it.
		_, dep := pausedThenStopped(ns, "3s")
		Expect(specPaused(dep)()).To(BeTrue(), "still paused while ripple is down")
		waitServerPast(ns, mustParseTime(pausedAt(dep)()).Unix()+4)

		startRipple()

		Eventually(specPaused(dep), 10*time.Second).Should(BeFalse())
	})

	It("resumes a Deployment whose resumption the API server refused, once it accepts it", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", pauseFor("3s"), envFromConfigMap("cfg"))
		startRipple()
		recorded(dep)
		// Refuses every write that leaves the Deployment running: the
		// pause's start passes, its end does not.
		allow := refuseUnless(ns, admissionregistrationv1.Update, "apps", "deployments", "has(object.spec.paused) && object.spec.paused", func() error {
			probe := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: dep.Namespace, Name: dep.Name}}
			return k8s.Patch(suiteCtx, probe, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"paused":false}}`)), client.DryRunAll)
		})
		setData(cm, "k", "2")
		Eventually(specPaused(dep), 10*time.Second).Should(BeTrue())
		waitServerPast(ns, mustParseTime(pausedAt(dep)()).Unix()+3+3)
		Expect(specPaused(dep)()).To(BeTrue(), "still paused while refused")

		allow()

		Eventually(specPaused(dep), 10*time.Second).Should(BeFalse())
	})

	It("resumes a Deployment when the leader that paused it is gone and another replica leads", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", pauseFor("4s"), envFromConfigMap("cfg"))
		ha := []string{"--enable-ha", "--leader-election-namespace=" + ns, "--leader-election-id=ripple-pause",
			"--leader-election-lease-duration=2s", "--leader-election-renew-deadline=1500ms", "--leader-election-retry-period=200ms"}
		leader := startRipple(ha...)
		recorded(dep)
		standby := startRipple(ha...)
		setData(cm, "k", "2")
		Eventually(specPaused(dep), 10*time.Second).Should(BeTrue())

		leader.stop()

		Eventually(specPaused(dep), 20*time.Second).Should(BeFalse(), "the new leader ends the pause")
		Expect(pausedAt(dep)()).To(BeEmpty())
		Eventually(standby.logs).Should(gbytes.Say("Ended a pause"))
	})

	It("holds a StatefulSet across a restart of ripple and rolls it once when the period ends", func() {
		_, _, before, first := holdChange(ns, statefulSet)
		first.stop()

		startRipple()

		Eventually(before.Rollouts, 15*time.Second).Should(Equal(1))
		Consistently(before.Rollouts, quiet).Should(Equal(1))
	})

	It("ends a StatefulSet's hold when what it held at its end rolls nothing but is recorded", func() {
		cm, sts, before, _ := holdChange(ns, statefulSet, envFromSecret("later"))
		setData(cm, "k", "1")
		createSecret(ns, "later", map[string]string{"k": "1"})

		Eventually(eventsFor(sts), 15*time.Second).Should(ContainElement(HavePrefix("PauseEnded")))
		Expect(pausedAt(sts)()).To(BeEmpty())
		Expect(stateOf(sts).Recorded).To(ContainSubstring("Secret/later="), "the Secret created during the hold is recorded")
		Consistently(before.Rollouts, quiet).Should(BeZero(), "the change it held was undone, and a creation does not roll")
	})

	It("keeps a StatefulSet's hold while its minimum interval runs, and rolls it once at the interval's end", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		ann := pauseFor("2s")
		ann[annotations.MinRolloutInterval] = "8s"
		sts := createStatefulSet(ns, "sts", ann, envFromConfigMap("cfg"))
		startRipple()
		before := recorded(sts)
		setData(cm, "k", "2")
		Eventually(before.Rollouts, 10*time.Second).Should(Equal(1), "the first change rolls when its hold ends")

		setData(cm, "k", "3")
		Eventually(eventsFor(sts), 10*time.Second).Should(ContainElement(ContainSubstring("less than 8s ago")))
		Eventually(before.Rollouts, 15*time.Second).Should(Equal(2), "the second rolls when the interval ends")
		Consistently(before.Rollouts, quiet).Should(Equal(2))
		Expect(countPrefix(eventsFor(sts)(), "ReloadPaused")).To(Equal(2), "one hold per change: the interval neither ends the hold nor starts another")
	})

	It("writes a change made during a Deployment's pause into the paused template whatever its minimum interval, so both roll at the pause's end", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		ann := pauseFor("5s")
		ann[annotations.MinRolloutInterval] = "10s"
		dep := createDeployment(ns, "dep", ann, envFromConfigMap("cfg"))
		startRipple()
		before := recorded(dep)
		setData(cm, "k", "2")
		Eventually(specPaused(dep), 10*time.Second).Should(BeTrue())

		setData(cm, "k", "3")

		Eventually(before.Rollouts, 4*time.Second).Should(Equal(2), "the second change is written into the paused template")
		Expect(specPaused(dep)()).To(BeTrue(), "while the pause lasts")
		Eventually(specPaused(dep), 10*time.Second).Should(BeFalse())
		Consistently(before.Rollouts, 6*time.Second).Should(Equal(2), "no rollout of its own for the second change")
	})

	It("pauses every workload without the annotation with --pause-period, and none whose annotation says 0", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		byFlag := createDeployment(ns, "by-flag", auto, envFromConfigMap("cfg"))
		optedOut := createDeployment(ns, "opted-out", pauseFor("0"), envFromConfigMap("cfg"))
		startRipple("--pause-period=3s")
		before := recorded(byFlag)
		recorded(optedOut)

		setData(cm, "k", "2")

		expectPausedThenResumed(byFlag, before, 10*time.Second)
		Expect(specPaused(optedOut)()).To(BeFalse())
		Expect(pausedAt(optedOut)()).To(BeEmpty())
	})

	It("reads the pause annotations under the names the flags give", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", map[string]string{annotations.Auto: "true", "example.com/pause": "2s"}, envFromConfigMap("cfg"))
		startRipple("--pause-deployment-annotation=example.com/pause", "--pause-deployment-time-annotation=example.com/paused-at")
		recorded(dep)

		setData(cm, "k", "2")

		Eventually(func() map[string]string { return pausedAnnotations(dep) }, 10*time.Second).Should(HaveKey("example.com/paused-at"))
		Eventually(specPaused(dep), 10*time.Second).Should(BeFalse())
		Expect(pausedAnnotations(dep)).NotTo(HaveKey("example.com/paused-at"))
	})

	It("reports a pause period on a CronJob, which it does not pause, with an InvalidAnnotation Event", func() {
		createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		cj := createCronJob(ns, "nightly", map[string]string{annotations.Auto: "true", annotations.PausePeriod: "5m"}, envFromConfigMap("cfg"))
		startRipple()

		Eventually(eventsFor(cj), 20*time.Second).Should(ContainElement(And(HavePrefix("InvalidAnnotation"),
			ContainSubstring("applies only to Deployments, StatefulSets and DaemonSets"))))
	})

	It("reports an invalid pause period with an InvalidAnnotation Event and rolls without a pause", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", pauseFor("5 minutes"), envFromConfigMap("cfg"))
		startRipple()
		before := recorded(dep)
		Eventually(eventsFor(dep), 10*time.Second).Should(ContainElement(ContainSubstring("InvalidAnnotation: annotation deployment.reloader.stakater.com/pause-period: \"5 minutes\" is not a duration")))

		setData(cm, "k", "2")

		expectRolledOnce(dep, before)
		Expect(specPaused(dep)()).To(BeFalse())
	})

	It("ends a pause at once when its period is removed or its start is unreadable or in the future", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		removed := createDeployment(ns, "removed", pauseFor("10m"), envFromConfigMap("cfg"))
		garbled := createDeployment(ns, "garbled", pauseFor("10m"), envFromConfigMap("cfg"))
		future := createDeployment(ns, "future", pauseFor("10m"), envFromConfigMap("cfg"))
		startRipple()
		for _, d := range []*appsv1.Deployment{removed, garbled, future} {
			recorded(d)
		}
		setData(cm, "k", "2")
		for _, d := range []*appsv1.Deployment{removed, garbled, future} {
			Eventually(specPaused(d), 10*time.Second).Should(BeTrue())
		}

		update(removed, func(d *appsv1.Deployment) { delete(d.Annotations, annotations.PausePeriod) })
		update(garbled, func(d *appsv1.Deployment) { d.Annotations[annotations.PausedAt] = "not a time" })
		update(future, func(d *appsv1.Deployment) { d.Annotations[annotations.PausedAt] = "2099-01-01T00:00:00Z" })

		for _, d := range []*appsv1.Deployment{removed, garbled, future} {
			Eventually(specPaused(d), 10*time.Second).Should(BeFalse(), "%s is resumed", d.Name)
		}
	})
})

func pausedAnnotations(obj client.Object) map[string]string {
	GinkgoHelper()
	Expect(k8s.Get(suiteCtx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
	return maps.Clone(obj.GetAnnotations())
}

func mustParseTime(s string) time.Time {
	GinkgoHelper()
	t, err := time.Parse(time.RFC3339, s)
	Expect(err).NotTo(HaveOccurred())
	return t
}
