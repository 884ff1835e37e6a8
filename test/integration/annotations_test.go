package integration

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"

	"github.com/ripple-controller/ripple/internal/annotations"
)

var _ = Describe("Reloader's annotations", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace(nil) })

	It("tracks only ConfigMaps under the typed ConfigMap auto annotation", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		sec := createSecret(ns, "creds", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", map[string]string{annotations.ConfigMapAuto: "true"},
			volumeConfigMap("cfg"), envFromSecret("creds"))
		startRipple()
		before := recorded(dep)

		setSecretData(sec, "k", "2")
		expectNoRollout(dep, before)

		setData(cm, "k", "2")
		expectRolledOnce(dep, before)
	})

	It("tracks only Secrets under the typed Secret auto annotation", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		sec := createSecret(ns, "creds", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", map[string]string{annotations.SecretAuto: "true"},
			volumeConfigMap("cfg"), envFromSecret("creds"))
		startRipple()
		before := recorded(dep)

		setData(cm, "k", "2")
		expectNoRollout(dep, before)

		setSecretData(sec, "k", "2")
		expectRolledOnce(dep, before)
	})

	It("rolls for objects on a reload list even when the pod spec does not use them", func() {
		named := createConfigMap(ns, "settings", map[string]string{"k": "1"})
		byPattern := createSecret(ns, "db-creds-v2", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", map[string]string{
			annotations.ConfigMapReload: " settings , other",
			annotations.SecretReload:    "db-creds-.*",
		})
		startRipple()
		before := recorded(dep)

		setData(named, "k", "2")
		after := expectRolledOnce(dep, before)

		setSecretData(byPattern, "k", "2")
		expectRolledOnce(dep, after)
	})

	It("anchors reload list entries: a name that only contains an entry does not trigger", func() {
		longer := createConfigMap(ns, "settings-extra", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", map[string]string{annotations.ConfigMapReload: "settings,set.*s"})
		startRipple()
		before := recorded(dep)

		setData(longer, "k", "2")

		expectNoRollout(dep, before)
	})

	It("reports an invalid reload list entry with an Event and still honours the valid ones", func() {
		cm := createConfigMap(ns, "settings", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", map[string]string{annotations.ConfigMapReload: "broken(,settings"})
		startRipple()
		before := recorded(dep)
		Eventually(eventsFor(dep), "10s").Should(ContainElement(SatisfyAll(
			HavePrefix("InvalidAnnotation"), ContainSubstring("broken("), ContainSubstring(annotations.ConfigMapReload))))

		setData(cm, "k", "2")

		expectRolledOnce(dep, before)
	})

	It("tracks referenced objects that carry match under search, and no others", func() {
		matched := createConfigMap(ns, "matched", map[string]string{"k": "1"}, map[string]string{annotations.Match: "true"})
		unmatched := createConfigMap(ns, "unmatched", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", map[string]string{annotations.Search: "true"},
			volumeConfigMap("matched"), volumeConfigMap("unmatched"))
		startRipple()
		before := recorded(dep)

		setData(unmatched, "k", "2")
		expectNoRollout(dep, before)

		setData(matched, "k", "2")
		expectRolledOnce(dep, before)
	})

	It("never rolls for an object on the exclude list, even when auto tracks it", func() {
		excludedCM := createConfigMap(ns, "noisy", map[string]string{"k": "1"})
		excludedSecret := createSecret(ns, "rotating", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", map[string]string{
			annotations.Auto:             "true",
			annotations.ConfigMapExclude: "noisy",
			annotations.SecretExclude:    "rotating",
		}, volumeConfigMap("noisy"), envFromSecret("rotating"))
		startRipple()
		before := recorded(dep)

		setData(excludedCM, "k", "2")
		setSecretData(excludedSecret, "k", "2")

		expectNoRollout(dep, before)
	})

	It("never rolls for an object annotated ignore, even when a reload list names it", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"}, map[string]string{annotations.Ignore: "true"})
		dep := createDeployment(ns, "dep", map[string]string{annotations.Auto: "true", annotations.ConfigMapReload: "cfg"},
			volumeConfigMap("cfg"))
		startRipple()
		before := recorded(dep)

		setData(cm, "k", "2")

		expectNoRollout(dep, before)
	})

	It("lets the exclude list win over the reload list", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", map[string]string{annotations.ConfigMapReload: "cfg", annotations.ConfigMapExclude: "cfg"})
		startRipple()
		before := recorded(dep)

		setData(cm, "k", "2")

		expectNoRollout(dep, before)
	})

	It("lets a reload list trigger a workload whose auto annotation is \"false\"", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", map[string]string{annotations.Auto: "false", annotations.ConfigMapReload: "cfg"},
			volumeConfigMap("cfg"))
		startRipple()
		before := recorded(dep)

		setData(cm, "k", "2")

		expectRolledOnce(dep, before)
	})

	It("reads the annotations from the pod template when the metadata has none of them", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", nil, volumeConfigMap("cfg"))
		update(dep, func(d *appsv1.Deployment) { d.Spec.Template.Annotations = map[string]string{annotations.Auto: "true"} })
		startRipple()
		before := recorded(dep)

		setData(cm, "k", "2")

		expectRolledOnce(dep, before)
	})

	It("ignores the pod template's annotations when the metadata says auto, for both kinds", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", map[string]string{annotations.Auto: "false"}, volumeConfigMap("cfg"))
		update(dep, func(d *appsv1.Deployment) { d.Spec.Template.Annotations = map[string]string{annotations.Auto: "true"} })
		control := createDeployment(ns, "control", auto, volumeConfigMap("cfg"))
		before := withRollouts(dep, stateOf(dep))
		startRipple()
		controlBefore := recorded(control)

		setData(cm, "k", "2")

		// The control rolling shows ripple saw the change dep would track.
		expectRolledOnce(control, controlBefore)
		expectNoWrite(dep, before)
	})

	It("reports an auto value that is not a boolean and does not act on it", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", map[string]string{annotations.Auto: "yes"}, volumeConfigMap("cfg"))
		startRipple()
		Eventually(eventsFor(dep), "10s").Should(ContainElement(SatisfyAll(
			HavePrefix("InvalidAnnotation"), ContainSubstring(`"yes"`))))
		before := withRollouts(dep, stateOf(dep))

		setData(cm, "k", "2")

		expectNoRollout(dep, before)
		Expect(stateOf(dep).Recorded).To(BeEmpty())
	})
})
