package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ripple-controller/ripple/internal/annotations"
)

// logCapture collects what the suite's logger writes to GinkgoWriter while
// one spec runs. The suite's logger is global and fulfilled once, so instead
// of swapping it the capture tees GinkgoWriter, which specs share only one
// at a time.
type logCapture struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (c *logCapture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.Write(p)
}

// captureLog starts capturing ripple's log until the spec ends.
func captureLog() *logCapture {
	c := &logCapture{}
	GinkgoWriter.TeeTo(c)
	DeferCleanup(GinkgoWriter.ClearTeeWriters)
	return c
}

// lines returns a poller of the log lines that contain every one of subs.
func (c *logCapture) lines(subs ...string) func() []string {
	return func() []string {
		c.mu.Lock()
		defer c.mu.Unlock()
		var out []string
		for _, l := range strings.Split(c.buf.String(), "\n") {
			if containsAll(l, subs) {
				out = append(out, l)
			}
		}
		return out
	}
}

func containsAll(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// jsonString renders s as the log's structured fields quote it.
func jsonString(s string) string {
	b, err := json.Marshal(s)
	Expect(err).NotTo(HaveOccurred())
	return string(b)
}

// badEnv is the namespace of one bad-input case: ripple runs, its log is
// captured, and a healthy control workload sits next to the bad input.
type badEnv struct {
	ns            string
	log           *logCapture
	ripple        *rippleInstance
	control       *appsv1.Deployment
	controlCM     *corev1.ConfigMap
	controlBefore state
	// checks must hold throughout the final quiet window.
	checks []func(Gomega)
	// allowErrors lets a case expect reconcile errors in its namespace.
	allowErrors bool
}

// badCase is one bad input: the flags ripple runs with, labels the control
// ConfigMap needs to be watched under those flags, and what the case does
// once ripple has recorded the control workload.
type badCase struct {
	args          []string
	controlLabels map[string]string
	run           func(e *badEnv)
}

func newBadEnv(c badCase) *badEnv {
	GinkgoHelper()
	e := &badEnv{ns: newNamespace(nil), log: captureLog()}
	e.controlCM = createConfigMap(e.ns, "control-cfg", map[string]string{"k": "1"})
	if c.controlLabels != nil {
		update(e.controlCM, func(cm *corev1.ConfigMap) { cm.Labels = c.controlLabels })
	}
	e.control = createDeployment(e.ns, "control", auto, volumeConfigMap("control-cfg"))
	e.ripple = startRipple(c.args...)
	e.controlBefore = recorded(e.control)
	return e
}

// stays registers that obj must not roll after s, until the case ends.
func (e *badEnv) stays(obj client.Object, s state) {
	e.checks = append(e.checks, func(g Gomega) {
		g.Expect(s.Rollouts()).To(BeZero(), "%s does not roll", obj.GetName())
	})
}

// untouched registers that nothing at all is written to obj after s.
func (e *badEnv) untouched(obj client.Object, s state) {
	e.checks = append(e.checks, func(g Gomega) {
		cur := obj.DeepCopyObject().(client.Object)
		g.Expect(k8s.Get(suiteCtx, client.ObjectKeyFromObject(obj), cur)).To(Succeed())
		g.Expect(cur.GetResourceVersion()).To(Equal(s.ResourceVersion), "nothing is written to %s", obj.GetName())
	})
}

// expectReported waits for the user's mistake to be reported on obj: a
// Warning Event naming the annotation and quoting the value, and a log line
// naming the workload, the annotation and the value.
func (e *badEnv) expectReported(obj client.Object, annotation, value string) {
	GinkgoHelper()
	Eventually(eventsFor(obj), 10*time.Second).Should(ContainElement(SatisfyAll(
		HavePrefix("InvalidAnnotation: "), ContainSubstring(annotation), ContainSubstring(fmt.Sprintf("%q", value)))),
		"an InvalidAnnotation Event on %s", obj.GetName())
	Eventually(e.log.lines("Ignoring an invalid annotation value", e.ns, jsonString(obj.GetName()),
		jsonString(annotation), jsonString(value)), 10*time.Second).ShouldNot(BeEmpty(),
		"a log line about %s on %s", annotation, obj.GetName())
}

// expectStillWorks proves ripple survived the case: it is running, a change
// of the control ConfigMap rolls the control workload exactly once, the
// case's workloads stay as registered meanwhile, and the log shows no panic
// and no reconcile error in the namespace.
func (e *badEnv) expectStillWorks() {
	GinkgoHelper()
	setData(e.controlCM, "k", "changed by the control check")
	Eventually(e.controlBefore.Rollouts, 20*time.Second).Should(Equal(1), "the control workload rolls")
	Consistently(func(g Gomega) {
		g.Expect(e.controlBefore.Rollouts()).To(Equal(1), "the control workload rolls only once")
		for _, check := range e.checks {
			check(g)
		}
	}, quiet).Should(Succeed())
	Expect(stateOf(e.control).Digest).NotTo(Equal(e.controlBefore.Digest))
	Eventually(eventsFor(e.control), 10*time.Second).Should(ContainElement("Reloaded: Rolled because ConfigMap/control-cfg changed"))
	Expect(e.ripple.done).NotTo(Receive(), "ripple is still running")
	Expect(e.log.lines("Observed a panic")()).To(BeEmpty())
	if !e.allowErrors {
		Expect(e.log.lines("Reconciler error", e.ns)()).To(BeEmpty())
	}
}

// notOptedIn creates a workload whose only policy is the invalid value of
// key, referencing cfg (ConfigMap) or creds (Secret), and checks that the
// mistake is reported, that nothing is written to the workload and that a
// change of what it references does not roll it.
func notOptedIn(key, value string) func(e *badEnv) {
	return func(e *badEnv) {
		cm := createConfigMap(e.ns, "cfg", map[string]string{"k": "1"}, map[string]string{annotations.Match: "true"})
		sec := createSecret(e.ns, "creds", map[string]string{"k": "1"})
		dep := createDeployment(e.ns, "dep", map[string]string{key: value}, volumeConfigMap("cfg"), envFromSecret("creds"))
		e.expectReported(dep, key, value)
		before := withRollouts(dep, stateOf(dep))
		Expect(before.Recorded).To(BeEmpty(), "a workload that is not opted in is not recorded")

		setData(cm, "k", "2")
		setSecretData(sec, "k", "2")

		e.untouched(dep, before)
		e.stays(dep, before)
	}
}

// invalidBooleans are the cases of every boolean workload annotation with a
// value that Reloader does not read as true: for the autos one that
// strconv.ParseBool refuses, for search anything but "true" or "false".
func invalidBooleans() []TableEntry {
	var out []TableEntry
	values := map[string][]string{
		annotations.Auto:          {"yes", "TRUE ", ""},
		annotations.ConfigMapAuto: {"yes", "TRUE ", ""},
		annotations.SecretAuto:    {"yes", "TRUE ", ""},
		annotations.Search:        {"yes", "TRUE ", "", "1", "True"},
	}
	for _, key := range []string{annotations.Auto, annotations.ConfigMapAuto, annotations.SecretAuto, annotations.Search} {
		for _, v := range values[key] {
			out = append(out, Entry(fmt.Sprintf("%s: %q is reported and not acted on", key, v), badCase{run: notOptedIn(key, v)}))
		}
	}
	return out
}

// volumeNamed mounts ConfigMap name under a short volume name, for names
// longer than a volume name may be.
func volumeNamed(volume, name string) podMod {
	return func(s *corev1.PodSpec) {
		s.Volumes = append(s.Volumes, corev1.Volume{Name: volume, VolumeSource: corev1.VolumeSource{
			ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: name}}}})
	}
}

func secretVolumeNamed(volume, name string) podMod {
	return func(s *corev1.PodSpec) {
		s.Volumes = append(s.Volumes, corev1.Volume{Name: volume, VolumeSource: corev1.VolumeSource{
			Secret: &corev1.SecretVolumeSource{SecretName: name}}})
	}
}

// longName is a valid DNS subdomain of exactly n characters.
func longName(prefix string, n int) string {
	name := prefix + strings.Repeat("x", n-len(prefix)-1) + "z"
	Expect(name).To(HaveLen(n))
	return name
}

func createSecretBytes(ns, name string, typ corev1.SecretType, data map[string][]byte) *corev1.Secret {
	GinkgoHelper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Type: typ, Data: data}
	Expect(k8s.Create(suiteCtx, s)).To(Succeed())
	return s
}

func setSecretBytes(s *corev1.Secret, k string, v []byte) {
	GinkgoHelper()
	update(s, func(c *corev1.Secret) { c.Data[k] = v })
}

// relabel writes obj again with one more label: an update that does not
// change its data.
func relabel[T client.Object](obj T, value string) {
	GinkgoHelper()
	update(obj, func(o T) {
		l := o.GetLabels()
		if l == nil {
			l = map[string]string{}
		}
		l["touched"] = value
		o.SetLabels(l)
	})
}

var _ = Describe("Bad input", func() {
	DescribeTable("is survived, never rolls a workload it should not, and a user's mistake is reported",
		func(c badCase) {
			e := newBadEnv(c)
			c.run(e)
			e.expectStillWorks()
		},
		invalidBooleans(),

		Entry("a typed auto \"yes\" next to auto \"true\": reported, and auto still tracks", badCase{run: func(e *badEnv) {
			cm := createConfigMap(e.ns, "cfg", map[string]string{"k": "1"})
			dep := createDeployment(e.ns, "dep", map[string]string{annotations.Auto: "true", annotations.ConfigMapAuto: "yes"}, volumeConfigMap("cfg"))
			before := recorded(dep)
			e.expectReported(dep, annotations.ConfigMapAuto, "yes")

			setData(cm, "k", "2")

			after := expectRolledOnce(dep, before)
			e.stays(dep, after)
		}}),

		Entry("a mistaken annotation on a workload reconciled again and again at one version: logged once, not on every reconcile", badCase{run: func(e *badEnv) {
			cm := createConfigMap(e.ns, "cfg", map[string]string{"k": "1"})
			dep := createDeployment(e.ns, "dep", map[string]string{annotations.Auto: "true", annotations.ConfigMapAuto: "yes"}, volumeConfigMap("cfg"))
			before := recorded(dep)
			e.expectReported(dep, annotations.ConfigMapAuto, "yes")
			logged := e.log.lines("Ignoring an invalid annotation value", e.ns, jsonString(dep.GetName()), jsonString(annotations.ConfigMapAuto))
			at := withRollouts(dep, stateOf(dep))

			// A label change of the ConfigMap reconciles the workload at
			// the same version, as a paced workload's wait does. The first
			// may be the first reconcile of the version ripple's record
			// wrote, which logs the mistake once more: once per version.
			relabel(cm, "first")
			n := 0
			Eventually(func() bool {
				m := len(logged())
				stable := m == n
				n = m
				return stable
			}, 10*time.Second, time.Second).Should(BeTrue())
			Expect(n).To(BeNumerically("<=", 2), "once for the version created, once for the version recorded")
			for i := range 5 {
				relabel(cm, fmt.Sprint(i))
				time.Sleep(200 * time.Millisecond)
			}
			Consistently(func() int { return len(logged()) }, quiet).Should(Equal(n), "the mistake is not logged again")

			e.untouched(dep, at)
			e.stays(dep, before)
		}}),

		Entry("an invalid regular expression in a reload list: reported and skipped", badCase{run: func(e *badEnv) {
			cm := createConfigMap(e.ns, "broken", map[string]string{"k": "1"})
			dep := createDeployment(e.ns, "dep", map[string]string{annotations.ConfigMapReload: "broken("})
			e.expectReported(dep, annotations.ConfigMapReload, "broken(")
			before := withRollouts(dep, stateOf(dep))

			setData(cm, "k", "2")

			e.untouched(dep, before)
			e.stays(dep, before)
		}}),

		Entry("a reload list entry that would escape its anchors: reported, and it does not track every ConfigMap", badCase{run: func(e *badEnv) {
			dep := createDeployment(e.ns, "dep", map[string]string{annotations.ConfigMapReload: "x)|(.*"})
			e.expectReported(dep, annotations.ConfigMapReload, "x)|(.*")
			e.stays(dep, withRollouts(dep, stateOf(dep)))
			// expectStillWorks changes control-cfg, which the broken entry
			// would match if it were wrapped without being checked.
		}}),

		Entry("a reload list entry of 2,000 characters: reported as too long, quoted short in the Event and the log line", badCase{run: func(e *badEnv) {
			value := "broken(" + strings.Repeat("y", 2000)
			cm := createConfigMap(e.ns, "cfg", map[string]string{"k": "1"})
			dep := createDeployment(e.ns, "dep", map[string]string{annotations.ConfigMapReload: value + ",cfg"})
			before := recorded(dep)
			Eventually(eventsFor(dep), 10*time.Second).Should(ContainElement(SatisfyAll(
				HavePrefix("InvalidAnnotation: annotation "+annotations.ConfigMapReload+`: "broken(yyy`), ContainSubstring("is longer than 512 bytes"),
				WithTransform(func(s string) int { return len(s) }, BeNumerically("<=", 512)))))
			Eventually(e.log.lines("Ignoring an invalid annotation value", e.ns, `"broken(yyy`), 10*time.Second).Should(HaveEach(
				WithTransform(func(s string) int { return len(s) }, BeNumerically("<", 1024))))
			Expect(e.log.lines(jsonString(value))()).To(BeEmpty(), "the whole value is never logged")

			setData(cm, "k", "2")
			e.stays(dep, expectRolledOnce(dep, before))
		}}),

		Entry("a reload list of 1,000 entries: the first 256 work, the rest are reported in one Event and do not roll", badCase{run: func(e *badEnv) {
			entries := make([]string, 0, 1000)
			for i := range 999 {
				entries = append(entries, fmt.Sprintf("cfg-%d", i))
			}
			entries[100] = "other-[0-9]+"
			listed := createConfigMap(e.ns, "cfg-200", map[string]string{"k": "1"})
			byPattern := createConfigMap(e.ns, "other-7", map[string]string{"k": "1"})
			beyond := createConfigMap(e.ns, "cfg-500", map[string]string{"k": "1"})
			unlisted := createConfigMap(e.ns, "cfg-1000", map[string]string{"k": "1"})
			dep := createDeployment(e.ns, "dep", map[string]string{annotations.ConfigMapReload: strings.Join(entries, ", ")})
			before := recorded(dep)
			Eventually(eventsFor(dep), 10*time.Second).Should(ConsistOf(SatisfyAll(
				HavePrefix("InvalidAnnotation: "), ContainSubstring(`"cfg-256" is beyond the first 256 entries; 743 of 999 entries skipped`))))

			setData(unlisted, "k", "2")
			setData(beyond, "k", "2")
			expectNoRollout(dep, before)
			setData(listed, "k", "2")
			after := expectRolledOnce(dep, before)
			setData(byPattern, "k", "2")
			after = expectRolledOnce(dep, after)
			e.stays(dep, after)
		}}),

		Entry("a reload list of only commas and spaces: nothing to track, nothing written, nothing reported", badCase{run: func(e *badEnv) {
			cm := createConfigMap(e.ns, "cfg", map[string]string{"k": "1"})
			dep := createDeployment(e.ns, "dep", map[string]string{annotations.ConfigMapReload: " , ,, ", annotations.SecretReload: ","}, volumeConfigMap("cfg"))
			before := withRollouts(dep, stateOf(dep))

			setData(cm, "k", "2")

			e.untouched(dep, before)
			e.stays(dep, before)
			e.checks = append(e.checks, func(g Gomega) {
				g.Expect(eventsFor(dep)()).NotTo(ContainElement(HavePrefix("InvalidAnnotation")))
			})
		}}),

		Entry("an exclude list with spaces: its entries are trimmed and excluded", badCase{run: func(e *badEnv) {
			excluded := createConfigMap(e.ns, "noisy", map[string]string{"k": "1"})
			kept := createConfigMap(e.ns, "cfg", map[string]string{"k": "1"})
			dep := createDeployment(e.ns, "dep", map[string]string{annotations.Auto: "true", annotations.ConfigMapExclude: "  noisy ,  , other  "},
				volumeConfigMap("noisy"), volumeConfigMap("cfg"))
			before := recorded(dep)

			setData(excluded, "k", "2")
			expectNoRollout(dep, before)
			setData(kept, "k", "2")
			e.stays(dep, expectRolledOnce(dep, before))
		}}),

		Entry("auto \"false\" with a reload list: the reload list wins, auto stays off", badCase{run: func(e *badEnv) {
			listed := createConfigMap(e.ns, "listed", map[string]string{"k": "1"})
			referenced := createConfigMap(e.ns, "cfg", map[string]string{"k": "1"})
			dep := createDeployment(e.ns, "dep", map[string]string{annotations.Auto: "false", annotations.ConfigMapReload: "listed"},
				volumeConfigMap("cfg"), volumeConfigMap("listed"))
			before := recorded(dep)

			setData(referenced, "k", "2")
			expectNoRollout(dep, before)
			setData(listed, "k", "2")
			e.stays(dep, expectRolledOnce(dep, before))
		}}),

		Entry("ignore \"yes\" on a ConfigMap: reported on the workload, and strict, so the ConfigMap is not ignored", badCase{run: func(e *badEnv) {
			cm := createConfigMap(e.ns, "cfg", map[string]string{"k": "1"}, map[string]string{annotations.Ignore: "yes"})
			dep := createDeployment(e.ns, "dep", auto, volumeConfigMap("cfg"))
			before := recorded(dep)
			e.expectReported(dep, annotations.Ignore, "yes")
			Expect(eventsFor(dep)()).To(ContainElement(ContainSubstring("on ConfigMap/cfg")))

			setData(cm, "k", "2")

			e.stays(dep, expectRolledOnce(dep, before))
		}}),

		Entry("match \"true\" on an object the workload does not reference, under search: no rollout", badCase{run: func(e *badEnv) {
			createConfigMap(e.ns, "used", map[string]string{"k": "1"})
			unused := createConfigMap(e.ns, "unused", map[string]string{"k": "1"}, map[string]string{annotations.Match: "true"})
			dep := createDeployment(e.ns, "dep", map[string]string{annotations.Search: "true"}, volumeConfigMap("used"))
			before := recorded(dep)

			setData(unused, "k", "2")

			e.stays(dep, before)
		}}),

		Entry("match \"yes\" on a referenced object, under search: reported on the workload, and strict, so not matched", badCase{run: func(e *badEnv) {
			cm := createConfigMap(e.ns, "cfg", map[string]string{"k": "1"}, map[string]string{annotations.Match: "yes"})
			dep := createDeployment(e.ns, "dep", map[string]string{annotations.Search: "true"}, volumeConfigMap("cfg"))
			before := recorded(dep)
			e.expectReported(dep, annotations.Match, "yes")

			setData(cm, "k", "2")

			e.stays(dep, before)
		}}),

		Entry("an invalid value on the metadata and \"true\" on the pod template: the metadata decides", badCase{run: func(e *badEnv) {
			cm := createConfigMap(e.ns, "cfg", map[string]string{"k": "1"})
			dep := createDeployment(e.ns, "dep", map[string]string{annotations.Auto: "yes"}, volumeConfigMap("cfg"))
			update(dep, func(d *appsv1.Deployment) { d.Spec.Template.Annotations = map[string]string{annotations.Auto: "true"} })
			e.expectReported(dep, annotations.Auto, "yes")
			before := withRollouts(dep, stateOf(dep))

			setData(cm, "k", "2")

			e.untouched(dep, before)
			e.stays(dep, before)
		}}),

		Entry("garbage in the ripple.dev/recorded annotation: recorded again, without a rollout", badCase{run: func(e *badEnv) {
			cm := createConfigMap(e.ns, "cfg", map[string]string{"k": "1"})
			dep := createDeployment(e.ns, "dep", auto, volumeConfigMap("cfg"))
			first := recorded(dep)
			for _, garbage := range []string{"garbage", "", "key=;at=soon", "key=x;at=1;Pod/p=1;;"} {
				update(dep, func(d *appsv1.Deployment) { d.Annotations[annotations.Recorded] = garbage })
				// Two of the garbage values start as a record does.
				Eventually(func() string { return stateOf(dep).Recorded }, 10*time.Second).Should(
					And(HavePrefix("key="), Not(Equal(garbage))), "re-recorded after %q", garbage)
			}
			Eventually(e.log.lines("the recorded state is unreadable", e.ns), 10*time.Second).Should(HaveLen(4))
			Expect(first.Rollouts()).To(BeZero())

			again := withRollouts(dep, stateOf(dep))
			setData(cm, "k", "2")
			e.stays(dep, expectRolledOnce(dep, again))
		}}),

		Entry("a record entry edited to name another API path: recorded again, and a change of the workload's ConfigMap still rolls it", badCase{run: func(e *badEnv) {
			cm := createConfigMap(e.ns, "cfg", map[string]string{"k": "1"})
			dep := createDeployment(e.ns, "dep", map[string]string{annotations.ConfigMapReload: "cfg.*"}, volumeConfigMap("cfg"))
			edited := recorded(dep).Recorded + ";ConfigMap/cfg/..=0011223344556677"
			update(dep, func(d *appsv1.Deployment) { d.Annotations[annotations.Recorded] = edited })
			Eventually(func() string { return stateOf(dep).Recorded }, 10*time.Second).ShouldNot(Equal(edited), "recorded again")

			again := withRollouts(dep, stateOf(dep))
			setData(cm, "k", "2")
			e.stays(dep, expectRolledOnce(dep, again))
		}}),
		Entry("a 253-character ConfigMap name and a 253-character Secret name", badCase{run: func(e *badEnv) {
			cmName, secretName := longName("cm-", 253), longName("s-", 253)
			cm := createConfigMap(e.ns, cmName, map[string]string{"k": "1"})
			sec := createSecret(e.ns, secretName, map[string]string{"k": "1"})
			dep := createDeployment(e.ns, "dep", auto, volumeNamed("cfg", cmName), secretVolumeNamed("creds", secretName))
			before := recorded(dep)
			Expect(before.Recorded).To(ContainSubstring("ConfigMap/" + cmName + "="))

			setData(cm, "k", "2")
			after := expectRolledOnce(dep, before)
			setSecretData(sec, "k", "2")
			after = expectRolledOnce(dep, after)

			Eventually(eventsFor(dep), 10*time.Second).Should(ContainElements(
				"Reloaded: Rolled because ConfigMap/"+cmName+" changed",
				"Reloaded: Rolled because Secret/"+secretName+" changed"))
			e.stays(dep, after)
		}}),

		Entry("a Deployment with a 253-character name", badCase{run: func(e *badEnv) {
			cm := createConfigMap(e.ns, "cfg", map[string]string{"k": "1"})
			name := longName("dep-", 253)
			dep := &appsv1.Deployment{
				ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name, Annotations: auto},
				Spec: appsv1.DeploymentSpec{
					Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "long"}},
					Template: template("long", []podMod{volumeConfigMap("cfg")}),
				},
			}
			Expect(k8s.Create(suiteCtx, dep)).To(Succeed())
			before := recorded(dep)

			setData(cm, "k", "2")

			e.stays(dep, expectRolledOnce(dep, before))
			Eventually(eventsFor(dep), 10*time.Second).Should(ContainElement("Reloaded: Rolled because ConfigMap/cfg changed"))
		}}),

		Entry("five changed 253-character names in one rollout: the Reloaded Event still fits", badCase{
			args: []string{"--debounce=2s"},
			run: func(e *badEnv) {
				var cms []*corev1.ConfigMap
				for i := range 6 {
					cms = append(cms, createConfigMap(e.ns, longName(fmt.Sprintf("long-%d-", i), 253), map[string]string{"k": "1"}))
				}
				dep := createDeployment(e.ns, "dep", map[string]string{annotations.ConfigMapReload: "long-.*"})
				before := recorded(dep)

				for _, cm := range cms {
					setData(cm, "k", "2")
				}

				e.stays(dep, expectRolledOnce(dep, before))
				Eventually(eventsFor(dep), 10*time.Second).Should(ContainElement(SatisfyAll(
					HavePrefix("Reloaded: Rolled because ConfigMap/long-0-"), HaveSuffix(" more changed"))))
			},
		}),

		Entry("63-character label key and value in --resource-label-selector, and a 63-character workload name", badCase{
			args:          []string{"--resource-label-selector=ripple.dev/" + longName("l", 63) + "=" + longName("v", 63)},
			controlLabels: map[string]string{"ripple.dev/" + longName("l", 63): longName("v", 63)},
			run: func(e *badEnv) {
				labelled := createConfigMap(e.ns, "labelled", map[string]string{"k": "1"})
				update(labelled, func(c *corev1.ConfigMap) {
					c.Labels = map[string]string{"ripple.dev/" + longName("l", 63): longName("v", 63)}
				})
				unlabelled := createConfigMap(e.ns, "unlabelled", map[string]string{"k": "1"})
				name := longName("ds-", 63)
				ds := createDaemonSet(e.ns, name, auto, volumeConfigMap("labelled"), volumeConfigMap("unlabelled"))
				before := recorded(ds)

				setData(unlabelled, "k", "2")
				expectNoRollout(ds, before)
				setData(labelled, "k", "2")
				e.stays(ds, expectRolledOnce(ds, before))
			},
		}),

		Entry("a ConfigMap of nearly 1 MiB: a change rolls once, an update with the same data does not", badCase{run: func(e *badEnv) {
			big := strings.Repeat("0123456789abcdef", (1<<20-1024)/16)
			cm := createConfigMap(e.ns, "big", map[string]string{"k": big})
			dep := createDeployment(e.ns, "dep", auto, volumeConfigMap("big"))
			before := recorded(dep)

			setData(cm, "k", "X"+big[1:])
			after := expectRolledOnce(dep, before)

			update(cm, func(c *corev1.ConfigMap) {
				c.Data["k"] = "X" + big[1:]
				c.Labels = map[string]string{"touched": "yes"}
			})
			e.stays(dep, after)
		}}),

		Entry("a ConfigMap with binaryData only", badCase{run: func(e *badEnv) {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "bin"}, BinaryData: map[string][]byte{"blob": {0, 1, 2, 0xff}}}
			Expect(k8s.Create(suiteCtx, cm)).To(Succeed())
			dep := createDeployment(e.ns, "dep", auto, volumeConfigMap("bin"))
			before := recorded(dep)

			relabel(cm, "1")
			expectNoRollout(dep, before)
			update(cm, func(c *corev1.ConfigMap) { c.BinaryData["blob"] = []byte{0, 1, 2, 0xfe} })
			e.stays(dep, expectRolledOnce(dep, before))
		}}),

		Entry("a Secret with bytes that are not UTF-8", badCase{run: func(e *badEnv) {
			sec := createSecretBytes(e.ns, "raw", corev1.SecretTypeOpaque, map[string][]byte{"k": {0xff, 0xfe, 0x00, 0xc3, 0x28}})
			dep := createDeployment(e.ns, "dep", auto, secretVolumeNamed("raw", "raw"))
			before := recorded(dep)

			setSecretBytes(sec, "k", []byte{0xff, 0xfe, 0x00, 0xc3, 0x29})

			e.stays(dep, expectRolledOnce(dep, before))
		}}),

		Entry("an immutable ConfigMap: its update is refused, its replacement under a new name is recorded without a rollout of ripple's own", badCase{run: func(e *badEnv) {
			v1 := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "cfg-v1"}, Data: map[string]string{"k": "1"}, Immutable: ptr.To(true)}
			Expect(k8s.Create(suiteCtx, v1)).To(Succeed())
			dep := createDeployment(e.ns, "dep", auto, volumeConfigMap("cfg-v1"))
			before := recorded(dep)

			v1.Data["k"] = "2"
			Expect(k8s.Update(suiteCtx, v1)).NotTo(Succeed(), "the API server refuses to change an immutable ConfigMap")
			v2 := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "cfg-v2"}, Data: map[string]string{"k": "2"}, Immutable: ptr.To(true)}
			Expect(k8s.Create(suiteCtx, v2)).To(Succeed())
			update(dep, func(d *appsv1.Deployment) { d.Spec.Template.Spec.Volumes[0].ConfigMap.Name = "cfg-v2" })

			Eventually(func() string { return stateOf(dep).Recorded }, 10*time.Second).Should(SatisfyAll(
				ContainSubstring("ConfigMap/cfg-v2="), Not(ContainSubstring("ConfigMap/cfg-v1="))))
			e.checks = append(e.checks, func(g Gomega) {
				g.Expect(stateOf(dep).Digest).To(Equal(before.Digest), "ripple adds no rollout to the user's own")
			})
		}}),

		Entry("a workload referencing a missing ConfigMap: recorded, no rollout until the ConfigMap exists and changes", badCase{run: func(e *badEnv) {
			dep := createDeployment(e.ns, "dep", auto, envFromConfigMap("absent"))
			before := recorded(dep)

			cm := createConfigMap(e.ns, "absent", map[string]string{"k": "1"})
			Eventually(func() string { return stateOf(dep).Recorded }, 10*time.Second).Should(ContainSubstring("ConfigMap/absent="))
			expectNoRollout(dep, before)

			setData(cm, "k", "2")
			e.stays(dep, expectRolledOnce(dep, before))
		}}),

		Entry("a workload referencing a missing optional Secret: recorded, no rollout until the Secret exists and changes", badCase{run: func(e *badEnv) {
			dep := createDeployment(e.ns, "dep", auto, func(s *corev1.PodSpec) {
				s.Volumes = append(s.Volumes, corev1.Volume{Name: "creds", VolumeSource: corev1.VolumeSource{
					Secret: &corev1.SecretVolumeSource{SecretName: "absent", Optional: ptr.To(true)}}})
				s.Containers[0].Env = append(s.Containers[0].Env, corev1.EnvVar{Name: "A", ValueFrom: &corev1.EnvVarSource{
					ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "also-absent"}, Key: "k", Optional: ptr.To(true)}}})
			})
			before := recorded(dep)

			sec := createSecret(e.ns, "absent", map[string]string{"k": "1"})
			Eventually(func() string { return stateOf(dep).Recorded }, 10*time.Second).Should(ContainSubstring("Secret/absent="))
			expectNoRollout(dep, before)

			setSecretData(sec, "k", "2")
			e.stays(dep, expectRolledOnce(dep, before))
		}}),

		Entry("an auto workload whose containers reference nothing: unrelated changes do not roll it", badCase{run: func(e *badEnv) {
			cm := createConfigMap(e.ns, "cfg", map[string]string{"k": "1"})
			sec := createSecret(e.ns, "creds", map[string]string{"k": "1"})
			dep := createDeployment(e.ns, "dep", auto)
			before := recorded(dep)

			setData(cm, "k", "2")
			setSecretData(sec, "k", "2")

			e.stays(dep, before)
		}}),

		Entry("the same ConfigMap referenced by a volume, env, envFrom, an init container and a projection: one rollout", badCase{run: func(e *badEnv) {
			cm := createConfigMap(e.ns, "cfg", map[string]string{"k": "1"})
			createSecret(e.ns, "creds", map[string]string{"k": "1"})
			dep := createDeployment(e.ns, "dep", auto, volumeConfigMap("cfg"), envConfigMapKey("cfg"), envFromConfigMap("cfg"),
				initContainerEnvFrom("cfg"), projected("cfg", "creds"))
			before := recorded(dep)

			setData(cm, "k", "2")

			e.stays(dep, expectRolledOnce(dep, before))
			Eventually(eventsFor(dep), 10*time.Second).Should(ContainElement("Reloaded: Rolled because ConfigMap/cfg changed"))
		}}),

		Entry("duplicate references: two volumes of one Secret and a reload list naming it too", badCase{run: func(e *badEnv) {
			sec := createSecret(e.ns, "creds", map[string]string{"k": "1"})
			dep := createDeployment(e.ns, "dep", map[string]string{annotations.Auto: "true", annotations.SecretReload: "creds,creds, creds"},
				secretVolumeNamed("a", "creds"), secretVolumeNamed("b", "creds"), envSecretKey("creds"), envFromSecret("creds"))
			before := recorded(dep)
			Expect(strings.Count(before.Recorded, "Secret/creds=")).To(Equal(1))

			setSecretData(sec, "k", "2")

			e.stays(dep, expectRolledOnce(dep, before))
		}}),

		Entry("a kubernetes.io/tls Secret", badCase{run: func(e *badEnv) {
			sec := createSecretBytes(e.ns, "tls", corev1.SecretTypeTLS, map[string][]byte{
				corev1.TLSCertKey:       []byte("-----BEGIN CERTIFICATE-----\nnot really\n-----END CERTIFICATE-----\n"),
				corev1.TLSPrivateKeyKey: []byte("-----BEGIN PRIVATE KEY-----\nnot really\n-----END PRIVATE KEY-----\n"),
			})
			dep := createDeployment(e.ns, "dep", auto, secretVolumeNamed("tls", "tls"))
			before := recorded(dep)

			setSecretBytes(sec, corev1.TLSPrivateKeyKey, []byte("-----BEGIN PRIVATE KEY-----\nrotated\n-----END PRIVATE KEY-----\n"))

			e.stays(dep, expectRolledOnce(dep, before))
		}}),

		Entry("a kubernetes.io/dockerconfigjson Secret: as imagePullSecrets it is not a reference, on a reload list it rolls", badCase{run: func(e *badEnv) {
			sec := createSecretBytes(e.ns, "pull", corev1.SecretTypeDockerConfigJson, map[string][]byte{
				corev1.DockerConfigJsonKey: []byte(`{"auths":{"example.invalid":{"auth":"dTpw"}}}`),
			})
			pullOnly := createDeployment(e.ns, "pull-only", auto, func(s *corev1.PodSpec) {
				s.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "pull"}}
			})
			listed := createDeployment(e.ns, "listed", map[string]string{annotations.SecretReload: "pull"}, func(s *corev1.PodSpec) {
				s.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "pull"}}
			})
			pullOnlyBefore, listedBefore := recorded(pullOnly), recorded(listed)

			setSecretBytes(sec, corev1.DockerConfigJsonKey, []byte(`{"auths":{"example.invalid":{"auth":"dTpx"}}}`))

			e.stays(listed, expectRolledOnce(listed, listedBefore))
			e.stays(pullOnly, pullOnlyBefore)
		}}),

		Entry("a ConfigMap with 1,000 keys: one changed key rolls once, rewriting the same keys does not", badCase{run: func(e *badEnv) {
			data := map[string]string{}
			for i := range 1000 {
				data[fmt.Sprintf("key-%04d", i)] = fmt.Sprintf("value-%d", i)
			}
			cm := createConfigMap(e.ns, "many", data)
			dep := createDeployment(e.ns, "dep", auto, volumeConfigMap("many"))
			before := recorded(dep)

			setData(cm, "key-0500", "changed")
			after := expectRolledOnce(dep, before)

			relabel(cm, "yes")
			e.stays(dep, after)
		}}),

		Entry("keys with empty values: adding one, then filling it, each roll once", badCase{run: func(e *badEnv) {
			cm := createConfigMap(e.ns, "cfg", map[string]string{"a": "1"})
			dep := createDeployment(e.ns, "dep", auto, volumeConfigMap("cfg"))
			before := recorded(dep)

			setData(cm, "b", "")
			after := expectRolledOnce(dep, before)
			// A key must be a valid file name; the API server refuses "".
			empty := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "empty-key"}, Data: map[string]string{"": "x"}}
			Expect(apierrors.IsInvalid(k8s.Create(suiteCtx, empty))).To(BeTrue())
			setData(cm, "b", "filled")
			e.stays(dep, expectRolledOnce(dep, after))
		}}),

		Entry("unicode in data: values roll, keys are refused by the API server", badCase{run: func(e *badEnv) {
			cm := createConfigMap(e.ns, "cfg", map[string]string{"greeting": "héllo 🌊 \u200b\u0000"})
			dep := createDeployment(e.ns, "dep", auto, volumeConfigMap("cfg"))
			before := recorded(dep)

			bad := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "unicode-key"}, Data: map[string]string{"clé-🌊": "v"}}
			Expect(apierrors.IsInvalid(k8s.Create(suiteCtx, bad))).To(BeTrue())
			setData(cm, "greeting", "héllo 🌊 \u200b\u0001")

			e.stays(dep, expectRolledOnce(dep, before))
		}}),

		Entry("a user-written digest annotation on a ConfigMap: ripple computes its own from the data", badCase{run: func(e *badEnv) {
			const forgeable = "ripple.dev/data-digest"
			cm := createConfigMap(e.ns, "cfg", map[string]string{"k": "1"}, map[string]string{forgeable: "forged"})
			dep := createDeployment(e.ns, "dep", auto, volumeConfigMap("cfg"))
			before := recorded(dep)

			update(cm, func(c *corev1.ConfigMap) { c.Annotations[forgeable] = "forged again" })
			expectNoRollout(dep, before)
			setData(cm, "k", "2")
			e.stays(dep, expectRolledOnce(dep, before))
		}}),

		Entry("a workload deleted while its change is queued", badCase{
			args: []string{"--debounce=1s"},
			run: func(e *badEnv) {
				cm := createConfigMap(e.ns, "cfg", map[string]string{"k": "1"})
				dep := createDeployment(e.ns, "dep", auto, volumeConfigMap("cfg"))
				recorded(dep)

				setData(cm, "k", "2")
				Expect(k8s.Delete(suiteCtx, dep)).To(Succeed())

				// Deleted within the debounce window, so the queued reconcile
				// finds nothing. expectStillWorks changes the control
				// ConfigMap next: the control workload's reconcile is queued
				// behind this one on the same queue, so once the control has
				// rolled, this one has run, and the log shows whether it
				// failed.
			},
		}),

		Entry("its namespace deleted: ripple keeps running without an error loop", badCase{run: func(e *badEnv) {
			doomed := newNamespace(nil)
			cm := createConfigMap(doomed, "cfg", map[string]string{"k": "1"})
			dep := createDeployment(doomed, "dep", auto, volumeConfigMap("cfg"))
			recorded(dep)

			ns := &corev1.Namespace{}
			Expect(k8s.Get(suiteCtx, client.ObjectKey{Name: doomed}, ns)).To(Succeed())
			Expect(k8s.Delete(suiteCtx, ns)).To(Succeed())
			// No namespace controller runs here: do its work, with a change
			// in flight, then finalize the namespace.
			setData(cm, "k", "2")
			Expect(k8s.DeleteAllOf(suiteCtx, &appsv1.Deployment{}, client.InNamespace(doomed))).To(Succeed())
			Expect(k8s.DeleteAllOf(suiteCtx, &corev1.ConfigMap{}, client.InNamespace(doomed))).To(Succeed())
			Expect(k8s.Get(suiteCtx, client.ObjectKey{Name: doomed}, ns)).To(Succeed())
			ns.Spec.Finalizers = nil
			_, err := clientset.CoreV1().Namespaces().Finalize(suiteCtx, ns, metav1.UpdateOptions{})
			Expect(err).NotTo(HaveOccurred())
			Eventually(func() bool {
				return apierrors.IsNotFound(k8s.Get(suiteCtx, client.ObjectKey{Name: doomed}, &corev1.Namespace{}))
			}, 10*time.Second).Should(BeTrue())

			e.checks = append(e.checks, func(g Gomega) {
				g.Expect(e.log.lines("Reconciler error", doomed)()).To(BeEmpty())
			})
		}}),

		Entry("bad flag values: each error names its flag, and the running ripple is unaffected", badCase{run: func(e *badEnv) {
			for flag, arg := range map[string]string{
				"--log-level":               "--log-level=loud",
				"--log-format":              "--log-format=xml",
				"--debounce":                "--debounce=-1s",
				"--resources-to-ignore":     "--resources-to-ignore=pods",
				"--namespace-selector":      "--namespace-selector=team in (a",
				"--resource-label-selector": "--resource-label-selector=!!",
				"--workers":                 "--workers=0",
				"--ignored-workload-types":  "--ignored-workload-types=replicasets",
				"--hmac-key-secret":         "--hmac-key-secret=a/b/c",
				"--auto-annotation":         "--auto-annotation=",
				"--kube-api-qps":            "--kube-api-qps=0",
			} {
				err := startRippleErr(arg)
				Expect(err).To(MatchError(ContainSubstring(flag)), "%s", arg)
			}
			err := startRippleErr("--debounce=fast")
			Expect(err).To(MatchError(SatisfyAll(ContainSubstring("debounce"), ContainSubstring("fast"))))
		}}),
	)
})
