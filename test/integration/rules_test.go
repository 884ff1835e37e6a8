package integration

import (
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ripple-controller/ripple/internal/annotations"
)

// withTemplateAnnotations sets the pod template's annotations of a
// Deployment created by createDeployment.
func withTemplateAnnotations(dep *appsv1.Deployment, ann map[string]string) {
	GinkgoHelper()
	update(dep, func(d *appsv1.Deployment) { d.Spec.Template.Annotations = ann })
}

// invalidAnnotationEvents counts the InvalidAnnotation Events about obj.
func invalidAnnotationEvents(obj client.Object) func() []string {
	return func() []string {
		var out []string
		for _, e := range eventsFor(obj)() {
			if strings.HasPrefix(e, "InvalidAnnotation: ") {
				out = append(out, e)
			}
		}
		return out
	}
}

var _ = Describe("Reloader's rules, to the letter", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace(nil) })

	It("reads each kind from the pod template on its own: a Secret change rolls a workload whose metadata holds only a ConfigMap reload list and whose template says secret auto", func() {
		listed := createConfigMap(ns, "listed", map[string]string{"k": "1"})
		referenced := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		sec := createSecret(ns, "creds", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", map[string]string{annotations.ConfigMapReload: "listed"},
			volumeConfigMap("cfg"), envFromSecret("creds"))
		// The template's ConfigMap auto is not read: the metadata holds
		// the ConfigMaps' reload list.
		withTemplateAnnotations(dep, map[string]string{annotations.SecretAuto: "true", annotations.ConfigMapAuto: "true"})
		startRipple()
		before := recorded(dep)

		setSecretData(sec, "k", "2")
		after := expectRolledOnce(dep, before)

		setData(referenced, "k", "2")
		expectNoRollout(dep, after)

		setData(listed, "k", "2")
		expectRolledOnce(dep, after)
	})

	It("reads auto from the pod template for ConfigMaps when the metadata only says secret auto", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		sec := createSecret(ns, "creds", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", map[string]string{annotations.SecretAuto: "false"}, volumeConfigMap("cfg"), envFromSecret("creds"))
		withTemplateAnnotations(dep, map[string]string{annotations.Auto: "true"})
		startRipple()
		before := recorded(dep)

		setSecretData(sec, "k", "2")
		expectNoRollout(dep, before)

		setData(cm, "k", "2")
		expectRolledOnce(dep, before)
	})

	It("reads the exclude lists from the metadata only: on the metadata they exclude under the template's auto, on the template they exclude nothing", func() {
		noisy := createConfigMap(ns, "noisy", map[string]string{"k": "1"})
		cfg := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		onMetadata := createDeployment(ns, "on-metadata", map[string]string{annotations.ConfigMapExclude: "noisy"},
			volumeConfigMap("noisy"), volumeConfigMap("cfg"))
		withTemplateAnnotations(onMetadata, map[string]string{annotations.Auto: "true"})
		onTemplate := createDeployment(ns, "on-template", nil, volumeConfigMap("noisy"))
		withTemplateAnnotations(onTemplate, map[string]string{annotations.Auto: "true", annotations.ConfigMapExclude: "noisy"})
		startRipple()
		metadataBefore, templateBefore := recorded(onMetadata), recorded(onTemplate)

		setData(noisy, "k", "2")
		expectRolledOnce(onTemplate, templateBefore)
		expectNoRollout(onMetadata, metadataBefore)

		setData(cfg, "k", "2")
		expectRolledOnce(onMetadata, metadataBefore)
	})

	It("accepts \"True\", \"1\" and \"t\" as true, like strconv.ParseBool, without reporting them", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		sec := createSecret(ns, "creds", map[string]string{"k": "1"})
		titled := createDeployment(ns, "titled", map[string]string{annotations.Auto: "True"}, volumeConfigMap("cfg"))
		one := createDeployment(ns, "one", map[string]string{annotations.ConfigMapAuto: "1"}, volumeConfigMap("cfg"))
		short := createDeployment(ns, "short", map[string]string{annotations.SecretAuto: "t"}, envFromSecret("creds"))
		startRipple()
		titledBefore, oneBefore, shortBefore := recorded(titled), recorded(one), recorded(short)

		setData(cm, "k", "2")
		setSecretData(sec, "k", "2")

		expectRolledOnce(titled, titledBefore)
		expectRolledOnce(one, oneBefore)
		expectRolledOnce(short, shortBefore)
		for _, dep := range []client.Object{titled, one, short} {
			Expect(invalidAnnotationEvents(dep)()).To(BeEmpty())
		}
	})

	It("reports a mistaken annotation with one InvalidAnnotation Event and one log line, however often the workload is written", func() {
		createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		typo := createDeployment(ns, "typo", map[string]string{annotations.Auto: "yes"}, volumeConfigMap("cfg"))
		r := startRipple()
		Eventually(invalidAnnotationEvents(typo), 10*time.Second).Should(HaveLen(1))
		// ripple watches every namespace: a line about another spec's
		// object, in a namespace being deleted, is not this one's.
		ours := `Ignoring an invalid annotation value[^\n]*"namespace":"` + ns + `"`
		Eventually(r.logs).Should(gbytes.Say(ours))

		for range 3 {
			markAvailable(typo)
		}
		update(typo, func(d *appsv1.Deployment) { d.Annotations["team"] = "payments" })
		Consistently(invalidAnnotationEvents(typo), quiet).Should(HaveLen(1))
		Expect(r.logs).NotTo(gbytes.Say(ours))
	})

	It("reports an unparsable boolean with an InvalidAnnotation Event and does not act on it; \"False\" and \"0\" are false, unreported", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		unparsable := createDeployment(ns, "unparsable", map[string]string{annotations.Auto: "yes please"}, volumeConfigMap("cfg"))
		titledFalse := createDeployment(ns, "titled-false", map[string]string{annotations.Auto: "False"}, volumeConfigMap("cfg"))
		zero := createDeployment(ns, "zero", map[string]string{annotations.ConfigMapAuto: "0"}, volumeConfigMap("cfg"))
		startRipple()
		Eventually(invalidAnnotationEvents(unparsable), 10*time.Second).Should(ConsistOf(SatisfyAll(
			ContainSubstring(annotations.Auto), ContainSubstring(`"yes please"`), ContainSubstring("not a boolean"))))
		var befores []state
		for _, dep := range []*appsv1.Deployment{unparsable, titledFalse, zero} {
			befores = append(befores, withRollouts(dep, stateOf(dep)))
		}

		setData(cm, "k", "2")

		for i, dep := range []*appsv1.Deployment{unparsable, titledFalse, zero} {
			expectNoWrite(dep, befores[i])
		}
		Expect(invalidAnnotationEvents(titledFalse)()).To(BeEmpty())
		Expect(invalidAnnotationEvents(zero)()).To(BeEmpty())
	})

	It("rolls under auto \"true\" even when the typed auto says \"false\": either one true is enough", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		sec := createSecret(ns, "creds", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", map[string]string{annotations.Auto: "true", annotations.ConfigMapAuto: "false", annotations.SecretAuto: "false"},
			volumeConfigMap("cfg"), envFromSecret("creds"))
		startRipple()
		before := recorded(dep)

		setData(cm, "k", "2")
		after := expectRolledOnce(dep, before)

		setSecretData(sec, "k", "2")
		expectRolledOnce(dep, after)
	})

	It("under --auto-reload-all, opts out for any non-empty auto that is not true, and per kind for a typed auto", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		sec := createSecret(ns, "creds", map[string]string{"k": "1"})
		plain := createDeployment(ns, "plain", nil, volumeConfigMap("cfg"))
		emptyAuto := createDeployment(ns, "empty-auto", map[string]string{annotations.Auto: ""}, volumeConfigMap("cfg"))
		zero := createDeployment(ns, "zero", map[string]string{annotations.Auto: "0"}, volumeConfigMap("cfg"))
		unparsable := createDeployment(ns, "unparsable", map[string]string{annotations.Auto: "nope"}, volumeConfigMap("cfg"))
		noConfigMaps := createDeployment(ns, "no-configmaps", map[string]string{annotations.ConfigMapAuto: "false"},
			volumeConfigMap("cfg"), envFromSecret("creds"))
		startRipple("--auto-reload-all")
		plainBefore, emptyBefore, noCMBefore := recorded(plain), recorded(emptyAuto), recorded(noConfigMaps)
		zeroBefore, unparsableBefore := withRollouts(zero, stateOf(zero)), withRollouts(unparsable, stateOf(unparsable))
		Eventually(invalidAnnotationEvents(unparsable), 10*time.Second).ShouldNot(BeEmpty())

		setData(cm, "k", "2")

		expectRolledOnce(plain, plainBefore)
		expectRolledOnce(emptyAuto, emptyBefore)
		expectNoWrite(zero, zeroBefore)
		expectNoWrite(unparsable, unparsableBefore)
		expectNoRollout(noConfigMaps, noCMBefore)

		setSecretData(sec, "k", "2")
		expectRolledOnce(noConfigMaps, noCMBefore)
	})

	// Each workload carries one mistake: the Events of one workload with one
	// reason share a series, which keeps the note of the first.
	It("acts on search, match and ignore only when exactly \"true\", as Reloader does, and reports \"True\"", func() {
		matched := createConfigMap(ns, "matched", map[string]string{"k": "1"}, map[string]string{annotations.Match: "True"})
		ignored := createConfigMap(ns, "ignored", map[string]string{"k": "1"}, map[string]string{annotations.Ignore: "True"})
		searching := createDeployment(ns, "searching", map[string]string{annotations.Search: "true"}, volumeConfigMap("matched"))
		titledSearch := createDeployment(ns, "titled-search", map[string]string{annotations.Search: "True"}, volumeConfigMap("matched"))
		listing := createDeployment(ns, "listing", map[string]string{annotations.ConfigMapReload: "ignored"})
		startRipple()
		searchingBefore, listingBefore := recorded(searching), recorded(listing)
		titledBefore := withRollouts(titledSearch, stateOf(titledSearch))
		for dep, key := range map[*appsv1.Deployment]string{searching: annotations.Match, titledSearch: annotations.Search, listing: annotations.Ignore} {
			Eventually(invalidAnnotationEvents(dep), 10*time.Second).Should(ContainElement(SatisfyAll(
				ContainSubstring(key), ContainSubstring(`"True"`))), "%s is reported on %s", key, dep.Name)
		}

		setData(matched, "k", "2")
		expectNoRollout(searching, searchingBefore)
		expectNoWrite(titledSearch, titledBefore)

		setData(ignored, "k", "2")
		expectRolledOnce(listing, listingBefore)
	})
})

// pathological is a reload list of about 15 KB: one usable entry, then
// entries that are each cheap to write and costly to compile, one entry
// far longer than a name, and more entries than a list may have.
func pathological(usable string) string {
	var b strings.Builder
	b.WriteString(usable)
	for b.Len() < 8000 {
		b.WriteString(`,(?:(?:\pL|\pN|x|y|z){30}){30}`)
	}
	b.WriteString("," + strings.Repeat(`(a|b)*`, 200))
	for i := 0; b.Len() < 15000; i++ {
		fmt.Fprintf(&b, ",late-%d", i)
	}
	return b.String()
}

var _ = Describe("A 15 KB pathological reload list", func() {
	It("leaves ripple rolling the other workloads in its namespace, still honours its usable entry, and is reported in a bounded number of Events of bounded size", func() {
		e := newBadEnv(badCase{})
		value := pathological("patho-.*")
		Expect(len(value)).To(BeNumerically(">=", 15000))
		listed := createConfigMap(e.ns, "patho-1", map[string]string{"k": "1"})
		dep := createDeployment(e.ns, "dep", map[string]string{annotations.ConfigMapReload: value})
		before := recorded(dep)
		Eventually(invalidAnnotationEvents(dep), 10*time.Second).Should(ConsistOf(SatisfyAll(
			ContainSubstring(annotations.ConfigMapReload), ContainSubstring("entries skipped"),
			WithTransform(func(s string) int { return len(s) }, BeNumerically("<=", 1024)))))

		// Each change of a ConfigMap in the namespace reconciles the
		// workload again: its list has a pattern.
		var others []*appsv1.Deployment
		var configs []*corev1.ConfigMap
		var othersBefore []state
		for i := range 3 {
			name := fmt.Sprintf("other-%d", i)
			configs = append(configs, createConfigMap(e.ns, name, map[string]string{"k": "1"}))
			d := createDeployment(e.ns, name, auto, volumeConfigMap(name))
			others = append(others, d)
			othersBefore = append(othersBefore, recorded(d))
		}
		for round := range 3 {
			for i, d := range others {
				setData(configs[i], "k", fmt.Sprint(round+2))
				othersBefore[i] = expectRolledOnce(d, othersBefore[i])
			}
		}
		expectNoRollout(dep, before)
		// An Event regards one version of the workload: first sight and the
		// record ripple writes make two, however often it is reconciled.
		Consistently(invalidAnnotationEvents(dep), quiet).Should(WithTransform(func(l []string) int { return len(l) }, BeNumerically("<=", 2)),
			"at most one Event per version of the workload, its count raised on each reconcile")

		setData(listed, "k", "2")
		e.stays(dep, expectRolledOnce(dep, before))

		e.expectStillWorks()
		Expect(invalidAnnotationEvents(dep)()).To(WithTransform(func(l []string) int { return len(l) }, BeNumerically("<=", 3)))
		for _, line := range e.log.lines("Ignoring an invalid annotation value", jsonString(dep.Name))() {
			Expect(len(line)).To(BeNumerically("<", 2048), "a log line about the list is short")
		}
	})
})
