package integration

import (
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ripple-controller/ripple/internal/annotations"
	"github.com/ripple-controller/ripple/internal/workload"
)

// envOf returns the variables named name on each container of the
// workload's pod template, by container.
func envOf(obj client.Object, name string) map[string][]string {
	GinkgoHelper()
	Expect(k8s.Get(suiteCtx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
	tmpl := templateOf(obj)
	out := map[string][]string{}
	for _, c := range tmpl.Spec.Containers {
		for _, e := range c.Env {
			if e.Name == name {
				out[c.Name] = append(out[c.Name], e.Value)
			}
		}
	}
	return out
}

// stakaterVars returns the names of the env-vars strategy's variables on
// every container of the workload's pod template.
func stakaterVars(obj client.Object) []string {
	GinkgoHelper()
	Expect(k8s.Get(suiteCtx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
	tmpl := templateOf(obj)
	var out []string
	for _, c := range tmpl.Spec.Containers {
		for _, e := range c.Env {
			if strings.HasPrefix(e.Name, workload.EnvVarPrefix) {
				out = append(out, c.Name+"/"+e.Name)
			}
		}
	}
	return out
}

// secondContainerUses adds a second container, "sidecar", that reads the
// ConfigMap through envFrom.
func secondContainerUses(configMap string) podMod {
	return func(s *corev1.PodSpec) {
		s.Containers = append(s.Containers, corev1.Container{Name: "sidecar", Image: "app:1",
			EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: configMap}}}}})
	}
}

var envVarsStrategy = "--reload-strategy=env-vars"

var _ = Describe("The env-vars reload strategy", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace(nil) })

	DescribeTable("sets STAKATER_<NAME>_CONFIGMAP when a ConfigMap named by the reload annotation changes (Reloader's case)",
		func(create creator) {
			cm := createConfigMap(ns, "app-config", map[string]string{"k": "1"})
			obj := create(ns, "w", map[string]string{annotations.ConfigMapReload: "app-config"}, envFromConfigMap("app-config"))
			startRipple(envVarsStrategy)
			before := recorded(obj)
			Expect(envOf(obj, "STAKATER_APP_CONFIG_CONFIGMAP")).To(BeEmpty(), "first sight writes no variable")

			setData(cm, "k", "2")

			expectRolledOnce(obj, before)
			vars := envOf(obj, "STAKATER_APP_CONFIG_CONFIGMAP")
			Expect(vars).To(HaveKeyWithValue("app", HaveLen(1)))
			Expect(templateOf(obj).Annotations).NotTo(HaveKey(annotations.ConfigDigest), "no annotation churn under env-vars")
		},
		Entry("on a Deployment", deployment), Entry("on a StatefulSet", statefulSet), Entry("on a DaemonSet", daemonSet),
	)

	DescribeTable("sets STAKATER_<NAME>_SECRET when a Secret named by the reload annotation changes, never holding its data (Reloader's case)",
		func(create creator) {
			sec := createSecret(ns, "db.creds", map[string]string{"password": "initial"})
			obj := create(ns, "w", map[string]string{annotations.SecretReload: "db.creds"}, envFromSecret("db.creds"))
			startRipple(envVarsStrategy)
			before := recorded(obj)

			setSecretData(sec, "password", "hunter2")

			expectRolledOnce(obj, before)
			vars := envOf(obj, "STAKATER_DB_CREDS_SECRET")
			Expect(vars).To(HaveKeyWithValue("app", ConsistOf(MatchRegexp(`^[^:]+:[0-9]+:[^:]+$`))), "a keyed stamp: key, time, digest")
			Expect(vars["app"][0]).NotTo(ContainSubstring("hunter2"))
		},
		Entry("on a Deployment", deployment), Entry("on a StatefulSet", statefulSet), Entry("on a DaemonSet", daemonSet),
	)

	DescribeTable("sets no variable when only an object's labels change (Reloader's case)",
		func(kind string) {
			cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
			sec := createSecret(ns, "creds", map[string]string{"k": "1"})
			dep := createDeployment(ns, "dep", auto, envFromConfigMap("cfg"), envFromSecret("creds"))
			startRipple(envVarsStrategy)
			before := recorded(dep)

			if kind == "ConfigMap" {
				update(cm, func(c *corev1.ConfigMap) { c.Labels = map[string]string{"touched": "yes"} })
			} else {
				update(sec, func(s *corev1.Secret) { s.Labels = map[string]string{"touched": "yes"} })
			}

			expectNoRollout(dep, before)
		},
		Entry("ConfigMap labels", "ConfigMap"), Entry("Secret labels", "Secret"),
	)

	It("sets the variable on the container that uses the object, and a new value on every change", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", auto, secondContainerUses("cfg"))
		startRipple(envVarsStrategy)
		before := recorded(dep)

		setData(cm, "k", "2")
		after := expectRolledOnce(dep, before)
		first := envOf(dep, "STAKATER_CFG_CONFIGMAP")
		Expect(first).To(HaveKeyWithValue("sidecar", HaveLen(1)))
		Expect(first).NotTo(HaveKey("app"))

		setData(cm, "k", "3")
		expectRolledOnce(dep, after)
		second := envOf(dep, "STAKATER_CFG_CONFIGMAP")
		Expect(second["sidecar"]).To(HaveLen(1))
		Expect(second["sidecar"][0]).NotTo(Equal(first["sidecar"][0]))
	})

	It("takes over the variable Reloader set, on whichever container holds it, without a first-sight write or a duplicate", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		reloaders := func(s *corev1.PodSpec) {
			s.Containers = append(s.Containers, corev1.Container{Name: "sidecar", Image: "app:1",
				Env: []corev1.EnvVar{{Name: "STAKATER_CFG_CONFIGMAP", Value: "3b5d5c3712955042212316173ccf37be800c9d3b"}}})
		}
		dep := createDeployment(ns, "dep", auto, envFromConfigMap("cfg"), reloaders)
		startRipple(envVarsStrategy)
		before := recorded(dep)
		Expect(before.Rollouts()).To(BeZero())

		setData(cm, "k", "2")

		expectRolledOnce(dep, before)
		vars := envOf(dep, "STAKATER_CFG_CONFIGMAP")
		Expect(vars).To(HaveLen(1), "one variable, not a second one on the container that reads the ConfigMap")
		Expect(vars["sidecar"]).To(HaveLen(1))
		Expect(vars["sidecar"][0]).NotTo(Equal("3b5d5c3712955042212316173ccf37be800c9d3b"))
	})

	It("replaces the SHA-1 Reloader left in a tracked Secret's variable, on every container that holds it, at the next rollout, whatever changed, and leaves a value of the user's own", func() {
		const reloaders = "9f2c4a3b6d1e8f7a5c0b2d4e6f8a1c3e5b7d9f0a"
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		createSecret(ns, "creds", map[string]string{"password": "hunter2"})
		createSecret(ns, "token", map[string]string{"t": "1"})
		leftover := func(s *corev1.PodSpec) {
			s.Containers[0].Env = append(s.Containers[0].Env, corev1.EnvVar{Name: "STAKATER_CREDS_SECRET", Value: reloaders},
				corev1.EnvVar{Name: "STAKATER_TOKEN_SECRET", Value: "pinned"})
			s.Containers = append(s.Containers, corev1.Container{Name: "sidecar", Image: "app:1",
				Env: []corev1.EnvVar{{Name: "STAKATER_CREDS_SECRET", Value: reloaders}}})
		}
		dep := createDeployment(ns, "dep", auto, envFromConfigMap("cfg"), envFromSecret("creds"), envFromSecret("token"), leftover)
		startRipple(envVarsStrategy)
		before := recorded(dep)

		setData(cm, "k", "2")

		expectRolledOnce(dep, before)
		stamped := ConsistOf(MatchRegexp(`^[^:]+:[0-9]+:[^:]+$`))
		Expect(envOf(dep, "STAKATER_CREDS_SECRET")).To(And(HaveKeyWithValue("app", stamped), HaveKeyWithValue("sidecar", stamped)))
		Expect(envOf(dep, "STAKATER_TOKEN_SECRET")).To(HaveKeyWithValue("app", ConsistOf("pinned")))
	})

	It("lets a workload choose its strategy by annotation, either way, and reports a mistaken choice", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		envByAnnotation := createDeployment(ns, "env", map[string]string{annotations.Auto: "true", annotations.ReloadStrategy: "env-vars"}, envFromConfigMap("cfg"))
		plain := createDeployment(ns, "plain", auto, envFromConfigMap("cfg"))
		mistaken := createDeployment(ns, "mistaken", map[string]string{annotations.Auto: "true", annotations.ReloadStrategy: "envvars"}, envFromConfigMap("cfg"))
		startRipple()
		envBefore, plainBefore, mistakenBefore := recorded(envByAnnotation), recorded(plain), recorded(mistaken)
		Eventually(eventsFor(mistaken), 10*time.Second).Should(ContainElement(ContainSubstring(`InvalidAnnotation: annotation ripple.dev/reload-strategy: "envvars" is not one of annotations, env-vars, refresh; "annotations" applies`)))

		setData(cm, "k", "2")

		expectRolledOnce(envByAnnotation, envBefore)
		expectRolledOnce(plain, plainBefore)
		expectRolledOnce(mistaken, mistakenBefore)
		Expect(envOf(envByAnnotation, "STAKATER_CFG_CONFIGMAP")).To(HaveKey("app"))
		Expect(templateOf(envByAnnotation).Annotations).NotTo(HaveKey(annotations.ConfigDigest))
		for _, d := range []*appsv1.Deployment{plain, mistaken} {
			Expect(envOf(d, "STAKATER_CFG_CONFIGMAP")).To(BeEmpty())
			Expect(templateOf(d).Annotations).To(HaveKey(annotations.ConfigDigest))
		}
	})

	It("rolls with the annotation a workload asks for under --reload-strategy=env-vars", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", map[string]string{annotations.Auto: "true", annotations.ReloadStrategy: "annotations"}, envFromConfigMap("cfg"))
		startRipple(envVarsStrategy)
		before := recorded(dep)

		setData(cm, "k", "2")

		expectRolledOnce(dep, before)
		Expect(envOf(dep, "STAKATER_CFG_CONFIGMAP")).To(BeEmpty())
	})

	It("pauses a Deployment and sets its variable in one write", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", pauseFor("3s"), envFromConfigMap("cfg"))
		startRipple(envVarsStrategy)
		before := recorded(dep)

		setData(cm, "k", "2")

		steps := expectPausedThenResumed(dep, before, 10*time.Second)
		paused := steps[len(steps)-1]
		Expect(paused.Stamp).To(ContainSubstring("STAKATER_CFG_CONFIGMAP="), "the write that pauses sets the variable")
		for _, s := range steps[:len(steps)-1] {
			Expect(s.Stamp).To(Equal(before.Digest), "no write before it changed the template")
		}
		expectRolledOnce(dep, before)
	})

	It("rolls a held StatefulSet through its variable when the pause ends", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		sts := createStatefulSet(ns, "sts", pauseFor("3s"), envFromConfigMap("cfg"))
		startRipple(envVarsStrategy)
		before := recorded(sts)

		setData(cm, "k", "2")

		Eventually(before.Rollouts, 15*time.Second).Should(Equal(1))
		Expect(envOf(sts, "STAKATER_CFG_CONFIGMAP")).To(HaveKey("app"))
		Eventually(pausedAt(sts), 5*time.Second).Should(BeEmpty())
	})

	It("rolls once when the record is lost while ripple is down and an object that never rolled the workload changed", func() {
		rolledBefore := createConfigMap(ns, "first", map[string]string{"k": "1"})
		never := createConfigMap(ns, "second", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", auto, envFromConfigMap("first"), envFromConfigMap("second"))
		first := startRipple(envVarsStrategy)
		before := recorded(dep)
		setData(rolledBefore, "k", "2")
		rolled := expectRolledOnce(dep, before)
		Expect(envOf(dep, "STAKATER_SECOND_CONFIGMAP")).To(BeEmpty())
		firstValue := envOf(dep, "STAKATER_FIRST_CONFIGMAP")["app"][0]
		first.stop()

		setData(never, "k", "2")
		update(dep, func(d *appsv1.Deployment) { delete(d.Annotations, annotations.Recorded) })
		startRipple(envVarsStrategy)

		expectRolledOnce(dep, rolled)
		// Without a record, which object changed is unknown: the rollout
		// gives ripple's variable the new stamp and adds none.
		Expect(envOf(dep, "STAKATER_FIRST_CONFIGMAP")["app"]).To(ConsistOf(Not(Equal(firstValue))))
		Expect(envOf(dep, "STAKATER_SECOND_CONFIGMAP")).To(BeEmpty())
	})

	It("rolls a workload tracking many ConfigMaps once when its record is lost while ripple is down, adding no variable per tracked object", func() {
		cms, mods := configMapsReadByEnvFrom(ns, 6)
		dep := createDeployment(ns, "dep", auto, mods...)
		first := startRipple(envVarsStrategy)
		before := recorded(dep)
		setData(cms[0], "k", "2")
		rolled := expectRolledOnce(dep, before)
		Expect(stakaterVars(dep)).To(HaveLen(1))
		stampBefore := envOf(dep, "STAKATER_CFG_0_CONFIGMAP")["app"]
		first.stop()

		setData(cms[3], "k", "2")
		removeRecord(dep)
		startRipple(envVarsStrategy)

		expectRolledOnce(dep, rolled)
		Expect(len(stakaterVars(dep))).To(BeNumerically("<=", 1+1), "at most one variable more than before, not one per tracked ConfigMap")
		Expect(envOf(dep, "STAKATER_CFG_0_CONFIGMAP")["app"]).To(ConsistOf(Not(BeElementOf(stampBefore))), "ripple's variable takes the new stamp")
	})

	It("rolls through the annotation when a workload whose record is lost was last rolled by it, setting no variable", func() {
		cms, mods := configMapsReadByEnvFrom(ns, 6)
		dep := createDeployment(ns, "dep", map[string]string{annotations.Auto: "true", annotations.ReloadStrategy: "annotations"}, mods...)
		first := startRipple(envVarsStrategy)
		before := recorded(dep)
		setData(cms[0], "k", "2")
		rolled := expectRolledOnce(dep, before)
		annotationBefore := templateOf(dep).Annotations[annotations.ConfigDigest]
		Expect(annotationBefore).NotTo(BeEmpty())
		first.stop()

		// Switched to the env-vars strategy, and its record lost, with one
		// write (a GitOps sync of an older manifest).
		setData(cms[3], "k", "2")
		update(dep, func(d *appsv1.Deployment) {
			delete(d.Annotations, annotations.Recorded)
			delete(d.Annotations, annotations.ReloadStrategy)
		})
		startRipple(envVarsStrategy)

		expectRolledOnce(dep, rolled)
		Expect(stakaterVars(dep)).To(BeEmpty())
		Expect(templateOf(dep).Annotations[annotations.ConfigDigest]).NotTo(Equal(annotationBefore))
	})

	It("reports a write that lost a race to another writer as a conflict, which is retried quietly", func() {
		createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", auto, envFromConfigMap("cfg"))
		stale := dep.DeepCopy()
		update(dep, func(d *appsv1.Deployment) {
			d.Spec.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "ADDED", Value: "by another writer"}}
		})
		typ, ok := workload.ByPlural("deployments")
		Expect(ok).To(BeTrue())

		err := typ.Stamp(suiteCtx, k8s, stale, workload.Change{Record: "r", Stamp: "s",
			Env: []workload.EnvVar{{Container: "app", Name: "STAKATER_CFG_CONFIGMAP", Value: "v"}}})

		Expect(apierrors.IsConflict(err)).To(BeTrue(), "%v", err)
		Expect(envOf(dep, "STAKATER_CFG_CONFIGMAP")).To(BeEmpty())
	})

	It("leaves a user's own STAKATER_ variable whose value is not ripple's stamp", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		own := func(s *corev1.PodSpec) {
			s.Containers[0].Env = append(s.Containers[0].Env, corev1.EnvVar{Name: "STAKATER_REDIS_ADDR", Value: "redis:6379:0"})
		}
		dep := createDeployment(ns, "dep", auto, envFromConfigMap("cfg"), own)
		startRipple(envVarsStrategy)
		before := recorded(dep)

		setData(cm, "k", "2")

		expectRolledOnce(dep, before)
		Expect(envOf(dep, "STAKATER_REDIS_ADDR")).To(HaveKeyWithValue("app", ConsistOf("redis:6379:0")))
	})

	It("rolls a copy whose stale record is written back after a change, adding no variable per tracked object", func() {
		cms, mods := configMapsReadByEnvFrom(ns, 4)
		dep := createDeployment(ns, "dep", auto, mods...)
		first := startRipple(envVarsStrategy)
		rolled := rolledOnceBy(dep, cms[0], "2")
		waitServerPast(ns, recordedAt(rolled)+1)
		copied := createCopy(dep, "restored")
		stale := copied.Annotations[annotations.Recorded]
		Eventually(func() string { return stateOf(copied).Recorded }, 20*time.Second).ShouldNot(Equal(stale))
		before := withRollouts(copied, stateOf(copied))
		setData(cms[0], "k", "3")
		expectRolledOnce(copied, before)
		first.stop()
		setData(cms[1], "k", "3")
		update(copied, func(d *appsv1.Deployment) { d.Annotations[annotations.Recorded] = stale })
		written := withRollouts(copied, stateOf(copied))

		startRipple(envVarsStrategy)

		expectRolledOnce(copied, written)
		Expect(stakaterVars(copied)).To(ConsistOf("app/STAKATER_CFG_0_CONFIGMAP"), "the change is unknown: ripple's variables alone")
	})

	It("refuses to start with an unknown --reload-strategy, naming the flag", func() {
		err := startRippleErr("--reload-strategy=envvars")
		Expect(err).To(MatchError(ContainSubstring(`--reload-strategy: "envvars" is not annotations or env-vars`)))
	})
})

// configMapsReadByEnvFrom creates n ConfigMaps, cfg-0 to cfg-n-1, and the
// pod spec changes that read each through envFrom.
func configMapsReadByEnvFrom(ns string, n int) ([]*corev1.ConfigMap, []podMod) {
	GinkgoHelper()
	var cms []*corev1.ConfigMap
	var mods []podMod
	for i := range n {
		name := fmt.Sprintf("cfg-%d", i)
		cms = append(cms, createConfigMap(ns, name, map[string]string{"k": "1"}))
		mods = append(mods, envFromConfigMap(name))
	}
	return cms, mods
}
