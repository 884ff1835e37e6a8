package integration

import (
	"os"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/ripple-controller/ripple/internal/digest"
	"github.com/ripple-controller/ripple/internal/options"
)

var _ = Describe("The digest key ripple keeps itself", func() {
	var ns string
	BeforeEach(func() {
		ns = newNamespace(nil)
		// ripple runs "in" this namespace, as the chart's downward API says.
		Expect(os.Setenv(podNamespace, ns)).To(Succeed())
		DeferCleanup(func() { Expect(os.Setenv(podNamespace, metav1.NamespaceDefault)).To(Succeed()) })
	})

	keySecret := func() *corev1.Secret {
		GinkgoHelper()
		s := &corev1.Secret{}
		Expect(k8s.Get(suiteCtx, client.ObjectKey{Namespace: ns, Name: options.DefaultKeySecret}, s)).To(Succeed())
		return s
	}
	// keyIDOf reads the key ID a record was made with: "key=<id>;at=...".
	keyIDOf := func(s state) string {
		GinkgoHelper()
		first, _, _ := strings.Cut(s.Recorded, ";")
		id, ok := strings.CutPrefix(first, "key=")
		Expect(ok).To(BeTrue(), "a record starts with its key ID: %q", s.Recorded)
		return id
	}

	It("creates a random key in its namespace when none is named, and keeps it across restarts: a change made while it was down still rolls", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("cfg"))
		first := startRipple()
		before := recorded(dep)
		key := keySecret().Data["key"]
		Expect(key).To(HaveLen(32))
		Expect(keyIDOf(before)).To(Equal(digest.NewKeyed(key).KeyID()), "the workload is recorded under the Secret's key")
		Expect(keyIDOf(before)).NotTo(Equal(digest.NewKeyed(nil).KeyID()), "ripple is not unkeyed")
		first.stop()

		setData(cm, "k", "2")
		second := startRipple()
		after := expectRolledOnce(dep, before)
		Expect(keyIDOf(after)).To(Equal(keyIDOf(before)))
		second.stop()

		startRipple()
		expectNoWrite(dep, after)
		Expect(keySecret().Data["key"]).To(Equal(key), "no restart replaced the key")
	})

	It("uses the Secret of the default name that is already there, and leaves it as it is", func() {
		existing := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: options.DefaultKeySecret},
			Data:       map[string][]byte{"key": []byte(strings.Repeat("e", 24)), "previous": []byte(strings.Repeat("p", 32))},
		}
		Expect(k8s.Create(suiteCtx, existing)).To(Succeed())
		createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("cfg"))
		startRipple()
		Expect(keyIDOf(recorded(dep))).To(Equal(digest.NewKeyed([]byte(strings.Repeat("e", 24))).KeyID()), "new records use the current key, not a previous one")
		Expect(keySecret().ResourceVersion).To(Equal(existing.ResourceVersion))
	})

	It("refuses to start with a malformed key Secret, naming the flag and the data key, never the key", func() {
		bad := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: options.DefaultKeySecret},
			Data:       map[string][]byte{"key": []byte("too-short")},
		}
		Expect(k8s.Create(suiteCtx, bad)).To(Succeed())
		for _, data := range []map[string][]byte{
			{"key": []byte("too-short")},
			{"other": []byte(strings.Repeat("o", 32))},
			{"key": []byte(strings.Repeat("k", 32)), "previous-1": []byte("too-short")},
		} {
			update(bad, func(s *corev1.Secret) { s.Data = data })
			err := startRippleErr()
			Expect(err).To(MatchError(SatisfyAll(
				ContainSubstring("--hmac-key-secret"),
				ContainSubstring(ns+"/"+options.DefaultKeySecret),
				ContainSubstring("at least 16 bytes"),
				Not(ContainSubstring("too-short")),
			)))
		}
		Expect(keySecret().Data).To(HaveKey("previous-1"), "ripple never overwrites a key Secret")
	})

	// namedKey writes the Secret rot in the namespace with the given data
	// and returns the flag that names it.
	namedKey := func(data map[string][]byte) string {
		GinkgoHelper()
		sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "rot"}}
		_, err := controllerutil.CreateOrUpdate(suiteCtx, k8s, sec, func() error { sec.Data = data; return nil })
		Expect(err).NotTo(HaveOccurred())
		return "--hmac-key-secret=" + ns + "/rot"
	}
	keyA, keyB := []byte(strings.Repeat("a", 32)), []byte(strings.Repeat("b", 32))

	It("rolls once for a change made while the key was rotated, the old key kept as previous", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("cfg"))
		first := startRipple(namedKey(map[string][]byte{"key": keyA}))
		before := recorded(dep)
		first.stop()

		setData(cm, "k", "2")
		startRipple(namedKey(map[string][]byte{"key": keyB, "previous": keyA}))

		after := expectRolledOnce(dep, before)
		Expect(keyIDOf(after)).To(Equal(digest.NewKeyed(keyB).KeyID()), "recorded again under the new key")
	})

	DescribeTable("rolls once when a Secret deleted before the key changed is created again after it, whatever its data,",
		func(next map[string][]byte, entry string) {
			sec := createSecret(ns, "sec", map[string]string{"k": "1"})
			createConfigMap(ns, "other", map[string]string{"k": "1"})
			dep := createDeployment(ns, "dep", auto, volumeSecret("sec"), volumeConfigMap("other"))
			first := startRipple(namedKey(map[string][]byte{"key": keyA}))
			before := recorded(dep)
			Expect(k8s.Delete(suiteCtx, sec)).To(Succeed())
			expectNoRollout(dep, before)
			first.stop()

			startRipple(namedKey(next))
			Eventually(func() string { return keyIDOf(stateOf(dep)) }, 20*time.Second).Should(Equal(digest.NewKeyed(keyB).KeyID()))
			Expect(stateOf(dep).Recorded).To(ContainSubstring(entry), "the pods still hold its data")
			Expect(explainIn(ns, "deployment", "dep")).To(MatchRegexp(`(?m)^Secret/sec +yes .*; it does not exist: its record keeps it since its deletion under a key ripple no longer uses, so its recreation rolls it whatever its data$`))
			createSecret(ns, "sec", map[string]string{"k": "2"})

			expectRolledOnce(dep, before)
		},
		Entry("rotated, the old key kept as previous", map[string][]byte{"key": keyB, "previous": keyA}, "Secret/sec="),
		Entry("replaced, the old key lost: an entry that equals no digest", map[string][]byte{"key": keyB}, "Secret/sec=unknown"),
	)

	It("rolls each change once while an old replica with the old key and a new one with the new key run side by side", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("cfg"))
		startRipple(namedKey(map[string][]byte{"key": keyA}))
		before := recorded(dep)

		// The old replica read key A at its start; the new one reads B and A.
		startRipple(namedKey(map[string][]byte{"key": keyB, "previous": keyA}))
		setData(cm, "k", "2")
		Eventually(before.Rollouts, 20*time.Second).Should(Equal(1))
		setData(cm, "k", "3")
		Eventually(before.Rollouts, 20*time.Second).Should(Equal(2))

		Consistently(before.Rollouts, quiet).Should(Equal(2), "each change rolls once, no ping-pong")
		Expect(keyIDOf(stateOf(dep))).To(Equal(digest.NewKeyed(keyB).KeyID()))
	})

	It("rolls once when the key is replaced without keeping the old one and the config changed meanwhile", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("cfg"))
		first := startRipple(namedKey(map[string][]byte{"key": keyA}))
		before := recorded(dep)
		first.stop()

		updateInALaterSecond(cm)
		startRipple(namedKey(map[string][]byte{"key": keyB}))

		after := expectRolledOnce(dep, before)
		Expect(keyIDOf(after)).To(Equal(digest.NewKeyed(keyB).KeyID()))
	})

	// The record under the lost key names its objects: what was created or
	// deleted since is read from that, as the data writes are from the
	// objects' own times.
	DescribeTable("rolls once under a key replaced without keeping the old one, for a change made while ripple was down:",
		func(flag string, change func(sec *corev1.Secret)) {
			sec := createSecret(ns, "sec", map[string]string{"k": "1"})
			createConfigMap(ns, "other", map[string]string{"k": "1"})
			dep := createDeployment(ns, "dep", auto, volumeSecret("sec"), volumeSecret("new"), volumeConfigMap("other"))
			first := startRipple(flag, namedKey(map[string][]byte{"key": keyA}))
			before := recorded(dep)
			first.stop()
			waitServerPast(ns, recordedAt(before)+1)

			change(sec)
			startRipple(flag, namedKey(map[string][]byte{"key": keyB}))

			expectRolledOnce(dep, before)
		},
		Entry("a Secret deleted and created again with other data", "--debounce=1s", func(sec *corev1.Secret) {
			Expect(k8s.Delete(suiteCtx, sec)).To(Succeed())
			createSecret(ns, "sec", map[string]string{"k": "2"})
		}),
		Entry("a Secret deleted, under --reload-on-delete", "--reload-on-delete", func(sec *corev1.Secret) {
			Expect(k8s.Delete(suiteCtx, sec)).To(Succeed())
		}),
		Entry("a Secret the workload names created, under --reload-on-create", "--reload-on-create", func(*corev1.Secret) {
			createSecret(ns, "new", map[string]string{"k": "1"})
		}),
	)
})
