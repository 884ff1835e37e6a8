package integration

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/ripple-controller/ripple/internal/annotations"
)

// readsKeys makes the first container read keys of the ConfigMap through
// env valueFrom and a volume with items, and of the Secret through
// secretKeyRef.
func readsKeys(configMap, envKey, itemKey, secret, secretKey string) podMod {
	return func(s *corev1.PodSpec) {
		c := &s.Containers[0]
		c.Env = append(c.Env,
			corev1.EnvVar{Name: "FROM_ENV", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: configMap}, Key: envKey}}},
			corev1.EnvVar{Name: "FROM_SECRET", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: secret}, Key: secretKey}}})
		s.Volumes = append(s.Volumes, corev1.Volume{Name: "items", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: configMap}, Items: []corev1.KeyToPath{{Key: itemKey, Path: itemKey}}}}})
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "items", MountPath: "/etc/items"})
	}
}

var precise = map[string]string{annotations.Auto: "true", annotations.KeyPrecision: "true"}

var _ = Describe("Key-level precision", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace(nil) })

	It("rolls a precise workload only when a key it reads changes, and names the keys in its Event and metric", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"level": "1", "rules": "1", "unused": "1"})
		sec := createSecret(ns, "creds", map[string]string{"token": "1", "other": "1"})
		dep := createDeployment(ns, "dep", precise, readsKeys("cfg", "level", "rules", "creds", "token"))
		addr := freeAddress()
		startRipple("--metrics-bind-address=" + addr)
		before := recorded(dep)

		setData(cm, "unused", "2")
		setSecretData(sec, "other", "2")
		expectNoRollout(dep, before)

		setData(cm, "rules", "2")
		rolled := expectRolledOnce(dep, before)
		Eventually(eventsFor(dep), 5*time.Second).Should(ContainElement("Reloaded: Rolled because ConfigMap/cfg (keys rules) changed"))
		Eventually(metric(addr, `ripple_key_changes_total{key="rules",kind="ConfigMap"}`), 5*time.Second).Should(Equal(1.0))

		setSecretData(sec, "token", "2")
		expectRolledOnce(dep, rolled)
		Eventually(eventsFor(dep), 5*time.Second).Should(ContainElement("Reloaded: Rolled because Secret/creds (keys token) changed"))
	})

	It("rolls on a key that appears or disappears, since an optional reference reads it", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"rules": "1"})
		createSecret(ns, "creds", map[string]string{"token": "1"})
		dep := createDeployment(ns, "dep", precise, readsKeys("cfg", "level", "rules", "creds", "token"))
		startRipple()
		before := recorded(dep)

		setData(cm, "level", "1")

		expectRolledOnce(dep, before)
		Expect(eventsFor(dep)()).To(ContainElement("Reloaded: Rolled because ConfigMap/cfg (keys level) changed"))
	})

	It("rolls on any key without the annotation or the flag, as Reloader does", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"level": "1", "rules": "1", "unused": "1"})
		createSecret(ns, "creds", map[string]string{"token": "1"})
		dep := createDeployment(ns, "dep", auto, readsKeys("cfg", "level", "rules", "creds", "token"))
		startRipple()
		before := recorded(dep)

		setData(cm, "unused", "2")

		expectRolledOnce(dep, before)
		Expect(eventsFor(dep)()).To(ContainElement("Reloaded: Rolled because ConfigMap/cfg changed"))
	})

	It("makes every workload precise under --key-precision, counting every key of what envFrom or a whole volume reads, and a workload's false wins", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"level": "1", "rules": "1", "unused": "1"})
		createSecret(ns, "creds", map[string]string{"token": "1"})
		keyed := createDeployment(ns, "keyed", auto, readsKeys("cfg", "level", "rules", "creds", "token"))
		whole := createDeployment(ns, "whole", auto, envFromConfigMap("cfg"))
		volume := createStatefulSet(ns, "volume", auto, volumeConfigMap("cfg"))
		optedOut := createDeployment(ns, "opted-out", map[string]string{annotations.Auto: "true", annotations.KeyPrecision: "false"},
			readsKeys("cfg", "level", "rules", "creds", "token"))
		startRipple("--key-precision")
		keyedBefore, wholeBefore, volumeBefore, optedOutBefore := recorded(keyed), recorded(whole), recorded(volume), recorded(optedOut)

		setData(cm, "unused", "2")

		expectRolledOnce(whole, wholeBefore)
		expectRolledOnce(volume, volumeBefore)
		expectRolledOnce(optedOut, optedOutBefore)
		expectNoRollout(keyed, keyedBefore)
	})

	It("rolls nothing when precision is turned on or off, and compares the next change under the new choice", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"level": "1", "rules": "1", "unused": "1"})
		createSecret(ns, "creds", map[string]string{"token": "1"})
		dep := createDeployment(ns, "dep", auto, readsKeys("cfg", "level", "rules", "creds", "token"))
		startRipple()
		before := recorded(dep)

		update(dep, func(d *appsv1.Deployment) { d.Annotations[annotations.KeyPrecision] = "true" })
		Eventually(func() string { return stateOf(dep).Recorded }, 10*time.Second).Should(ContainSubstring("~"), "recorded again under precision")
		setData(cm, "unused", "2")
		expectNoRollout(dep, before)

		update(dep, func(d *appsv1.Deployment) { d.Annotations[annotations.KeyPrecision] = "false" })
		Eventually(func() string { return stateOf(dep).Recorded }, 10*time.Second).ShouldNot(ContainSubstring("~"), "recorded again without it")
		expectNoRollout(dep, before)
		setData(cm, "unused", "3")
		expectRolledOnce(dep, before)
	})

	It("rolls nothing for a record from before its last rollout, written back once precision is off: the stamp says the pods run the config", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"level": "1", "rules": "1", "unused": "1"})
		createSecret(ns, "creds", map[string]string{"token": "1"})
		dep := createDeployment(ns, "dep", precise, readsKeys("cfg", "level", "rules", "creds", "token"))
		ripple := startRipple()
		before := recorded(dep)
		waitServerPast(ns, recordedAt(before)+2)
		setData(cm, "level", "2")
		rolled := expectRolledOnce(dep, before)
		update(dep, func(d *appsv1.Deployment) { d.Annotations[annotations.KeyPrecision] = "false" })
		Eventually(func() string { return stateOf(dep).Recorded }, 10*time.Second).ShouldNot(ContainSubstring("~"), "recorded again without it")

		// A GitOps tool writes back the record it held: while ripple runs,
		// its own valid record is not a change, so ripple looks at its start.
		ripple.stop()
		update(dep, func(d *appsv1.Deployment) { d.Annotations[annotations.Recorded] = before.Recorded })
		startRipple()

		Eventually(func() string { return stateOf(dep).Recorded }, 10*time.Second).ShouldNot(ContainSubstring("~"), "recorded again")
		expectNoRollout(dep, rolled)
	})

	It("rolls a precise workload on any key of an object with too many keys to keep a digest of each", func() {
		data := map[string]string{"level": "1", "rules": "1"}
		for i := range 1100 {
			data[fmt.Sprintf("k%04d", i)] = ""
		}
		cm := createConfigMap(ns, "big", data)
		createSecret(ns, "creds", map[string]string{"token": "1"})
		dep := createDeployment(ns, "dep", precise, readsKeys("big", "level", "rules", "creds", "token"))
		startRipple()
		before := recorded(dep)

		setData(cm, "rules", "2")
		rolled := expectRolledOnce(dep, before)
		Eventually(eventsFor(dep), 5*time.Second).Should(ContainElement("Reloaded: Rolled because ConfigMap/big changed"))

		setData(cm, "k0001", "2")
		expectRolledOnce(dep, rolled)
	})

	It("reports a mistaken value with an InvalidAnnotation Event and rolls on any key", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"level": "1", "unused": "1"})
		createSecret(ns, "creds", map[string]string{"token": "1"})
		dep := createDeployment(ns, "dep", map[string]string{annotations.Auto: "true", annotations.KeyPrecision: "yes"},
			readsKeys("cfg", "level", "level", "creds", "token"))
		startRipple()
		before := recorded(dep)
		Eventually(eventsFor(dep), 10*time.Second).Should(ContainElement(ContainSubstring(`annotation ripple.dev/key-precision: "yes" is not one of false, true; "false" applies`)))

		setData(cm, "unused", "2")

		expectRolledOnce(dep, before)
	})
})

var _ = Describe("A user's own edit of a precise workload", func() {
	It("adds no rollout of its own when a user's template edit changes the keys a precise workload reads", func() {
		ns := newNamespace(nil)
		createConfigMap(ns, "cfg", map[string]string{"level": "1", "rules": "1", "unused": "1"})
		createSecret(ns, "creds", map[string]string{"token": "1", "other": "1"})
		dep := createDeployment(ns, "dep", precise, readsKeys("cfg", "level", "rules", "creds", "token"))
		startRipple()
		before := recorded(dep)

		update(dep, func(d *appsv1.Deployment) {
			for i, e := range d.Spec.Template.Spec.Containers[0].Env {
				if e.Name == "FROM_ENV" {
					d.Spec.Template.Spec.Containers[0].Env[i].ValueFrom.ConfigMapKeyRef.Key = "unused"
				}
			}
		})

		Eventually(before.Rollouts, 10*time.Second).Should(Equal(1), "the user's own edit")
		Consistently(before.Rollouts, quiet).Should(Equal(1), "ripple adds no rollout: no config changed")
	})
})
