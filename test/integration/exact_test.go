package integration

import (
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"golang.org/x/sync/errgroup"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ripple-controller/ripple/internal/annotations"
)

// Changes that a reconcile cannot see as an edit of a recorded object: the
// record, the pod template's stamp and the objects' own history are the
// evidence that the pods run older config than what is there now.
var _ = Describe("Never losing a change", neverLosingAChange)

// The same guarantees hold when rollouts set Reloader's variables instead
// of the annotation: the variables are then the stamp.
var _ = Describe("Never losing a change under the env-vars strategy", func() {
	BeforeEach(func() { withDefaultArgs("--reload-strategy=env-vars") })
	neverLosingAChange()
})

func neverLosingAChange() {
	var ns string
	BeforeEach(func() { ns = newNamespace(nil) })

	It("rolls once when a tracked ConfigMap is deleted and recreated with other data, without --reload-on-create", func() {
		cm := createConfigMap(ns, "app-config", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("app-config"))
		startRipple()
		before := recorded(dep)

		Expect(k8s.Delete(suiteCtx, cm)).To(Succeed())
		expectNoRollout(dep, before)
		createConfigMap(ns, "app-config", map[string]string{"k": "2"})

		expectRolledOnce(dep, before)
	})

	It("rolls once when a tracked Secret is deleted and recreated with other data while ripple is down", func() {
		sec := createSecret(ns, "creds", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", auto, envFromSecret("creds"))
		first := startRipple()
		before := recorded(dep)
		Expect(k8s.Delete(suiteCtx, sec)).To(Succeed())
		expectNoRollout(dep, before)
		first.stop()

		createSecret(ns, "creds", map[string]string{"k": "2"})
		startRipple()

		expectRolledOnce(dep, before)
	})

	It("rolls once under --reload-on-create for a deleted Secret recreated with the same data after a rollout replaced the pods that held it", func() {
		sec := createSecret(ns, "creds", map[string]string{"k": "1"})
		cm := createConfigMap(ns, "app-config", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", auto, envFromSecret("creds"), volumeConfigMap("app-config"))
		startRipple("--reload-on-create")
		before := recorded(dep)
		Expect(k8s.Delete(suiteCtx, sec)).To(Succeed())
		expectNoRollout(dep, before)
		rolled := rolledOnceBy(dep, cm, "2")

		createSecret(ns, "creds", map[string]string{"k": "1"})

		expectRolledOnce(dep, withRollouts(dep, rolled))
	})

	It("rolls once for a Secret created and written while ripple's watch of Secrets was broken, across a record written meanwhile", func() {
		dep := createDeployment(ns, "dep", auto, envFromSecret("creds"), volumeConfigMap("later"))
		watches := &breakableWatches{path: "/secrets"}
		withRippleTransport(watches.wrap)
		startRipple()
		before := recorded(dep)

		watches.cut()
		sec := createSecret(ns, "creds", map[string]string{"k": "placeholder"})
		waitServerPast(ns, sec.CreationTimestamp.Unix())
		setSecretData(sec, "k", "real")
		waitServerPast(ns, lastWrite(sec))
		// A record written while ripple's cache lacks the Secret.
		createConfigMap(ns, "later", map[string]string{"k": "1"})
		Eventually(func() string { return stateOf(dep).Recorded }, 20*time.Second).Should(ContainSubstring("ConfigMap/later="))
		waitServerPast(ns, recordedAt(stateOf(dep))+2)
		watches.restore()

		expectRolledOnce(dep, before)
	})

	It("writes nothing when a deleted ConfigMap is recreated with the same data", func() {
		cm := createConfigMap(ns, "app-config", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("app-config"))
		startRipple()
		before := recorded(dep)

		Expect(k8s.Delete(suiteCtx, cm)).To(Succeed())
		createConfigMap(ns, "app-config", map[string]string{"k": "1"})

		expectNoWrite(dep, before)
	})

	It("rolls once when an object is created and updated within the debounce window", func() {
		dep := createDeployment(ns, "dep", auto, envFromSecret("optional"))
		startRipple("--debounce=2s")
		before := recorded(dep)

		sec := createSecret(ns, "optional", map[string]string{"k": "placeholder"})
		setSecretData(sec, "k", "real")

		expectRolledOnce(dep, before)
	})

	It("rolls once when an object is created and then updated while ripple is down, and not for the creation alone", func() {
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("placeholder"), envFromSecret("created-only"))
		first := startRipple()
		before := recorded(dep)
		first.stop()

		createSecret(ns, "created-only", map[string]string{"k": "1"})
		cm := createConfigMap(ns, "placeholder", map[string]string{"k": "0"})
		updateInALaterSecond(cm)
		startRipple()

		expectRolledOnce(dep, before)
	})

	It("rolls once when an object is created and then updated while ripple reads the digests of a record it writes", func() {
		dep := createDeployment(ns, "dep", auto, envFromSecret("slow"), envFromSecret("optional"))
		reads := newHeldReads("/namespaces/" + ns + "/secrets/slow")
		withRippleTransport(reads.wrap)
		startRipple()
		before := recorded(dep)
		createSecret(ns, "slow", map[string]string{"k": "1"})
		Eventually(reads.arrived, 20*time.Second).Should(Receive(), "the record of the creation reads it")

		sec := createSecret(ns, "optional", map[string]string{"k": "placeholder"})
		waitServerPast(ns, sec.CreationTimestamp.Unix())
		setSecretData(sec, "k", "real")
		// A record written from now on is past the creation by more than
		// the clock slack, by ripple's estimate of the API server's clock
		// too (half a second off at most), as a slow write's was.
		waitServerPast(ns, sec.CreationTimestamp.Unix()+2)
		close(reads.release)

		expectRolledOnce(dep, before)
	})

	It("rolls once when a Secret is created and then changed by a server-side apply of stringData while ripple is down", func() {
		dep := createDeployment(ns, "dep", auto, envFromSecret("applied"))
		first := startRipple()
		before := recorded(dep)
		first.stop()

		apply := func(v string) *corev1.Secret {
			GinkgoHelper()
			Expect(k8s.Apply(suiteCtx, corev1ac.Secret("applied", ns).WithStringData(map[string]string{"k": v}),
				client.FieldOwner("gitops"), client.ForceOwnership)).To(Succeed())
			s := &corev1.Secret{}
			Expect(k8s.Get(suiteCtx, client.ObjectKey{Namespace: ns, Name: "applied"}, s)).To(Succeed())
			return s
		}
		created := apply("1")
		waitServerPast(ns, created.CreationTimestamp.Unix())
		apply("2")
		startRipple()

		expectRolledOnce(dep, before)
	})

	It("does not roll for objects created while ripple is down and never updated", func() {
		dep := createDeployment(ns, "dep", auto, envFromSecret("late"))
		first := startRipple()
		before := recorded(dep)
		first.stop()

		createSecret(ns, "late", map[string]string{"k": "1"})
		startRipple()

		Eventually(func() string { return stateOf(dep).Recorded }, 20*time.Second).Should(ContainSubstring("Secret/late="))
		expectNoRollout(dep, before)
	})

	It("rolls once when the record is lost while ripple is down and a tracked ConfigMap changed", func() {
		cm := createConfigMap(ns, "app-config", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("app-config"))
		first := startRipple()
		rolled := rolledOnceBy(dep, cm, "2")
		first.stop()

		setData(cm, "k", "3")
		removeRecord(dep)
		startRipple()

		expectRolledOnce(dep, rolled)
	})

	It("rolls once when the record is replaced away at the moment a tracked ConfigMap changes", func() {
		cm := createConfigMap(ns, "app-config", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("app-config"))
		startRipple("--debounce=2s")
		rolled := rolledOnceBy(dep, cm, "2")

		// The replace reaches ripple before the debounced change does.
		setData(cm, "k", "3")
		removeRecord(dep)

		expectRolledOnce(dep, rolled)
	})

	It("only records again when the record is lost and the config is what the pods run", func() {
		cm := createConfigMap(ns, "app-config", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("app-config"))
		startRipple()
		rolled := rolledOnceBy(dep, cm, "2")

		removeRecord(dep)

		Eventually(func() string { return stateOf(dep).Recorded }, 20*time.Second).ShouldNot(BeEmpty())
		expectNoRollout(dep, rolled)
	})

	It("records a workload whose first record writes lose races to other writers, with no RecordStripped Event", func() {
		createConfigMap(ns, "app-config", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", nil, volumeConfigMap("app-config"))
		startRipple()

		// Opted in while label writers move its version under each record
		// ripple writes, which the API server then refuses for a conflict.
		relabelUntil(dep, func() {
			optIn := fmt.Sprintf(`{"metadata":{"annotations":{%q:"true"}}}`, annotations.Auto)
			Expect(k8s.Patch(suiteCtx, dep.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(optIn)))).To(Succeed())
			waitServerPast(ns, time.Now().Unix()+2)
		})

		Eventually(func() string { return stateOf(dep).Recorded }, 10*time.Second).ShouldNot(BeEmpty(), "no back-off: nobody stripped a record")
		Expect(countPrefix(eventsFor(dep)(), "RecordStripped")).To(BeZero())
	})

	It("backs off with one RecordStripped Event from a writer that strips the record on every write", func() {
		createConfigMap(ns, "app-config", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("app-config"))
		startRipple()
		before := recorded(dep)

		// First sight and four losses within ten minutes are answered at once.
		for range 4 {
			removeRecord(dep)
			Eventually(func() string { return stateOf(dep).Recorded }, 20*time.Second).ShouldNot(BeEmpty(), "ripple records again")
		}
		removeRecord(dep)

		Consistently(func() string { return stateOf(dep).Recorded }, quiet).Should(BeEmpty(), "ripple backs off")
		Eventually(eventsFor(dep), 10*time.Second).Should(ContainElement(HavePrefix(reasonPrefix("RecordStripped"))))
		removeRecord(dep)
		Consistently(func() int { return countPrefix(eventsFor(dep)(), "RecordStripped") }, quiet).Should(Equal(1))
		expectNoRollout(dep, before)
	})

	It("does not roll a workload created with a record and a stamp copied from another", func() {
		copied, rolled, restored := copiedAfterAChange(ns, true)
		startRipple()

		Eventually(func() string { return stateOf(copied).Recorded }, 20*time.Second).ShouldNot(Equal(rolled.Recorded))
		expectNoRollout(copied, restored)
	})

	// As when ripple recreates a Job just before it goes down: the copy's
	// pods may have started before a change made while ripple was down.
	DescribeTable("rolls a workload created with a record copied from another for a change made after its creation while ripple was down",
		func(change func(cm *corev1.ConfigMap)) {
			cm := createConfigMap(ns, "app-config", map[string]string{"k": "1"})
			dep := createDeployment(ns, "dep", auto, volumeConfigMap("app-config"))
			first := startRipple()
			rolled := rolledOnceBy(dep, cm, "2")
			first.stop()
			waitServerPast(ns, recordedAt(rolled)+1)

			copied := createCopy(dep, "restored")
			restored := withRollouts(copied, stateOf(copied))
			change(cm)
			startRipple()

			expectRolledOnce(copied, restored)
		},
		Entry("its data written", func(cm *corev1.ConfigMap) { setData(cm, "k", "3") }),
		Entry("deleted and created again with other data", func(cm *corev1.ConfigMap) {
			Expect(k8s.Delete(suiteCtx, cm)).To(Succeed())
			createConfigMap(cm.Namespace, cm.Name, map[string]string{"k": "3"})
		}),
	)

	It("rolls a copy for a change made while ripple was down once a read it needs stops failing, not recording over it", func() {
		cm := createConfigMap(ns, "app-config", map[string]string{"k": "1"})
		gone := createConfigMap(ns, "gone", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("app-config"), envFromConfigMap("gone"))
		reads := &failingReads{path: "/namespaces/" + ns + "/configmaps/gone"}
		withRippleTransport(reads.wrap)
		first := startRipple()
		rolled := rolledOnceBy(dep, cm, "2")
		first.stop()
		Expect(k8s.Delete(suiteCtx, gone)).To(Succeed())
		waitServerPast(ns, recordedAt(rolled)+1)

		copied := createCopy(dep, "restored")
		stale := copied.Annotations[annotations.Recorded]
		restored := withRollouts(copied, stateOf(copied))
		setData(cm, "k", "3")
		reads.failing.Store(true)
		startRipple()
		Eventually(reads.failed.Load, 20*time.Second).Should(BeNumerically(">=", 2), "the read is tried again")
		Expect(stateOf(copied).Recorded).To(Equal(stale), "a change that cannot be read is not recorded over")

		reads.failing.Store(false)
		expectRolledOnce(copied, restored)
	})

	DescribeTable("after a restart, a workload whose stale record a GitOps tool wrote back, but not its stamp,",
		func(meanwhile string, rolls bool) {
			cm := createConfigMap(ns, "app-config", map[string]string{"k": "1"})
			dep := createDeployment(ns, "dep", auto, volumeConfigMap("app-config"))
			r := startRipple()
			stale := recorded(dep).Recorded
			// Past the clock slack, and ripple's estimate of the API
			// server's clock, half a second off at most.
			waitServerPast(ns, recordedAt(stateOf(dep))+2)
			rolled := rolledOnceBy(dep, cm, "2")
			r.stop()
			if meanwhile != "" {
				setData(cm, "k", meanwhile)
			}

			update(dep, func(d *appsv1.Deployment) { d.Annotations[annotations.Recorded] = stale })
			startRipple()

			if rolls {
				expectRolledOnce(dep, rolled)
				return
			}
			Eventually(func() string { return stateOf(dep).Recorded }, 20*time.Second).ShouldNot(Equal(stale), "recorded again")
			expectNoRollout(dep, rolled)
		},
		Entry("is recorded again, not rolled, when its pods run the config it tracks", "", false),
		Entry("rolls once when its config changed since its last rollout", "3", true),
		Entry("rolls once when its config went back to what the stale record names, which the pods no longer run", "1", true),
	)

	It("rolls a workload whose stale record a GitOps tool wrote back when its config goes back to what that record names", func() {
		cm := createConfigMap(ns, "app-config", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", auto, envFromConfigMap("app-config"))
		startRipple()
		first := recorded(dep)
		waitServerPast(ns, recordedAt(first)+2)
		rolled := rolledOnceBy(dep, cm, "2")
		waitServerPast(ns, recordedAt(rolled)+2)

		update(dep, func(d *appsv1.Deployment) { d.Annotations[annotations.Recorded] = first.Recorded })
		written := withRollouts(dep, stateOf(dep))
		setData(cm, "k", "1")

		expectRolledOnce(dep, written)
	})

	It("does not roll for a deletion, which rolls nothing, when a stale record a GitOps tool wrote back names the config otherwise", func() {
		a := createConfigMap(ns, "a", map[string]string{"k": "1"})
		b := createConfigMap(ns, "b", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("a"), volumeConfigMap("b"))
		r := startRipple()
		first := recorded(dep)
		waitServerPast(ns, recordedAt(first)+2)
		rolledOnceBy(dep, a, "2")
		rolledOnceBy(dep, a, "1")
		Expect(k8s.Delete(suiteCtx, b)).To(Succeed())
		r.stop()

		update(dep, func(d *appsv1.Deployment) { d.Annotations[annotations.Recorded] = first.Recorded })
		written := withRollouts(dep, stateOf(dep))
		startRipple()

		expectNoRollout(dep, written)
	})

	It("does not roll a copy again when a GitOps tool writes its stale record back after ripple rolled it", func() {
		cm := createConfigMap(ns, "app-config", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("app-config"))
		first := startRipple()
		rolled := rolledOnceBy(dep, cm, "2")
		waitServerPast(ns, recordedAt(rolled)+1)
		copied := createCopy(dep, "restored")
		stale := copied.Annotations[annotations.Recorded]
		Eventually(func() string { return stateOf(copied).Recorded }, 20*time.Second).ShouldNot(Equal(stale))
		before := withRollouts(copied, stateOf(copied))
		setData(cm, "k", "3")
		expectRolledOnce(copied, before)
		first.stop()

		update(copied, func(d *appsv1.Deployment) { d.Annotations[annotations.Recorded] = stale })
		written := withRollouts(copied, stateOf(copied))
		startRipple()

		Eventually(func() string { return stateOf(copied).Recorded }, 20*time.Second).ShouldNot(Equal(stale))
		expectNoRollout(copied, written)
	})

	It("does not roll with --reload-on-delete when a ConfigMap only leaves ripple's label selector", func() {
		cm := createConfigMap(ns, "app-config", map[string]string{"k": "1"})
		update(cm, func(c *corev1.ConfigMap) { c.Labels = map[string]string{"reload": "yes"} })
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("app-config"))
		startRipple("--reload-on-delete", "--resource-label-selector=reload=yes")
		before := recorded(dep)

		update(cm, func(c *corev1.ConfigMap) { c.Labels = nil })

		Eventually(func() string { return stateOf(dep).Recorded }, 20*time.Second).ShouldNot(ContainSubstring("ConfigMap/app-config="))
		expectNoRollout(dep, before)
	})

	It("does not roll when a ConfigMap whose data was written since its creation enters ripple's label selector", func() {
		cm := createConfigMap(ns, "app-config", map[string]string{"k": "1"})
		updateInALaterSecond(cm)
		// Created well before the record, as an object labelled long after.
		waitServerPast(ns, lastWrite(cm)+1)
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("app-config"))
		startRipple("--resource-label-selector=reload=yes")
		before := recorded(dep)
		waitServerPast(ns, recordedAt(before)+2)

		update(cm, func(c *corev1.ConfigMap) { c.Labels = map[string]string{"reload": "yes"} })

		Eventually(func() string { return stateOf(dep).Recorded }, 20*time.Second).Should(ContainSubstring("ConfigMap/app-config="))
		expectNoRollout(dep, before)
	})

	// Reloader handles each event with that version's annotations and
	// labels: the write that makes the object tracked rolls nothing, the
	// data write after it rolls. One reconcile sees both at once.
	DescribeTable("when a ConfigMap becomes tracked on its own side, and its data is written within one debounce",
		func(depAnn map[string]string, flag string, untracked, tracked func(*corev1.ConfigMap), dataFirst bool) {
			cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
			update(cm, untracked)
			// Older than the record, as an object long in use.
			waitServerPast(ns, lastWrite(cm)+2)
			dep := createDeployment(ns, "dep", depAnn, volumeConfigMap("cfg"))
			startRipple("--debounce=1s", flag)
			before := recorded(dep)

			if dataFirst {
				setData(cm, "k", "2")
				update(cm, tracked)
				Eventually(func() string { return stateOf(dep).Recorded }, 20*time.Second).Should(ContainSubstring("ConfigMap/cfg="))
				expectNoRollout(dep, before)
				return
			}
			update(cm, tracked)
			setData(cm, "k", "2")
			expectRolledOnce(dep, before)
		},
		Entry("rolls once after its ignore annotation is removed", auto, "--debounce=1s",
			func(c *corev1.ConfigMap) { c.Annotations = map[string]string{annotations.Ignore: "true"} },
			func(c *corev1.ConfigMap) { delete(c.Annotations, annotations.Ignore) }, false),
		Entry("rolls once after it is annotated match under search", map[string]string{annotations.Search: "true"}, "--debounce=1s",
			func(*corev1.ConfigMap) {},
			func(c *corev1.ConfigMap) { c.Annotations = map[string]string{annotations.Match: "true"} }, false),
		Entry("rolls once after it takes --resource-label-selector's label", auto, "--resource-label-selector=reload=yes",
			func(*corev1.ConfigMap) {},
			func(c *corev1.ConfigMap) { c.Labels = map[string]string{"reload": "yes"} }, false),
		Entry("does not roll for a change written before its ignore annotation is removed", auto, "--debounce=1s",
			func(c *corev1.ConfigMap) { c.Annotations = map[string]string{annotations.Ignore: "true"} },
			func(c *corev1.ConfigMap) { delete(c.Annotations, annotations.Ignore) }, true),
	)

	// As Reloader: the update that removes ignore carries no data change.
	// The ConfigMap was created in the seconds of the first record, which
	// once made ripple take it for one created since and roll for its
	// change, when that change fell in a later second than its creation.
	It("does not roll, when its ignore annotation is removed, for a change made while a recorded ConfigMap was ignored", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("cfg"))
		startRipple()
		before := recorded(dep)

		update(cm, func(c *corev1.ConfigMap) { c.Annotations = map[string]string{annotations.Ignore: "true"} })
		Eventually(func() string { return stateOf(dep).Recorded }, 20*time.Second).ShouldNot(ContainSubstring("ConfigMap/cfg="))
		setData(cm, "k", "2")
		update(cm, func(c *corev1.ConfigMap) { delete(c.Annotations, annotations.Ignore) })

		Eventually(func() string { return stateOf(dep).Recorded }, 20*time.Second).Should(ContainSubstring("ConfigMap/cfg="))
		expectNoRollout(dep, before)
	})

	It("does not roll, when its ignore annotation is removed, for a change made while a ConfigMap created ignored after the record was ignored", func() {
		createConfigMap(ns, "base", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("base"), volumeConfigMap("cfg"))
		startRipple()
		before := recorded(dep)
		waitServerPast(ns, recordedAt(before)+2)
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"}, map[string]string{annotations.Ignore: "true"})
		// Its data written in a later second than its creation.
		waitServerPast(ns, lastWrite(cm))

		setData(cm, "k", "2")
		update(cm, func(c *corev1.ConfigMap) { delete(c.Annotations, annotations.Ignore) })

		Eventually(func() string { return stateOf(dep).Recorded }, 20*time.Second).Should(ContainSubstring("ConfigMap/cfg="))
		expectNoRollout(dep, before)
	})

	// An annotation the workload's policy does not read changes nothing
	// it tracks: the object is still a creation, as for Reloader.
	DescribeTable("a ConfigMap created after the record and then annotated match, which auto tracks anyway",
		func(flags []string, written func(cm *corev1.ConfigMap)) {
			createConfigMap(ns, "base", map[string]string{"k": "1"})
			dep := createDeployment(ns, "dep", auto, volumeConfigMap("base"), volumeConfigMap("cfg"))
			startRipple(flags...)
			before := recorded(dep)
			waitServerPast(ns, recordedAt(before)+2)

			cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
			written(cm)
			update(cm, func(c *corev1.ConfigMap) { c.Annotations = map[string]string{annotations.Match: "true"} })

			expectRolledOnce(dep, before)
		},
		Entry("rolls once under --reload-on-create", []string{"--debounce=2s", "--reload-on-create"}, func(*corev1.ConfigMap) {}),
		Entry("rolls once for a data change written within one debounce", []string{"--debounce=2s"}, func(cm *corev1.ConfigMap) { setData(cm, "k", "2") }),
	)

	// Reloader sees the label as the object's creation, which rolls only
	// under --reload-on-create, and its data written before it as nothing.
	It("does not roll when a ConfigMap created after the record outside --resource-label-selector has its data written, then takes the label", func() {
		base := createConfigMap(ns, "base", map[string]string{"k": "1"})
		update(base, func(c *corev1.ConfigMap) { c.Labels = map[string]string{"reload": "yes"} })
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("base"), volumeConfigMap("cfg"))
		startRipple("--resource-label-selector=reload=yes")
		before := recorded(dep)
		waitServerPast(ns, recordedAt(before)+2)
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		updateInALaterSecond(cm)
		waitServerPast(ns, lastWrite(cm)+1)

		update(cm, func(c *corev1.ConfigMap) { c.Labels = map[string]string{"reload": "yes"} })

		Eventually(func() string { return stateOf(dep).Recorded }, 20*time.Second).Should(ContainSubstring("ConfigMap/cfg="))
		expectNoRollout(dep, before)
	})

	// The object began to be tracked with the first write, so the data
	// written after it rolls, whatever annotation changes after that.
	DescribeTable("a ConfigMap that becomes tracked, has its data written, then is annotated match, within one debounce",
		func(flags []string, untracked, tracked func(*corev1.ConfigMap)) {
			base := createConfigMap(ns, "base", map[string]string{"k": "1"})
			update(base, func(c *corev1.ConfigMap) { c.Labels = map[string]string{"reload": "yes"} })
			cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
			update(cm, untracked)
			waitServerPast(ns, lastWrite(cm)+2)
			dep := createDeployment(ns, "dep", auto, volumeConfigMap("base"), volumeConfigMap("cfg"))
			startRipple(flags...)
			before := recorded(dep)
			waitServerPast(ns, recordedAt(before)+2)

			update(cm, tracked)
			setData(cm, "k", "2")
			update(cm, func(c *corev1.ConfigMap) { c.Annotations = map[string]string{annotations.Match: "true"} })

			expectRolledOnce(dep, before)
		},
		Entry("rolls once after its ignore annotation is removed", []string{"--debounce=2s"},
			func(c *corev1.ConfigMap) { c.Annotations = map[string]string{annotations.Ignore: "true"} },
			func(c *corev1.ConfigMap) { delete(c.Annotations, annotations.Ignore) }),
		Entry("rolls once after it takes --resource-label-selector's label", []string{"--debounce=2s", "--resource-label-selector=reload=yes"},
			func(*corev1.ConfigMap) {},
			func(c *corev1.ConfigMap) { c.Labels = map[string]string{"reload": "yes"} }),
	)

	It("does not roll when a member of a folded record is marked ignored and back within one debounce", func() {
		createConfigMapsFast(ns, "app-config-%04d", 400)
		dep := createDeployment(ns, "dep", map[string]string{annotations.ConfigMapReload: "app-config-.*"})
		startRipple("--debounce=1s")
		before := recorded(dep)
		Expect(before.Recorded).To(ContainSubstring("ConfigMap/#"), "the record is folded")
		waitServerPast(ns, recordedAt(before)+2)
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app-config-0001"}}

		update(cm, func(c *corev1.ConfigMap) { c.Annotations = map[string]string{annotations.Ignore: "true"} })
		update(cm, func(c *corev1.ConfigMap) { delete(c.Annotations, annotations.Ignore) })

		Consistently(before.Rollouts, time.Second+quiet).Should(BeZero(), "nothing the workload tracks changed")
	})

	// A ConfigMap created with the selector's label is a creation, however
	// late ripple sees it.
	DescribeTable("under --resource-label-selector and --reload-on-create, a ConfigMap created labelled after the record",
		func(late func(b *breakableWatches, s *slowWatches) (before, after func())) {
			base := createConfigMap(ns, "base", map[string]string{"k": "1"})
			update(base, func(c *corev1.ConfigMap) { c.Labels = map[string]string{"reload": "yes"} })
			dep := createDeployment(ns, "dep", auto, volumeConfigMap("base"), volumeConfigMap("cfg"))
			broken, slow := &breakableWatches{path: "/configmaps"}, &slowWatches{path: "/configmaps"}
			withRippleTransport(func(next http.RoundTripper) http.RoundTripper { return slow.wrap(broken.wrap(next)) })
			startRipple("--reload-on-create", "--resource-label-selector=reload=yes")
			before := recorded(dep)
			waitServerPast(ns, recordedAt(before)+2)
			lag, catchUp := late(broken, slow)

			lag()
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cfg", Labels: map[string]string{"reload": "yes"}},
				Data: map[string]string{"k": "1"}}
			Expect(k8s.Create(suiteCtx, cm)).To(Succeed())
			catchUp()

			expectRolledOnce(dep, before)
		},
		Entry("rolls once when its watch lags by seconds", func(_ *breakableWatches, s *slowWatches) (func(), func()) {
			return func() { s.delay.Store(int64(3 * time.Second)) }, func() {}
		}),
		Entry("rolls once when its watch breaks and ripple lists again", func(b *breakableWatches, _ *slowWatches) (func(), func()) {
			return b.cut, func() { waitServerPast(ns, time.Now().Unix()+1); b.restore() }
		}),
	)

	// Ripple's own writes pass no predicate: a reconcile before its cache
	// holds its rollout reads the version it replaced, whose record names
	// the data set back, and saw no change.
	It("rolls again for a change set back before its rollout reached its cache", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("cfg"))
		slow := lagging("/deployments")
		startRipple()
		before := recorded(dep)
		slow.delay.Store(int64(time.Second))

		setData(cm, "k", "2")
		Eventually(before.Rollouts, 20*time.Second).Should(Equal(1))
		setData(cm, "k", "1")
		Eventually(before.Rollouts, 20*time.Second).Should(Equal(2), "dep rolls back to the data set back")
		Consistently(before.Rollouts, quiet).Should(Equal(2))
	})

	// A rollout the API server applied but whose answer was lost is
	// ripple's write all the same: its retry, or the next change, reads
	// the version it replaced until the rollout reaches the cache.
	It("rolls again for a change set back after a rollout whose answer was lost", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("cfg"))
		slow := &slowWatches{path: "/deployments"}
		var lose, lost atomic.Bool
		withRippleTransport(func(next http.RoundTripper) http.RoundTripper {
			inner := slow.wrap(next)
			return roundTripper(func(req *http.Request) (*http.Response, error) {
				rollout := false
				if req.Method == http.MethodPatch && strings.HasSuffix(req.URL.Path, "/deployments/dep") && req.GetBody != nil {
					if b, err := req.GetBody(); err == nil {
						raw, _ := io.ReadAll(b)
						// A rollout writes the pod template (a merge patch, or a
						// JSON patch under the env-vars strategy); a record does not.
						rollout = strings.Contains(string(raw), "template")
					}
				}
				resp, err := inner.RoundTrip(req)
				if err == nil && rollout && resp.StatusCode == http.StatusOK && lose.CompareAndSwap(true, false) {
					_ = resp.Body.Close()
					lost.Store(true)
					return nil, errors.New("the answer was lost")
				}
				return resp, err
			})
		})
		startRipple()
		before := recorded(dep)
		slow.delay.Store(int64(time.Second))
		lose.Store(true)

		setData(cm, "k", "2")
		Eventually(before.Rollouts, 20*time.Second).Should(Equal(1))
		Expect(lost.Load()).To(BeTrue(), "the rollout's answer was lost")
		setData(cm, "k", "1")
		Eventually(before.Rollouts, 20*time.Second).Should(Equal(2), "dep rolls back to the data set back")
	})

	// Past the wait for its own write, ripple reads the workload from the
	// API server: deciding on its cache's version, whose record names the
	// data set back, lost the change. Another workload's write meanwhile
	// prunes what ripple remembers of its writes, which must keep this one.
	It("rolls again for a change set back while its cache lags its rollout by more than 30 s", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		other := createConfigMap(ns, "other", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("cfg"))
		dep2 := createDeployment(ns, "dep2", auto, volumeConfigMap("other"))
		slow := lagging("/deployments")
		startRipple()
		before, before2 := recorded(dep), recorded(dep2)
		slow.delay.Store(int64(3 * time.Minute))
		DeferCleanup(func() { slow.delay.Store(0) })

		setData(cm, "k", "2")
		Eventually(before.Rollouts, 20*time.Second).Should(Equal(1))
		// No event says the wait is over: ripple's clock does.
		time.Sleep(32 * time.Second)
		setData(other, "k", "2")
		Eventually(before2.Rollouts, 20*time.Second).Should(Equal(1))
		setData(cm, "k", "1")
		Eventually(before.Rollouts, 20*time.Second).Should(Equal(2), "dep rolls back to the data set back")
	})

	// The version ripple's rollout replaced is one the API server refuses
	// to patch: a change that does not wait for the rollout to reach the
	// cache is refused as a conflict, and tried again every 50 ms until it
	// does.
	It("makes no write the API server refuses for a change made before its rollout reached its cache", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("cfg"))
		slow := &slowWatches{path: "/deployments"}
		var refused atomic.Int32
		withRippleTransport(func(next http.RoundTripper) http.RoundTripper {
			inner := slow.wrap(next)
			return roundTripper(func(req *http.Request) (*http.Response, error) {
				resp, err := inner.RoundTrip(req)
				if err == nil && req.Method == http.MethodPatch && resp.StatusCode >= http.StatusBadRequest {
					refused.Add(1)
				}
				return resp, err
			})
		})
		startRipple()
		before := recorded(dep)
		slow.delay.Store(int64(time.Second))

		setData(cm, "k", "2")
		Eventually(before.Rollouts, 20*time.Second).Should(Equal(1))
		setData(cm, "k", "3")
		Eventually(before.Rollouts, 20*time.Second).Should(Equal(2))
		Expect(refused.Load()).To(BeZero(), "PATCHes the API server refused")
	})

	// Ripple backs off from a writer that keeps removing its record; its
	// own re-record, not yet in its cache when a ConfigMap changes, is no
	// such writer, and backing off then held the change for a minute.
	It("rolls at once for a change made before its cache holds its own re-record of a record lost five times", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("cfg"))
		slow := lagging("/deployments")
		startRipple()
		recorded(dep)
		garble := func() {
			update(dep, func(d *appsv1.Deployment) { d.Annotations[annotations.Recorded] = "garbage" })
			Eventually(func() string { return stateOf(dep).Recorded }, 20*time.Second).Should(HavePrefix("key="))
		}
		// The first record and four more: the fifth written again since
		// the first is where ripple begins to back off.
		for range 3 {
			garble()
		}
		slow.delay.Store(int64(time.Second))
		garble()
		again := withRollouts(dep, stateOf(dep))
		setData(cm, "k", "2")
		expectRolledOnce(dep, again)
	})

	It("rolls once under --reload-on-create for a ConfigMap created after the record, then marked ignored and back within one debounce", func() {
		createConfigMap(ns, "base", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("base"), volumeConfigMap("cfg"))
		startRipple("--debounce=2s", "--reload-on-create")
		before := recorded(dep)
		waitServerPast(ns, recordedAt(before)+2)

		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		update(cm, func(c *corev1.ConfigMap) { c.Annotations = map[string]string{annotations.Ignore: "true"} })
		update(cm, func(c *corev1.ConfigMap) { delete(c.Annotations, annotations.Ignore) })

		expectRolledOnce(dep, before)
	})

	It("does not roll when a ConfigMap whose ignore annotation was removed then only gains a label", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"}, map[string]string{annotations.Ignore: "true"})
		waitServerPast(ns, lastWrite(cm)+2)
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("cfg"))
		startRipple("--debounce=1s")
		before := recorded(dep)

		update(cm, func(c *corev1.ConfigMap) { delete(c.Annotations, annotations.Ignore) })
		update(cm, func(c *corev1.ConfigMap) { c.Labels = map[string]string{"team": "a"} })

		Eventually(func() string { return stateOf(dep).Recorded }, 20*time.Second).Should(ContainSubstring("ConfigMap/cfg="))
		expectNoRollout(dep, before)
	})

	It("does not roll with --reload-on-delete when a ConfigMap is marked ignored and deleted within one debounce, as Reloader reads the deleted object", func() {
		cm := createConfigMap(ns, "app-config", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("app-config"))
		startRipple("--reload-on-delete", "--debounce=1s")
		before := recorded(dep)

		update(cm, func(c *corev1.ConfigMap) { c.Annotations = map[string]string{annotations.Ignore: "true"} })
		Expect(k8s.Delete(suiteCtx, cm)).To(Succeed())

		Eventually(func() string { return stateOf(dep).Recorded }, 20*time.Second).ShouldNot(ContainSubstring("ConfigMap/app-config="))
		expectNoRollout(dep, before)
	})

	It("does not roll with --reload-on-delete when a renamed ConfigMap's old version is pruned", func() {
		old := createConfigMap(ns, "app-config-aaaa", map[string]string{"k": "1"})
		createConfigMap(ns, "app-config-bbbb", map[string]string{"k": "2"})
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("app-config-aaaa"))
		startRipple("--reload-on-delete")
		before := recorded(dep)

		update(dep, func(d *appsv1.Deployment) {
			d.Spec.Template.Spec.Volumes[0].ConfigMap.Name = "app-config-bbbb"
		})
		Eventually(func() string { return stateOf(dep).Recorded }, 20*time.Second).Should(ContainSubstring("ConfigMap/app-config-bbbb="))
		Expect(k8s.Delete(suiteCtx, old)).To(Succeed())

		Consistently(before.Rollouts, quiet).Should(Equal(1), "only the user's own template edit rolls")
	})
}

var _ = Describe("A reload list that matches thousands of objects", func() {
	It("records the workload with a record far below the annotation limit, rolls it on a change, not on a creation", func() {
		ns := newNamespace(nil)
		const n = 5000
		createConfigMapsFast(ns, "app-config-%04d", n)
		dep := createDeployment(ns, "dep", map[string]string{annotations.ConfigMapReload: "app-config-.*"})
		startRipple()

		before := recorded(dep)
		Expect(len(before.Recorded)).To(BeNumerically("<", 16<<10), "256 KiB is the limit of all of a workload's annotations")
		edited := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("app-config-%04d", n/2)}}
		setData(edited, "k", "changed")
		after := expectRolledOnce(dep, before)

		createConfigMap(ns, "app-config-new", map[string]string{"k": "1"})
		expectNoRollout(dep, after)
	})

	It("does not roll a folded record for a ConfigMap created while ripple's watch of ConfigMaps was broken, across a record written meanwhile", func() {
		ns := newNamespace(nil)
		createConfigMapsFast(ns, "app-config-%04d", 400)
		dep := createDeployment(ns, "dep", map[string]string{annotations.ConfigMapReload: "app-config-.*", annotations.SecretReload: "sec-.*"})
		watches := &breakableWatches{path: "/configmaps"}
		withRippleTransport(watches.wrap)
		startRipple()
		before := recorded(dep)
		Expect(before.Recorded).To(ContainSubstring("ConfigMap/#"), "the record is folded")

		watches.cut()
		cm := createConfigMap(ns, "app-config-late", map[string]string{"k": "1"})
		waitServerPast(ns, cm.CreationTimestamp.Unix()+1)
		// A record written while ripple's cache lacks the ConfigMap.
		createSecret(ns, "sec-a", map[string]string{"k": "1"})
		Eventually(func() string { return stateOf(dep).Recorded }, 20*time.Second).ShouldNot(Equal(before.Recorded))
		meanwhile := stateOf(dep)
		waitServerPast(ns, recordedAt(meanwhile)+2)
		watches.restore()

		Eventually(func() string { return stateOf(dep).Recorded }, 20*time.Second).ShouldNot(Equal(meanwhile.Recorded), "recorded once seen")
		Expect(before.Rollouts()).To(BeZero(), "a creation rolls nothing, as with an unfolded record")
		expectNoRollout(dep, before)
	})
})

var _ = Describe("Two installations on one namespace", func() {
	It("roll each change once and then hold still, and say that they met", func() {
		ns := newNamespace(nil)
		keySecret := func(name string, fill byte) string {
			Expect(k8s.Create(suiteCtx, &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
				Data:       map[string][]byte{"key": []byte(strings.Repeat(string(fill), 32))},
			})).To(Succeed())
			return "--hmac-key-secret=" + ns + "/" + name
		}
		cm := createConfigMap(ns, "app-config", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("app-config"))
		startRipple(keySecret("cluster-wide", 'a'))
		startRipple(keySecret("namespaced", 'b'), "--namespaces="+ns)
		// Whichever installation looks second finds the other's record and
		// says so; from then on, one of them owns the workload.
		Eventually(eventsFor(dep), 30*time.Second).Should(ContainElement(HavePrefix(reasonPrefix("OtherInstallation"))))
		settled := withRollouts(dep, stateOf(dep))

		for i := 2; i <= 3; i++ {
			setData(cm, "k", fmt.Sprint(i))
			Eventually(settled.Rollouts, 20*time.Second).Should(Equal(i-1), "change %d rolls", i)
		}
		Consistently(settled.Rollouts, quiet).Should(Equal(2), "no ping-pong")
		last := stateOf(dep)
		expectNoWrite(dep, last)
	})
})

// rolledOnceBy records the workload, sets the ConfigMap's key k to v and
// waits for the one rollout that follows, so the pod template carries
// ripple's stamp.
func rolledOnceBy(dep *appsv1.Deployment, cm *corev1.ConfigMap, v string) state {
	GinkgoHelper()
	before := recorded(dep)
	setData(cm, "k", v)
	return expectRolledOnce(dep, before)
}

// createCopy creates a Deployment from dep's manifest, record included, as
// a restore or a manifest copied from the live object would.
func createCopy(dep *appsv1.Deployment, name string) *appsv1.Deployment {
	GinkgoHelper()
	Expect(dep.Annotations).To(HaveKey(annotations.Recorded))
	copied := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: dep.Namespace, Name: name, Annotations: dep.Annotations}, Spec: dep.Spec}
	copied.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}}
	copied.Spec.Template.Labels = map[string]string{"app": name}
	Expect(k8s.Create(suiteCtx, copied)).To(Succeed())
	return copied
}

// failingReads fails ripple's GETs of one object while failing is set,
// counting them, as an API server that times out would.
type failingReads struct {
	path    string
	failing atomic.Bool
	failed  atomic.Int32
}

func (f *failingReads) wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		if f.failing.Load() && req.Method == http.MethodGet && strings.HasSuffix(req.URL.Path, f.path) {
			f.failed.Add(1)
			return nil, errors.New("refused by the spec")
		}
		return next.RoundTrip(req)
	})
}

// heldReads holds ripple's GETs of one object, while holding, until
// release is closed, and says on arrived when the first held one comes.
type heldReads struct {
	path    string
	holding atomic.Bool
	arrived chan struct{}
	release chan struct{}
}

func newHeldReads(path string) *heldReads {
	h := &heldReads{path: path, arrived: make(chan struct{}, 1), release: make(chan struct{})}
	h.holding.Store(true)
	return h
}

func (h *heldReads) wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		if h.holding.Load() && req.Method == http.MethodGet && strings.HasSuffix(req.URL.Path, h.path) {
			select {
			case h.arrived <- struct{}{}:
			default:
			}
			select {
			case <-h.release:
			case <-req.Context().Done():
				return nil, req.Context().Err()
			}
		}
		return next.RoundTrip(req)
	})
}

// breakableWatches breaks ripple's lists and watches of one resource on
// demand, as a dropped connection or a restart of the API server does,
// and fails them until restored.
type breakableWatches struct {
	path   string
	mu     sync.Mutex
	broken bool
	open   []io.Closer
}

func (b *breakableWatches) wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		if req.Method != http.MethodGet || !strings.HasSuffix(req.URL.Path, b.path) {
			return next.RoundTrip(req)
		}
		if b.isBroken() {
			return nil, errors.New("broken by the spec")
		}
		resp, err := next.RoundTrip(req)
		if err != nil {
			return resp, err
		}
		b.mu.Lock()
		defer b.mu.Unlock()
		if b.broken {
			_ = resp.Body.Close()
			return nil, errors.New("broken by the spec")
		}
		b.open = append(b.open, resp.Body)
		return resp, nil
	})
}

func (b *breakableWatches) isBroken() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.broken
}

func (b *breakableWatches) cut() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.broken = true
	for _, c := range b.open {
		_ = c.Close()
	}
	b.open = nil
}

func (b *breakableWatches) restore() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.broken = false
}

// lagging makes ripple's watches of the resource at path lag by the
// delay set on what it returns, from then on: ripple's transport for the
// next startRipple.
func lagging(path string) *slowWatches {
	s := &slowWatches{path: path}
	withRippleTransport(s.wrap)
	return s
}

// slowWatches delays each read of ripple's watches of one resource by
// delay, as a watch that lags behind the API server.
type slowWatches struct {
	path  string
	delay atomic.Int64
}

func (s *slowWatches) wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		resp, err := next.RoundTrip(req)
		if err != nil || req.Method != http.MethodGet || !strings.HasSuffix(req.URL.Path, s.path) || req.URL.Query().Get("watch") == "" {
			return resp, err
		}
		resp.Body = &slowBody{ReadCloser: resp.Body, s: s}
		return resp, nil
	})
}

type slowBody struct {
	io.ReadCloser
	s *slowWatches
}

func (b *slowBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.s.wait()
	}
	return n, err
}

// wait sleeps for the delay, and no longer once it is lowered: a spec
// that ends does not leave ripple's watch asleep.
func (s *slowWatches) wait() {
	for start := time.Now(); time.Since(start) < time.Duration(s.delay.Load()); {
		time.Sleep(50 * time.Millisecond)
	}
}

// recordedAt is the API server second the record in s was written at.
func recordedAt(s state) int64 {
	GinkgoHelper()
	at, err := strconv.ParseInt(strings.Split(strings.Split(s.Recorded, ";")[1], "=")[1], 10, 64)
	Expect(err).NotTo(HaveOccurred())
	return at
}

// lastWrite is the API server second obj was last written at, from its
// managed fields.
func lastWrite(obj client.Object) int64 {
	GinkgoHelper()
	Expect(k8s.Get(suiteCtx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
	var at int64
	for _, f := range obj.GetManagedFields() {
		if f.Time != nil {
			at = max(at, f.Time.Unix())
		}
	}
	return at
}

// removeRecord writes the workload back without ripple's record, as
// kubectl replace of an older manifest or a GitOps tool would.
func removeRecord(dep *appsv1.Deployment) {
	GinkgoHelper()
	update(dep, func(d *appsv1.Deployment) { delete(d.Annotations, annotations.Recorded) })
}

// updateInALaterSecond changes the ConfigMap's data once the API server's
// clock has left the second it was created in, as a real edit minutes
// later would.
func updateInALaterSecond(cm *corev1.ConfigMap) {
	GinkgoHelper()
	waitServerPast(cm.Namespace, cm.CreationTimestamp.Unix())
	setData(cm, "k", "updated")
}

// waitServerPast waits until the API server's clock is past the second at,
// by reading the creation time of objects it creates. It sleeps until the
// second must have begun, by what the probes so far tell of the server's
// clock, then probes: one probe or two where a poll every 100 ms made up to
// thirty, each a create and a delete that every informer of the cluster's
// ConfigMaps hears of.
func waitServerPast(ns string, at int64) {
	GinkgoHelper()
	deadline := time.Now().Add(max(10*time.Second, time.Until(time.Unix(at, 0))+10*time.Second))
	for serverSecond(ns) <= at {
		Expect(time.Now().Before(deadline)).To(BeTrue(), "the API server's clock passes the second %d", at)
		time.Sleep(serverClock.until(at + 1))
	}
}

// serverClock bounds the API server's clock minus this process's: a probe
// sent at local time t0, answered at t1 and created in the server's second
// s puts it in [s-t1, s+1-t0).
var serverClock = &clockOffset{lo: math.Inf(-1), hi: math.Inf(1)}

type clockOffset struct {
	mu     sync.Mutex
	lo, hi float64
}

func (c *clockOffset) observe(t0, t1 time.Time, s int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lo = max(c.lo, float64(s)-seconds(t1))
	c.hi = min(c.hi, float64(s+1)-seconds(t0))
}

// until returns how long until the server's clock must be in the second
// at, or, before any probe, a poll's interval.
func (c *clockOffset) until(at int64) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	if math.IsInf(c.lo, -1) {
		return pollInterval
	}
	wait := time.Duration((float64(at)-c.lo)*float64(time.Second)) - time.Duration(time.Now().UnixNano()) + 5*time.Millisecond
	return max(wait, 10*time.Millisecond)
}

func seconds(t time.Time) float64 { return float64(t.UnixNano()) / float64(time.Second) }

// serverSecond creates and deletes an object and returns the second the
// API server created it in.
func serverSecond(ns string) int64 {
	GinkgoHelper()
	probe := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "clock-"}}
	t0 := time.Now()
	Expect(k8s.Create(suiteCtx, probe)).To(Succeed())
	t1 := time.Now()
	Expect(k8s.Delete(suiteCtx, probe)).To(Succeed())
	s := probe.CreationTimestamp.Unix()
	serverClock.observe(t0, t1, s)
	return s
}

func reasonPrefix(reason string) string { return reason + ": " }

func countPrefix(lines []string, reason string) int {
	n := 0
	for _, l := range lines {
		if strings.HasPrefix(l, reasonPrefix(reason)) {
			n++
		}
	}
	return n
}

// createConfigMapsFast creates n ConfigMaps named by format and an index,
// with a client that is not rate-limited.
func createConfigMapsFast(ns, format string, n int) {
	GinkgoHelper()
	cfg := rest.CopyConfig(restConfig)
	cfg.QPS = -1
	c, err := client.New(cfg, client.Options{})
	Expect(err).NotTo(HaveOccurred())
	var g errgroup.Group
	g.SetLimit(16)
	for i := range n {
		g.Go(func() error {
			return c.Create(suiteCtx, &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf(format, i)},
				Data:       map[string]string{"k": fmt.Sprint(i)},
			})
		})
	}
	Expect(g.Wait()).To(Succeed())
}

// copiedAfterAChange rolls a Deployment for a change, stops ripple, changes
// its ConfigMap again, and then creates a copy of the Deployment, as a
// manifest restored from it, with or without its record: the copy's pods
// start with the second change. It returns the copy, the Deployment as
// rolled, and the copy as created.
func copiedAfterAChange(ns string, withRecord bool) (copied *appsv1.Deployment, rolled, restored state) {
	GinkgoHelper()
	cm := createConfigMap(ns, "app-config", map[string]string{"k": "1"})
	dep := createDeployment(ns, "dep", auto, volumeConfigMap("app-config"))
	first := startRipple()
	rolled = rolledOnceBy(dep, cm, "2")
	first.stop()
	setData(cm, "k", "3")
	waitServerPast(ns, max(recordedAt(rolled)+1, lastWrite(cm)))

	copied = createCopy(dep, "restored")
	if !withRecord {
		removeRecord(copied)
	}
	restored = withRollouts(copied, stateOf(copied))
	Expect(restored.Digest).To(Equal(rolled.Digest), "the stamp is copied too")
	return copied, rolled, restored
}

var _ = Describe("A workload restored from a manifest", func() {
	It("does not roll a workload created without a record but with a stamp copied from an older one", func() {
		copied, _, restored := copiedAfterAChange(newNamespace(nil), false)
		startRipple()

		Eventually(func() string { return stateOf(copied).Recorded }, 20*time.Second).ShouldNot(BeEmpty())
		expectNoRollout(copied, restored)
	})
})
