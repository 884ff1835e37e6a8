package integration

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ripple-controller/ripple/internal/annotations"
)

var _ = Describe("Rolling workloads exactly", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace(nil) })

	It("rolls every workload tracking a changed ConfigMap exactly once and touches no other", func() {
		cm := createConfigMap(ns, "app-config", map[string]string{"k": "1"})
		createConfigMap(ns, "other", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("app-config"))
		sts := createStatefulSet(ns, "sts", auto, envFromConfigMap("app-config"))
		ds := createDaemonSet(ns, "ds", auto, envConfigMapKey("app-config"))
		otherUser := createDeployment(ns, "uses-other", auto, volumeConfigMap("other"))
		notAnnotated := createDeployment(ns, "not-annotated", nil, volumeConfigMap("app-config"))
		startRipple()
		before := map[client.Object]state{}
		for _, w := range []client.Object{dep, sts, ds, otherUser} {
			before[w] = recorded(w)
		}
		plain := stateOf(notAnnotated)

		setData(cm, "k", "2")

		for _, w := range []client.Object{dep, sts, ds} {
			expectRolledOnce(w, before[w])
		}
		expectNoWrite(otherUser, before[otherUser])
		expectNoWrite(notAnnotated, plain)
		Expect(plain.Recorded).To(BeEmpty(), "a workload that did not opt in is never written")
	})

	It("changes nothing in the pod template but the digest annotation", func() {
		cm := createConfigMap(ns, "app-config", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("app-config"), envFromConfigMap("app-config"))
		startRipple()
		before := recorded(dep)

		setData(cm, "k", "2")

		after := expectRolledOnce(dep, before)
		Expect(after.Digest).To(MatchRegexp(`^[0-9a-f]{8}:[0-9]+:[0-9a-f]{64}$`), "the stamp names the key, the time and the digest")
		delete(after.Template.Annotations, annotations.ConfigDigest)
		if len(after.Template.Annotations) == 0 {
			after.Template.Annotations = nil
		}
		Expect(after.Template).To(Equal(before.Template))
	})

	It("rolls on a Secret change through every kind of reference", func() {
		sec := createSecret(ns, "creds", map[string]string{"k": "1"})
		createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		byVolume := createDeployment(ns, "by-volume", auto, volumeSecret("creds"))
		byProjection := createDeployment(ns, "by-projection", auto, projected("cfg", "creds"))
		byEnv := createDeployment(ns, "by-env", auto, envSecretKey("creds"))
		byEnvFrom := createDeployment(ns, "by-envfrom", auto, envFromSecret("creds"))
		startRipple()
		workloads := []client.Object{byVolume, byProjection, byEnv, byEnvFrom}
		before := map[client.Object]state{}
		for _, w := range workloads {
			before[w] = recorded(w)
		}

		setSecretData(sec, "k", "2")

		for _, w := range workloads {
			expectRolledOnce(w, before[w])
		}
	})

	It("rolls on a change of a ConfigMap an init container takes its env from", func() {
		cm := createConfigMap(ns, "init-config", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", auto, initContainerEnvFrom("init-config"))
		startRipple()
		before := recorded(dep)

		setData(cm, "k", "2")

		expectRolledOnce(dep, before)
	})

	It("writes nothing when only labels or annotations change, or the data stays the same", func() {
		cm := createConfigMap(ns, "app-config", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("app-config"))
		startRipple()
		before := recorded(dep)

		update(cm, func(c *corev1.ConfigMap) { c.Labels = map[string]string{"team": "a"} })
		update(cm, func(c *corev1.ConfigMap) { c.Annotations = map[string]string{"note": "x"} })
		update(cm, func(c *corev1.ConfigMap) { c.Data = map[string]string{"k": "1"} })

		expectNoWrite(dep, before)
	})

	It("records a workload newly annotated without rolling it, then rolls it on the next change", func() {
		cm := createConfigMap(ns, "app-config", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", nil, volumeConfigMap("app-config"))
		startRipple()
		plain := stateOf(dep)
		expectNoWrite(dep, plain)

		update(dep, func(d *appsv1.Deployment) { d.Annotations = auto })
		rec := recorded(dep)
		Expect(rec.Template).To(Equal(plain.Template), "being annotated does not roll")

		setData(cm, "k", "2")
		expectRolledOnce(dep, rec)
	})

	It("writes nothing after a restart when nothing changed", func() {
		createConfigMap(ns, "app-config", map[string]string{"k": "1"})
		createSecret(ns, "creds", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("app-config"), envFromSecret("creds"))
		first := startRipple()
		before := recorded(dep)
		first.stop()

		startRipple()

		expectNoWrite(dep, before)
	})

	It("rolls exactly once for a change made while ripple was down", func() {
		cm := createConfigMap(ns, "app-config", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("app-config"))
		untouched := createDeployment(ns, "untouched", auto)
		first := startRipple()
		before := recorded(dep)
		beforeUntouched := recorded(untouched)
		first.stop()

		setData(cm, "k", "2")
		setData(cm, "k", "3")
		startRipple()

		expectRolledOnce(dep, before)
		expectNoWrite(untouched, beforeUntouched)
	})

	It("coalesces a ConfigMap and a Secret changed together into one rollout", func() {
		cm := createConfigMap(ns, "app-config", map[string]string{"k": "1"})
		sec := createSecret(ns, "creds", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("app-config"), envFromSecret("creds"))
		startRipple("--debounce=1s")
		before := recorded(dep)

		setData(cm, "k", "2")
		setSecretData(sec, "k", "2")

		expectRolledOnce(dep, before)
	})

	It("makes one rollout of changes that reach a workload within the debounce window", func() {
		cm := createConfigMap(ns, "app-config", map[string]string{"k": "0"})
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("app-config"))
		startRipple("--debounce=3s")
		before := recorded(dep)

		// The window opens at the first change. The changes are spread over
		// its first half, so a ripple that did not wait would roll between
		// them, not once after them.
		for i := 1; i <= 5; i++ {
			setData(cm, "k", string(rune('0'+i)))
			Consistently(before.Rollouts, 250*time.Millisecond).Should(BeZero(), "no rollout within the window, after change %d", i)
		}

		expectRolledOnce(dep, before)
	})

	It("rolls at once with --debounce=0", func() {
		cm := createConfigMap(ns, "app-config", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("app-config"))
		startRipple("--debounce=0")
		before := recorded(dep)

		setData(cm, "k", "2")

		Eventually(before.Rollouts, 900*time.Millisecond, 20*time.Millisecond).Should(Equal(1))
	})
})

var _ = Describe("Opting in while ripple runs", func() {
	It("records a workload that opts in through its pod template's annotations, and rolls it for the next change", func() {
		ns := newNamespace(nil)
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", nil, volumeConfigMap("cfg"))
		witness := createDeployment(ns, "witness", auto, volumeConfigMap("cfg"))
		startRipple()
		// Once ripple records the witness, it has listed dep without the
		// opt-in: the opt-in is an update it must not miss.
		recorded(witness)

		withTemplateAnnotations(dep, auto)
		before := recorded(dep)
		setData(cm, "k", "2")

		expectRolledOnce(dep, before)
	})
})

var _ = Describe("Creating and deleting tracked objects", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace(nil) })

	It("does not roll when a tracked ConfigMap is deleted", func() {
		cm := createConfigMap(ns, "app-config", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("app-config"))
		startRipple()
		before := recorded(dep)

		Expect(k8s.Delete(suiteCtx, cm)).To(Succeed())

		expectNoRollout(dep, before)
	})

	It("rolls the users of a deleted ConfigMap with --reload-on-delete", func() {
		cm := createConfigMap(ns, "app-config", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("app-config"))
		startRipple("--reload-on-delete")
		before := recorded(dep)

		Expect(k8s.Delete(suiteCtx, cm)).To(Succeed())

		expectRolledOnce(dep, before)
	})

	It("rolls a search workload once when the ConfigMap it uses and that matches is deleted, with --reload-on-delete", func() {
		cm := createConfigMap(ns, "matched", map[string]string{"k": "1"}, map[string]string{annotations.Match: "true"})
		dep := createDeployment(ns, "dep", map[string]string{annotations.Search: "true"}, volumeConfigMap("matched"))
		startRipple("--reload-on-delete")
		before := recorded(dep)

		Expect(k8s.Delete(suiteCtx, cm)).To(Succeed())

		expectRolledOnce(dep, before)
	})

	It("does not roll when a referenced ConfigMap is created", func() {
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("late"))
		startRipple()
		before := recorded(dep)

		createConfigMap(ns, "late", map[string]string{"k": "1"})

		expectNoRollout(dep, before)
	})

	It("rolls when a referenced ConfigMap is created with --reload-on-create", func() {
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("late"))
		startRipple("--reload-on-create")
		before := recorded(dep)

		createConfigMap(ns, "late", map[string]string{"k": "1"})

		expectRolledOnce(dep, before)
	})

	It("rolls when an object matching a reload list is created with --reload-on-create", func() {
		dep := createDeployment(ns, "dep", map[string]string{annotations.SecretReload: "late-.*"})
		startRipple("--reload-on-create")
		before := recorded(dep)

		createSecret(ns, "late-creds", map[string]string{"k": "1"})

		expectRolledOnce(dep, before)
	})
})
