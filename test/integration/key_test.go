package integration

import (
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ripple-controller/ripple/internal/annotations"
	"github.com/ripple-controller/ripple/internal/digest"
	"github.com/ripple-controller/ripple/internal/refs"
)

var _ = Describe("The digest key", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace(nil) })

	keySecret := func(name, key string) string {
		GinkgoHelper()
		Expect(k8s.Create(suiteCtx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Data:       map[string][]byte{"key": []byte(key)},
		})).To(Succeed())
		return ns + "/" + name
	}

	It("writes a digest that only the key's holder can compute from the config", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"password": "hunter2"})
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("cfg"))
		startRipple("--hmac-key-secret=" + keySecret("ripple-key", strings.Repeat("k", 32)))
		before := recorded(dep)

		setData(cm, "password", "hunter3")
		after := expectRolledOnce(dep, before)

		guess := digest.ConfigMap(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cfg"}, Data: map[string]string{"password": "hunter3"}})
		entries := []digest.Entry{{Ref: refs.Ref{Kind: refs.ConfigMap, Name: "cfg"}, Sum: guess}}
		Expect(after.Digest).NotTo(HaveSuffix(digest.NewKeyed(nil).Workload(entries)), "an unkeyed guess does not match")
		Expect(after.Digest).To(HaveSuffix(":" + digest.NewKeyed([]byte(strings.Repeat("k", 32))).Workload(entries)))
		Expect(after.Recorded).NotTo(ContainSubstring(guess.String()))
	})

	It("re-records instead of rolling when the key changes, and rolls on the next change", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("cfg"))
		first := startRipple("--hmac-key-secret=" + keySecret("key-a", strings.Repeat("a", 32)))
		before := recorded(dep)
		first.stop()

		startRipple("--hmac-key-secret=" + keySecret("key-b", strings.Repeat("b", 32)))
		Eventually(func() string { return stateOf(dep).Recorded }, "20s").ShouldNot(Equal(before.Recorded))
		expectNoRollout(dep, before)

		rerecorded := withRollouts(dep, stateOf(dep))
		setData(cm, "k", "2")
		expectRolledOnce(dep, rerecorded)
	})

	It("rolls for a change made under a replaced key at once, also when its first try is refused", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("cfg"))
		first := startRipple("--hmac-key-secret=" + keySecret("key-a", strings.Repeat("a", 32)))
		before := withRollouts(dep, recorded(dep))
		first.stop()
		updateInALaterSecond(cm)

		allow := refuse(ns, admissionregistrationv1.Update, "apps", "deployments", func() error {
			probe := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: dep.Name}}
			return k8s.Patch(suiteCtx, probe, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"probe":"x"}}}`)), client.DryRunAll)
		})
		startRipple("--hmac-key-secret=" + keySecret("key-b", strings.Repeat("b", 32)))
		Eventually(eventsFor(dep), 20*time.Second).Should(ContainElement(HavePrefix(reasonPrefix("ReloadFailed"))))
		allow()

		// The record under key-a is minutes from abandoned, but it was
		// there before this ripple: its first look, retried, takes it over.
		expectRolledOnce(dep, before)
	})

	It("does not roll again when a record under another key, older than its stamp, is written back while the pods run the config now", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("cfg"))
		r := startRipple()
		first := recorded(dep)
		waitServerPast(ns, recordedAt(first)+2)
		rolled := rolledOnceBy(dep, cm, "2")
		r.stop()

		id, _, _ := strings.Cut(first.Recorded, ";")
		foreign := strings.Replace(first.Recorded, id, "key=0badc0de", 1)
		for range 2 {
			update(dep, func(d *appsv1.Deployment) { d.Annotations[annotations.Recorded] = foreign })
			r = startRipple()
			Eventually(func() string { return stateOf(dep).Recorded }, 20*time.Second).Should(HavePrefix(id+";"), "recorded again under its own key")
			r.stop()
		}
		expectNoRollout(dep, rolled)
	})

	It("rolls for a change made under a replaced key once its minimum interval ends, not after the other key's grace", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", map[string]string{annotations.Auto: "true", annotations.MinRolloutInterval: "8s"}, volumeConfigMap("cfg"))
		first := startRipple("--hmac-key-secret=" + keySecret("key-a", strings.Repeat("a", 32)))
		rolled := rolledOnceBy(dep, cm, "2")
		first.stop()
		updateInALaterSecond(cm)

		startRipple("--hmac-key-secret=" + keySecret("key-b", strings.Repeat("b", 32)))
		Eventually(eventsFor(dep), 20*time.Second).Should(ContainElement(ContainSubstring("less than 8s ago")))
		// Held by the interval from key-a's rollout, the first look takes
		// the record over when the interval ends.
		expectRolledOnce(dep, rolled)
	})

	It("refuses to start with a key Secret that is too short, naming the flag", func() {
		err := startRippleErr("--hmac-key-secret=" + keySecret("short", "abc"))
		Expect(err).To(MatchError(ContainSubstring("--hmac-key-secret")))
	})

	It("creates the key Secret it is told to use when it does not exist yet", func() {
		startRipple("--hmac-key-secret=" + ns + "/made-by-ripple")
		s := &corev1.Secret{}
		Expect(k8s.Get(suiteCtx, client.ObjectKey{Namespace: ns, Name: "made-by-ripple"}, s)).To(Succeed())
		Expect(s.Data["key"]).To(HaveLen(32))
	})
})

var _ = Describe("Another writer", func() {
	It("keeps the change another writer makes to the pod template at the moment ripple rolls", func() {
		ns := newNamespace(nil)
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "0"})
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("cfg"))
		startRipple()
		prev := recorded(dep)

		for i := 1; i <= 10; i++ {
			value := string(rune('0' + i))
			done := make(chan struct{})
			go func() {
				defer GinkgoRecover()
				defer close(done)
				update(dep, func(d *appsv1.Deployment) {
					d.Spec.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "REVISION", Value: value}}
				})
			}()
			setData(cm, "k", value)
			<-done
			// Both writes are in once ripple has rolled for this change.
			Eventually(func(g Gomega) {
				s := stateOf(dep)
				g.Expect(s.Digest).NotTo(Equal(prev.Digest), "ripple rolls for change %d", i)
				g.Expect(s.Template.Spec.Containers[0].Env).To(ConsistOf(corev1.EnvVar{Name: "REVISION", Value: value}), "the other writer's change is kept")
			}, "10s").Should(Succeed())
			prev = stateOf(dep)
		}
	})
})
