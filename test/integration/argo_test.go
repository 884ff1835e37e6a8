package integration

import (
	"context"
	"maps"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ripple-controller/ripple/internal/annotations"
	"github.com/ripple-controller/ripple/internal/workload"
)

// argo is the flag that turns Argo Rollouts on, as Reloader's chart passes it.
const argo = "--is-Argo-Rollouts=true"

// No Argo controller runs here, so a Rollout changes only when ripple or
// the spec writes to it: a change of its pod template is a rollout Argo
// would make, a change of spec.restartAt a restart of its pods.

func rolloutGVK(kind string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(workload.ArgoGroupVersion.WithKind(kind))
	return u
}

// newArgoNamespace is newNamespace that also deletes its Rollouts, which
// emptyAndDelete does not know.
func newArgoNamespace() string {
	GinkgoHelper()
	installRolloutCRD()
	ns := newNamespace(nil)
	DeferCleanup(func() {
		if rolloutCRD != nil {
			_ = k8s.DeleteAllOf(context.Background(), rolloutGVK("Rollout"), client.InNamespace(ns))
		}
	})
	return ns
}

func toMap(v any) map[string]any {
	GinkgoHelper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(v)
	Expect(err).NotTo(HaveOccurred())
	return m
}

// createRollout creates a canary Rollout whose pod template uses what mods
// add, with ann on its metadata and tmplAnn on its pod template.
func createRollout(ns, name string, ann, tmplAnn map[string]string, mods ...podMod) *unstructured.Unstructured {
	GinkgoHelper()
	tmpl := template(name, mods)
	tmpl.Annotations = maps.Clone(tmplAnn)
	return createRolloutWith(ns, name, ann, map[string]any{"template": toMap(&tmpl)})
}

// createRolloutRef creates a Rollout whose pods are made from Deployment
// deploy's pod template.
func createRolloutRef(ns, name, deploy string, ann map[string]string) *unstructured.Unstructured {
	GinkgoHelper()
	return createRolloutWith(ns, name, ann, map[string]any{
		"workloadRef": map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": deploy},
	})
}

func createRolloutWith(ns, name string, ann map[string]string, spec map[string]any) *unstructured.Unstructured {
	GinkgoHelper()
	ro := rolloutGVK("Rollout")
	ro.SetNamespace(ns)
	ro.SetName(name)
	ro.SetAnnotations(maps.Clone(ann))
	spec["replicas"] = int64(1)
	spec["selector"] = map[string]any{"matchLabels": map[string]any{"app": name}}
	spec["strategy"] = map[string]any{"canary": map[string]any{"steps": []any{map[string]any{"setWeight": int64(100)}}}}
	ro.Object["spec"] = spec
	Expect(k8s.Create(suiteCtx, ro)).To(Succeed())
	return ro
}

// createSourceDeployment creates a Deployment that only holds a pod
// template for a Rollout: not annotated, and scaled to zero.
func createSourceDeployment(ns, name string, mods ...podMod) *appsv1.Deployment {
	GinkgoHelper()
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](0),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: template(name, mods),
		},
	}
	Expect(k8s.Create(suiteCtx, d)).To(Succeed())
	return d
}

// rolloutState is what a user sees of a Rollout.
type rolloutState struct {
	ResourceVersion, Recorded, Digest, RestartAt string
	// Rollouts counts the changes of the pod template since this state,
	// Restarts those of spec.restartAt.
	Rollouts, Restarts func() int
}

func rolloutTemplate(u *unstructured.Unstructured) map[string]any {
	t, _, _ := unstructured.NestedMap(u.Object, "spec", "template")
	return t
}

func rolloutRestartAt(u *unstructured.Unstructured) string {
	s, _, _ := unstructured.NestedString(u.Object, "spec", "restartAt")
	return s
}

func rolloutStateOf(ro *unstructured.Unstructured) rolloutState {
	GinkgoHelper()
	Expect(k8s.Get(suiteCtx, client.ObjectKeyFromObject(ro), ro)).To(Succeed())
	digest, _, _ := unstructured.NestedString(ro.Object, "spec", "template", "metadata", "annotations", annotations.ConfigDigest)
	return rolloutState{
		ResourceVersion: ro.GetResourceVersion(),
		Recorded:        ro.GetAnnotations()[annotations.Recorded],
		Digest:          digest,
		RestartAt:       rolloutRestartAt(ro),
	}
}

// watchRollout counts, through a watch from s, every change of the
// Rollout's pod template and of its spec.restartAt.
func watchRollout(ro *unstructured.Unstructured, s rolloutState) rolloutState {
	GinkgoHelper()
	ctx, cancel := context.WithCancel(suiteCtx)
	DeferCleanup(cancel)
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(workload.ArgoGroupVersion.WithKind("RolloutList"))
	w, err := watcher.Watch(ctx, list, client.InNamespace(ro.GetNamespace()),
		client.MatchingFields{"metadata.name": ro.GetName()},
		&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: s.ResourceVersion}})
	Expect(err).NotTo(HaveOccurred())
	var templates, restarts atomic.Int64
	start := ro.DeepCopy()
	Expect(k8s.Get(suiteCtx, client.ObjectKeyFromObject(start), start)).To(Succeed())
	go func() {
		defer GinkgoRecover()
		lastT, lastR := rolloutTemplate(start), s.RestartAt
		for ev := range w.ResultChan() {
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok {
				continue
			}
			if t := rolloutTemplate(u); !equality.Semantic.DeepEqual(t, lastT) {
				templates.Add(1)
				lastT = t
			}
			if r := rolloutRestartAt(u); r != lastR {
				restarts.Add(1)
				lastR = r
			}
		}
	}()
	s.Rollouts = func() int { return int(templates.Load()) }
	s.Restarts = func() int { return int(restarts.Load()) }
	return s
}

// rolloutRecorded waits until ripple has recorded the Rollout, and counts
// its rollouts and restarts from then on.
func rolloutRecorded(ro *unstructured.Unstructured) rolloutState {
	GinkgoHelper()
	var s rolloutState
	Eventually(func() string { s = rolloutStateOf(ro); return s.Recorded }, 30*time.Second).ShouldNot(BeEmpty(),
		"ripple records the config of Rollout %s on first sight", ro.GetName())
	return watchRollout(ro, s)
}

// expectRolloutRolledOnce waits for exactly one change of the pod template,
// with a new digest, and no restart.
func expectRolloutRolledOnce(ro *unstructured.Unstructured, before rolloutState) rolloutState {
	GinkgoHelper()
	Eventually(before.Rollouts, 20*time.Second).Should(Equal(1), "Rollout %s rolls", ro.GetName())
	Consistently(before.Rollouts, quiet).Should(Equal(1), "Rollout %s rolls only once", ro.GetName())
	Expect(before.Restarts()).To(BeZero(), "Rollout %s rolls through its template, not a restart", ro.GetName())
	s := rolloutStateOf(ro)
	Expect(s.Digest).NotTo(Equal(before.Digest))
	return watchRollout(ro, s)
}

// expectRestartedOnce waits for exactly one new spec.restartAt, no earlier
// than changedAt, and no change of the pod template.
func expectRestartedOnce(ro *unstructured.Unstructured, before rolloutState, changedAt time.Time) rolloutState {
	GinkgoHelper()
	Eventually(before.Restarts, 20*time.Second).Should(Equal(1), "Rollout %s restarts", ro.GetName())
	Consistently(before.Restarts, quiet).Should(Equal(1), "Rollout %s restarts only once", ro.GetName())
	Expect(before.Rollouts()).To(BeZero(), "Rollout %s restarts without a change of its pod template", ro.GetName())
	s := rolloutStateOf(ro)
	at, err := time.Parse(time.RFC3339, s.RestartAt)
	Expect(err).NotTo(HaveOccurred(), "spec.restartAt is RFC 3339")
	Expect(at).To(BeTemporally(">", changedAt.Add(-time.Second)), "pods made before the change are restarted")
	return watchRollout(ro, s)
}

// expectRolloutUntouched asserts nothing at all is written to the Rollout.
func expectRolloutUntouched(ro *unstructured.Unstructured, before rolloutState) {
	GinkgoHelper()
	Consistently(func() string { return rolloutStateOf(ro).ResourceVersion }, quiet).Should(Equal(before.ResourceVersion),
		"nothing is written to Rollout %s", ro.GetName())
}

var restart = map[string]string{annotations.Auto: "true", annotations.RolloutStrategy: "restart"}

// setRolloutAnnotation writes one annotation of the Rollout, or removes it
// when value is empty, as a user or a GitOps tool would.
func setRolloutAnnotation(ro *unstructured.Unstructured, key, value string) {
	GinkgoHelper()
	Expect(k8s.Get(suiteCtx, client.ObjectKeyFromObject(ro), ro)).To(Succeed())
	ann := ro.GetAnnotations()
	if value == "" {
		delete(ann, key)
	} else {
		ann[key] = value
	}
	ro.SetAnnotations(ann)
	Expect(k8s.Update(suiteCtx, ro)).To(Succeed())
}

var _ = Describe("Argo Rollouts", func() {
	var ns string
	BeforeEach(func() { ns = newArgoNamespace() })

	It("records a Rollout on first sight without rolling or restarting it, with either strategy", func() {
		createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		viaTemplate := createRollout(ns, "template", auto, nil, envFromConfigMap("cfg"))
		viaRestart := createRollout(ns, "restart", restart, nil, envFromConfigMap("cfg"))
		templateBefore, restartBefore := watchRollout(viaTemplate, rolloutStateOf(viaTemplate)), watchRollout(viaRestart, rolloutStateOf(viaRestart))
		startRipple(argo)

		for _, ro := range []*unstructured.Unstructured{viaTemplate, viaRestart} {
			Eventually(func() string { return rolloutStateOf(ro).Recorded }, 30*time.Second).Should(ContainSubstring("ConfigMap/cfg="))
		}
		Consistently(func() []int {
			return []int{templateBefore.Rollouts(), templateBefore.Restarts(), restartBefore.Rollouts(), restartBefore.Restarts()}
		}, quiet).Should(Equal([]int{0, 0, 0, 0}))
	})

	It("rolls a Rollout through its pod template once per change by default, never touching restartAt", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		ro := createRollout(ns, "web", auto, nil, volumeConfigMap("cfg"))
		startRipple(argo)
		before := rolloutRecorded(ro)

		setData(cm, "k", "2")
		after := expectRolloutRolledOnce(ro, before)
		Expect(after.RestartAt).To(BeEmpty())

		setData(cm, "k", "3")
		expectRolloutRolledOnce(ro, after)
		Eventually(eventsFor(ro), 10*time.Second).Should(ContainElement("Reloaded: Rolled because ConfigMap/cfg changed"))
	})

	It("sets Reloader's variable on a Rollout's pod template under the env-vars strategy (Reloader's ArgoRollout case)", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		ro := createRollout(ns, "web", map[string]string{annotations.ConfigMapReload: "cfg"}, nil, envFromConfigMap("cfg"))
		startRipple(argo, "--reload-strategy=env-vars")
		before := rolloutRecorded(ro)

		setData(cm, "k", "2")

		Eventually(before.Rollouts, 20*time.Second).Should(Equal(1))
		Consistently(before.Rollouts, quiet).Should(Equal(1))
		rolloutStateOf(ro)
		containers, _, _ := unstructured.NestedSlice(rolloutTemplate(ro), "spec", "containers")
		Expect(containers).To(HaveLen(1))
		env, _, _ := unstructured.NestedSlice(containers[0].(map[string]any), "env")
		Expect(env).To(ContainElement(HaveKeyWithValue("name", "STAKATER_CFG_CONFIGMAP")))
	})

	// A restart changes no pod template: the Rollout's event of it passes
	// no predicate, and a reconcile before ripple's cache holds it reads
	// the record it replaced.
	It("restarts a Rollout again for a change set back before its restart reached ripple's cache", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		ro := createRollout(ns, "web", restart, nil, envFromConfigMap("cfg"))
		slow := lagging("/rollouts")
		startRipple(argo)
		before := rolloutRecorded(ro)
		slow.delay.Store(int64(time.Second))

		setData(cm, "k", "2")
		Eventually(before.Restarts, 20*time.Second).Should(Equal(1))
		setData(cm, "k", "1")
		Eventually(before.Restarts, 20*time.Second).Should(Equal(2), "the Rollout restarts for the data set back")
	})

	It("restarts a Rollout with rollout-strategy restart through spec.restartAt once per change, never touching its pod template", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		ro := createRollout(ns, "web", restart, nil, envFromConfigMap("cfg"))
		startRipple(argo)
		before := rolloutRecorded(ro)

		changedAt := time.Now()
		setData(cm, "k", "2")
		after := expectRestartedOnce(ro, before, changedAt)
		Expect(after.Digest).To(BeEmpty(), "the pod template is never stamped")
		Expect(after.Recorded).NotTo(Equal(before.Recorded), "the record moved with the restart")

		changedAt = time.Now()
		setData(cm, "k", "3")
		expectRestartedOnce(ro, after, changedAt)
	})

	It("says when its restart replaces one scheduled for later (kubectl argo rollouts restart --in)", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		ro := createRollout(ns, "web", restart, nil, envFromConfigMap("cfg"))
		later := scheduleRestartInAnHour(ro)
		startRipple(argo)
		before := rolloutRecorded(ro)

		changedAt := time.Now()
		setData(cm, "k", "2")

		expectRestartedOnce(ro, before, changedAt)
		Eventually(eventsFor(ro), 10*time.Second).Should(ContainElement("RestartReplaced: The restart scheduled for " + later +
			" is replaced by this one: a Rollout holds one restartAt"))
	})

	It("holds a restart within the Rollout's minimum interval since its last restart", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		ann := maps.Clone(restart)
		ann[annotations.MinRolloutInterval] = "8s"
		ro := createRollout(ns, "web", ann, nil, envFromConfigMap("cfg"))
		startRipple(argo)
		before := rolloutRecorded(ro)
		changedAt := time.Now()
		setData(cm, "k", "2")
		after := expectRestartedOnce(ro, before, changedAt)

		setData(cm, "k", "3")

		Eventually(eventsFor(ro), 10*time.Second).Should(ContainElement(ContainSubstring("less than 8s ago")))
		Expect(after.Restarts()).To(BeZero(), "held")
		Eventually(after.Restarts, 15*time.Second).Should(Equal(1), "restarted once the interval ends")
	})

	It("reports an unknown rollout-strategy and rolls through the pod template, Reloader's default", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		ro := createRollout(ns, "web", map[string]string{annotations.Auto: "true", annotations.RolloutStrategy: "Restart"}, nil, envFromConfigMap("cfg"))
		startRipple(argo)
		before := rolloutRecorded(ro)
		Eventually(eventsFor(ro), 10*time.Second).Should(ContainElement(SatisfyAll(
			HavePrefix("InvalidAnnotation: "), ContainSubstring(annotations.RolloutStrategy), ContainSubstring(`"rollout" applies`))))

		setData(cm, "k", "2")
		expectRolloutRolledOnce(ro, before)
	})

	It("neither loses nor repeats a restart across a restart of ripple, and restarts once for a change made while it was down", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		ro := createRollout(ns, "web", restart, nil, envFromConfigMap("cfg"))
		first := startRipple(argo)
		before := rolloutRecorded(ro)

		By("stopping ripple right after its restart landed, and starting another")
		changedAt := time.Now()
		setData(cm, "k", "2")
		Eventually(before.Restarts, 20*time.Second).Should(Equal(1))
		first.stop()
		second := startRipple(argo)
		Consistently(before.Restarts, quiet).Should(Equal(1), "the new instance finds the restart recorded and does not repeat it")
		after := expectRestartedOnce(ro, before, changedAt)

		By("changing the ConfigMap while ripple is down")
		second.stop()
		changedAt = time.Now()
		setData(cm, "k", "3")
		Consistently(after.Restarts, quiet).Should(BeZero())
		startRipple(argo)
		expectRestartedOnce(ro, after, changedAt)
	})

	// A restart leaves the pod template's stamp as it was: the stamp on the
	// Rollout's metadata says what its pods run since.
	It("does not restart a Rollout again when a GitOps tool writes back the record it held before a restart", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		ro := createRollout(ns, "web", restart, nil, envFromConfigMap("cfg"))
		first := startRipple(argo)
		before := rolloutRecorded(ro)
		waitServerPast(ns, recordedAt(state{Recorded: before.Recorded})+2)
		changedAt := time.Now()
		setData(cm, "k", "2")
		after := expectRestartedOnce(ro, before, changedAt)
		waitServerPast(ns, recordedAt(state{Recorded: after.Recorded})+2)
		first.stop()

		setRolloutAnnotation(ro, annotations.Recorded, before.Recorded)
		written := watchRollout(ro, rolloutStateOf(ro))
		startRipple(argo)

		Eventually(func() string { return rolloutStateOf(ro).Recorded }, 20*time.Second).ShouldNot(Equal(before.Recorded), "recorded again")
		Consistently(written.Restarts, quiet).Should(BeZero(), "its pods were restarted with this config already")
	})

	Context("after a rollout through the pod template, then a restart", func() {
		var cm *corev1.ConfigMap
		var ro *unstructured.Unstructured
		var first, restarted rolloutState
		BeforeEach(func() {
			cm = createConfigMap(ns, "cfg", map[string]string{"k": "1"})
			ro = createRollout(ns, "web", auto, nil, envFromConfigMap("cfg"))
			startRipple(argo)
			first = rolloutRecorded(ro)
			waitServerPast(ns, recordedAt(state{Recorded: first.Recorded})+2)
			setData(cm, "k", "2")
			rolled := expectRolloutRolledOnce(ro, first)
			waitServerPast(ns, recordedAt(state{Recorded: rolled.Recorded})+2)
			setRolloutAnnotation(ro, annotations.RolloutStrategy, "restart")
			switched := watchRollout(ro, rolloutStateOf(ro))
			changedAt := time.Now()
			setData(cm, "k", "3")
			restarted = expectRestartedOnce(ro, switched, changedAt)
			waitServerPast(ns, recordedAt(state{Recorded: restarted.Recorded})+2)
		})

		It("does not restart a Rollout whose record is lost", func() {
			setRolloutAnnotation(ro, annotations.Recorded, "")
			lost := watchRollout(ro, rolloutStateOf(ro))

			Eventually(func() string { return rolloutStateOf(ro).Recorded }, 20*time.Second).ShouldNot(BeEmpty(), "recorded again")
			Consistently(lost.Restarts, quiet).Should(BeZero(), "its pods were restarted with this config already")
			Expect(lost.Rollouts()).To(BeZero())
		})

		It("restarts a Rollout whose config goes back to what its template's stamp names, with the first record written back", func() {
			setRolloutAnnotation(ro, annotations.Recorded, first.Recorded)
			written := watchRollout(ro, rolloutStateOf(ro))
			setData(cm, "k", "2")

			Eventually(written.Restarts, 20*time.Second).Should(Equal(1), "its pods run k=3, and the config is k=2 again")
		})
	})

	It("restarts a Rollout with workloadRef when a ConfigMap only the referenced Deployment's template uses changes", func() {
		cm := createConfigMap(ns, "only-in-deployment", map[string]string{"k": "1"})
		src := createSourceDeployment(ns, "web-template", volumeConfigMap("only-in-deployment"))
		ro := createRolloutRef(ns, "web", "web-template", auto)
		startRipple(argo)
		before := rolloutRecorded(ro)
		Expect(before.Recorded).To(ContainSubstring("ConfigMap/only-in-deployment="))
		srcBefore := withRollouts(src, stateOf(src))

		changedAt := time.Now()
		setData(cm, "k", "2")
		expectRestartedOnce(ro, before, changedAt)
		expectNoWrite(src, srcBefore)
	})

	It("follows a change of the referenced Deployment's template to another ConfigMap", func() {
		oldCM := createConfigMap(ns, "old", map[string]string{"k": "1"})
		newCM := createConfigMap(ns, "new", map[string]string{"k": "1"})
		src := createSourceDeployment(ns, "web-template", envFromConfigMap("old"))
		ro := createRolloutRef(ns, "web", "web-template", auto)
		startRipple(argo)
		before := rolloutRecorded(ro)

		update(src, func(d *appsv1.Deployment) {
			d.Spec.Template = template("web-template", []podMod{envFromConfigMap("new")})
		})
		Eventually(func() string { return rolloutStateOf(ro).Recorded }, 20*time.Second).Should(SatisfyAll(
			ContainSubstring("ConfigMap/new="), Not(ContainSubstring("ConfigMap/old="))))
		Expect(before.Restarts()).To(BeZero(), "the template change is Argo's to roll out, not a config change")

		setData(oldCM, "k", "2")
		Consistently(before.Restarts, quiet).Should(BeZero(), "a ConfigMap the template no longer uses restarts nothing")

		changedAt := time.Now()
		setData(newCM, "k", "2")
		expectRestartedOnce(ro, before, changedAt)
	})

	It("records a Rollout whose referenced Deployment is created after it, and then restarts it for a change", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		ro := createRolloutRef(ns, "web", "web-template", auto)
		startRipple(argo)
		Consistently(func() string { return rolloutStateOf(ro).Recorded }, quiet).Should(BeEmpty(),
			"nothing is recorded while the template is missing")

		createSourceDeployment(ns, "web-template", envFromConfigMap("cfg"))
		before := rolloutRecorded(ro)
		Expect(before.Recorded).To(ContainSubstring("ConfigMap/cfg="))

		changedAt := time.Now()
		setData(cm, "k", "2")
		expectRestartedOnce(ro, before, changedAt)
	})

	It("reports a workloadRef to a kind it cannot follow, and writes nothing", func() {
		createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		ro := createRolloutWith(ns, "web", auto, map[string]any{
			"workloadRef": map[string]any{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-rs"},
		})
		before := rolloutStateOf(ro)
		startRipple(argo)
		Eventually(eventsFor(ro), 10*time.Second).Should(ContainElement(SatisfyAll(
			HavePrefix("ReloadSkipped: "), ContainSubstring("ReplicaSet"))))
		expectRolloutUntouched(ro, before)
	})

	It("leaves Rollouts alone without --is-Argo-Rollouts, and still rolls Deployments", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		ro := createRollout(ns, "web", auto, nil, envFromConfigMap("cfg"))
		dep := createDeployment(ns, "dep", auto, envFromConfigMap("cfg"))
		r := startRipple("--is-Argo-Rollouts=false")
		depBefore := recorded(dep)
		roBefore := rolloutStateOf(ro)

		setData(cm, "k", "2")
		expectRolledOnce(dep, depBefore)
		expectRolloutUntouched(ro, roBefore)
		Expect(string(r.logs.Contents())).NotTo(ContainSubstring(`"controllerKind":"Rollout"`), "no watch of Rollouts")
	})

	It("leaves Rollouts alone with --ignored-workload-types=rollouts, and still rolls Deployments", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		ro := createRollout(ns, "web", auto, nil, envFromConfigMap("cfg"))
		dep := createDeployment(ns, "dep", auto, envFromConfigMap("cfg"))
		r := startRipple(argo, "--ignored-workload-types=rollouts")
		depBefore := recorded(dep)
		roBefore := rolloutStateOf(ro)

		setData(cm, "k", "2")
		expectRolledOnce(dep, depBefore)
		expectRolloutUntouched(ro, roBefore)
		Expect(string(r.logs.Contents())).NotTo(ContainSubstring(`"controllerKind":"Rollout"`), "no watch of Rollouts")
	})

	It("rolls Rollouts with --ignored-workload-types=deployments, reading the referenced Deployment all the same", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		createSourceDeployment(ns, "web-template", envFromConfigMap("cfg"))
		ro := createRolloutRef(ns, "web", "web-template", auto)
		dep := createDeployment(ns, "dep", auto, envFromConfigMap("cfg"))
		startRipple(argo, "--ignored-workload-types=deployments")
		before := rolloutRecorded(ro)
		depBefore := stateOf(dep)

		changedAt := time.Now()
		setData(cm, "k", "2")
		expectRestartedOnce(ro, before, changedAt)
		expectNoWrite(dep, depBefore)
	})
})

var _ = Describe("Argo Rollouts turned on where the Rollout CRD is not installed", Ordered, func() {
	BeforeAll(func() {
		uninstallRolloutCRD()
		DeferCleanup(installRolloutCRD)
	})

	It("start ripple, which says so, becomes ready and rolls Deployments", func() {
		ns := newNamespace(nil)
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", auto, envFromConfigMap("cfg"))
		probe := freeAddress()
		r := startRipple(argo, "--health-probe-bind-address="+probe)
		Eventually(httpGet("http://"+probe+"/readyz"), 20*time.Second).Should(HavePrefix("200"))
		Expect(string(r.logs.Contents())).To(SatisfyAll(
			ContainSubstring("Not rolling a workload kind the cluster does not serve"), ContainSubstring(`"kind":"Rollout"`)))
		before := recorded(dep)

		setData(cm, "k", "2")
		expectRolledOnce(dep, before)
		Expect(string(r.logs.Contents())).NotTo(ContainSubstring(`"controllerKind":"Rollout"`), "no controller waits for Rollouts")
	})
})

// Reloader's end-to-end cases for Argo Rollouts (its test/e2e/core
// workloads table, the ArgoRollout entries of the annotations strategy),
// replayed on a Rollout: each change rolls it once, or none does.
var _ = Describe("Reloader's workload cases, on an Argo Rollout", func() {
	type change func(ns string)
	cmData := func(name string) change {
		return func(ns string) {
			setData(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}, "k", time.Now().String())
		}
	}
	secretData := func(name string) change {
		return func(ns string) {
			setSecretData(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}, "k", time.Now().String())
		}
	}
	cmLabels := func(ns string) {
		update(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cm"}}, func(c *corev1.ConfigMap) { c.Labels = map[string]string{"new-label": "new-value"} })
	}
	secretLabels := func(ns string) {
		update(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sec"}}, func(s *corev1.Secret) { s.Labels = map[string]string{"new-label": "new-value"} })
	}
	cmReload := map[string]string{annotations.ConfigMapReload: "cm"}
	secretReload := map[string]string{annotations.SecretReload: "sec"}

	DescribeTable("rolls a Rollout once per change, or not at all",
		func(ann, tmplAnn map[string]string, mods []podMod, changes []change, rolls bool) {
			ns := newArgoNamespace()
			for _, name := range []string{"cm", "cm2"} {
				createConfigMap(ns, name, map[string]string{"k": "1"})
			}
			for _, name := range []string{"sec", "sec2"} {
				createSecret(ns, name, map[string]string{"k": "1"})
			}
			ro := createRollout(ns, "web", ann, tmplAnn, mods...)
			var control *appsv1.Deployment
			if ann[annotations.Auto] == "false" {
				// Opted out, the Rollout is never recorded: a Deployment that
				// opted in shows when ripple is at work.
				control = createDeployment(ns, "control", auto, mods...)
			}
			startRipple(argo)
			var s rolloutState
			if control != nil {
				recorded(control)
				s = watchRollout(ro, rolloutStateOf(ro))
			} else {
				s = rolloutRecorded(ro)
			}
			for _, c := range changes {
				c(ns)
				if !rolls {
					continue
				}
				s = expectRolloutRolledOnce(ro, s)
			}
			if !rolls {
				Consistently(s.Rollouts, quiet).Should(BeZero())
				Expect(s.Restarts()).To(BeZero())
			}
		},
		Entry("a ConfigMap named in the reload annotation changes", cmReload, nil, []podMod{envFromConfigMap("cm")}, []change{cmData("cm")}, true),
		Entry("a Secret named in the reload annotation changes", secretReload, nil, []podMod{envFromSecret("sec")}, []change{secretData("sec")}, true),
		Entry("a ConfigMap changes under auto=true", auto, nil, []podMod{envFromConfigMap("cm")}, []change{cmData("cm")}, true),
		Entry("only a ConfigMap's labels change", cmReload, nil, []podMod{envFromConfigMap("cm")}, []change{cmLabels}, false),
		Entry("only a Secret's labels change", secretReload, nil, []podMod{envFromSecret("sec")}, []change{secretLabels}, false),
		Entry("a volume-mounted ConfigMap changes", cmReload, nil, []podMod{volumeConfigMap("cm")}, []change{cmData("cm")}, true),
		Entry("a volume-mounted Secret changes", secretReload, nil, []podMod{volumeSecret("sec")}, []change{secretData("sec")}, true),
		Entry("either of two ConfigMaps changes", map[string]string{annotations.ConfigMapReload: "cm,cm2"}, nil,
			[]podMod{envFromConfigMap("cm"), envFromConfigMap("cm2")}, []change{cmData("cm2"), cmData("cm")}, true),
		Entry("either of two Secrets changes", map[string]string{annotations.SecretReload: "sec,sec2"}, nil,
			[]podMod{envFromSecret("sec"), envFromSecret("sec2")}, []change{secretData("sec2"), secretData("sec")}, true),
		Entry("a ConfigMap changes twice in a row", cmReload, nil, []podMod{envFromConfigMap("cm")}, []change{cmData("cm"), cmData("cm")}, true),
		Entry("a ConfigMap or a Secret changes", map[string]string{annotations.ConfigMapReload: "cm", annotations.SecretReload: "sec"}, nil,
			[]podMod{envFromConfigMap("cm"), envFromSecret("sec")}, []change{cmData("cm"), secretData("sec")}, true),
		Entry("a ConfigMap changes under auto=false", map[string]string{annotations.Auto: "false"}, nil, []podMod{envFromConfigMap("cm")}, []change{cmData("cm")}, false),
		Entry("a ConfigMap named on the pod template only changes", nil, cmReload, []podMod{envFromConfigMap("cm")}, []change{cmData("cm")}, true),
		Entry("a Secret named on the pod template only changes", nil, secretReload, []podMod{envFromSecret("sec")}, []change{secretData("sec")}, true),
		Entry("a ConfigMap changes under auto=true on the pod template only", nil, auto, []podMod{envFromConfigMap("cm")}, []change{cmData("cm")}, true),
		Entry("a ConfigMap named on both the Rollout and its pod template changes", cmReload, cmReload, []podMod{envFromConfigMap("cm")}, []change{cmData("cm")}, true),
		Entry("a Secret changes that the pod template's ConfigMap annotation does not name", nil, cmReload, []podMod{envFromSecret("sec")}, []change{secretData("sec")}, false),
	)
})

// scheduleRestartInAnHour sets ro's restartAt an hour ahead, as `kubectl
// argo rollouts restart --in 1h` does, and returns it.
func scheduleRestartInAnHour(ro *unstructured.Unstructured) string {
	GinkgoHelper()
	later := time.Now().Add(time.Hour).UTC().Truncate(time.Second).Format(time.RFC3339)
	Expect(unstructured.SetNestedField(ro.Object, later, "spec", "restartAt")).To(Succeed())
	Expect(k8s.Update(suiteCtx, ro)).To(Succeed())
	return later
}

var _ = Describe("An Argo Rollout with a restart scheduled for later", func() {
	It("restarts a Rollout with a minimum interval at once when its only restartAt is scheduled for later", func() {
		ns := newArgoNamespace()
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		ann := maps.Clone(restart)
		ann[annotations.MinRolloutInterval] = "1h"
		ro := createRollout(ns, "web", ann, nil, envFromConfigMap("cfg"))
		scheduleRestartInAnHour(ro)
		startRipple(argo)
		before := rolloutRecorded(ro)

		changedAt := time.Now()
		setData(cm, "k", "2")

		expectRestartedOnce(ro, before, changedAt)
	})
})
