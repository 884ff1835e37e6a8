package integration

import (
	"io"
	"maps"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ripple-controller/ripple/internal/annotations"
)

// mountConfigMap mounts the ConfigMap's volume (volumeConfigMap) in the
// first container, whole or, with a subPath, one file of it.
func mountConfigMap(name, subPath string) podMod {
	return func(s *corev1.PodSpec) {
		s.Containers[0].VolumeMounts = append(s.Containers[0].VolumeMounts,
			corev1.VolumeMount{Name: "cm-" + name, MountPath: "/etc/" + name, SubPath: subPath})
	}
}

// initContainerMounts adds an init container that mounts the ConfigMap's
// volume whole, as one that renders a config file would.
func initContainerMounts(name string) podMod {
	return func(s *corev1.PodSpec) {
		s.InitContainers = append(s.InitContainers, corev1.Container{Name: "render", Image: "render:1",
			VolumeMounts: []corev1.VolumeMount{{Name: "cm-" + name, MountPath: "/in"}}})
	}
}

// sidecarMounts adds a native sidecar, an init container that runs as
// long as the pod, that mounts the ConfigMap's volume whole.
func sidecarMounts(name string) podMod {
	return func(s *corev1.PodSpec) {
		always := corev1.ContainerRestartPolicyAlways
		s.InitContainers = append(s.InitContainers, corev1.Container{Name: "proxy", Image: "proxy:1", RestartPolicy: &always,
			VolumeMounts: []corev1.VolumeMount{{Name: "cm-" + name, MountPath: "/etc/proxy"}}})
	}
}

// createPod creates a pod of Deployment app, labelled as its pods are and
// controlled by a ReplicaSet named as its controller names them. No
// scheduler runs, so it stays Pending, which is all ripple reads of it.
func createPod(ns, name, app string) *corev1.Pod {
	GinkgoHelper()
	return createPodOf(ns, name, map[string]string{"app": app}, app)
}

// createConfigMapWith creates a ConfigMap, immutable or not.
func createConfigMapWith(ns, name string, data map[string]string, immutable bool) *corev1.ConfigMap {
	GinkgoHelper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: data, Immutable: ptr.To(immutable)}
	Expect(k8s.Create(suiteCtx, cm)).To(Succeed())
	return cm
}

// recreateConfigMap deletes cm and creates it again, immutable or not,
// with data.
func recreateConfigMap(cm *corev1.ConfigMap, data map[string]string, immutable bool) *corev1.ConfigMap {
	GinkgoHelper()
	Expect(k8s.Delete(suiteCtx, cm)).To(Succeed())
	return createConfigMapWith(cm.Namespace, cm.Name, data, immutable)
}

// createPodOf creates a pod with labels, controlled by a ReplicaSet of the
// Deployment named owner, or by nothing when owner is "".
func createPodOf(ns, name string, labels map[string]string, owner string) *corev1.Pod {
	GinkgoHelper()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: maps.Clone(labels)},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:1"}}}}
	if owner != "" {
		const hash = "5d8f7c"
		p.Labels[appsv1.DefaultDeploymentUniqueLabelKey] = hash
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: owner + "-" + hash,
			UID: types.UID(ns + "-" + owner), Controller: ptr.To(true)}}
	}
	Expect(k8s.Create(suiteCtx, p)).To(Succeed())
	return p
}

// forbidPodLists answers ripple's lists of pods as the API server does a
// user without the right: 403 Forbidden.
func forbidPodLists(next http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		if req.Method != http.MethodGet || !strings.HasSuffix(req.URL.Path, "/pods") {
			return next.RoundTrip(req)
		}
		body := `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403,` +
			`"message":"pods is forbidden: User \"ripple\" cannot list resource \"pods\""}`
		return &http.Response{StatusCode: http.StatusForbidden, Header: http.Header{"Content-Type": {"application/json"}},
			Body: io.NopCloser(strings.NewReader(body)), Request: req}, nil
	})
}

// refreshedStamp reads the stamp ripple wrote on a pod.
func refreshedStamp(p *corev1.Pod) func() string {
	return func() string {
		GinkgoHelper()
		Expect(k8s.Get(suiteCtx, client.ObjectKeyFromObject(p), p)).To(Succeed())
		return p.Annotations[annotations.Refreshed]
	}
}

var refreshStrategy = map[string]string{annotations.Auto: "true", annotations.ReloadStrategy: "refresh"}

var _ = Describe("The refresh strategy", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace(nil) })

	It("stamps the running pods of a workload that reads the changed object only as a whole volume, and does not roll it", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", refreshStrategy, volumeConfigMap("cfg"), mountConfigMap("cfg", ""))
		mine := []*corev1.Pod{createPod(ns, "dep-1", "dep"), createPod(ns, "dep-2", "dep")}
		other := createPod(ns, "other-1", "other")
		// Pods that carry its labels but that it did not make.
		canary := createPodOf(ns, "canary-1", map[string]string{"app": "dep", "track": "canary"}, "dep-canary")
		bare := createPodOf(ns, "bare-1", map[string]string{"app": "dep"}, "")
		startRipple("--enable-pod-refresh")
		before := recorded(dep)

		setData(cm, "k", "2")

		for _, p := range mine {
			Eventually(refreshedStamp(p), 10*time.Second).ShouldNot(BeEmpty(), "%s is stamped", p.Name)
		}
		first := refreshedStamp(mine[0])()
		Expect(refreshedStamp(mine[1])()).To(Equal(first))
		Expect(refreshedStamp(other)()).To(BeEmpty(), "a pod of another workload is not touched")
		Expect(refreshedStamp(canary)()).To(BeEmpty(), "a pod of another Deployment with the same labels is not touched")
		Expect(refreshedStamp(bare)()).To(BeEmpty(), "a pod no controller made is not touched")
		expectNoRollout(dep, before)
		Expect(stateOf(dep).Recorded).NotTo(Equal(before.Recorded), "the change is recorded")
		Expect(eventsFor(dep)()).To(ContainElement("Refreshed: Refreshed 2 pods in place because ConfigMap/cfg changed"))

		setData(cm, "k", "3")

		Eventually(refreshedStamp(mine[0]), 10*time.Second).ShouldNot(Equal(first), "the next change stamps them again")
		expectNoRollout(dep, before)
	})

	// A refresh leaves the pod template as it was: the record and the
	// template's stamp alone would say the pods run older config.
	It("does not refresh the pods again when a GitOps tool writes back the record it held before a refresh", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", refreshStrategy, volumeConfigMap("cfg"), mountConfigMap("cfg", ""))
		pod := createPod(ns, "dep-1", "dep")
		first := startRipple("--enable-pod-refresh")
		before := recorded(dep)
		waitServerPast(ns, recordedAt(before)+2)
		setData(cm, "k", "2")
		Eventually(func() string { return stateOf(dep).Recorded }, 10*time.Second).ShouldNot(Equal(before.Recorded))
		stamped := refreshedStamp(pod)()
		Expect(stamped).NotTo(BeEmpty())
		waitServerPast(ns, recordedAt(stateOf(dep))+2)
		first.stop()

		update(dep, func(d *appsv1.Deployment) { d.Annotations[annotations.Recorded] = before.Recorded })
		startRipple("--enable-pod-refresh")

		Eventually(func() string { return stateOf(dep).Recorded }, 20*time.Second).ShouldNot(Equal(before.Recorded), "recorded again")
		Consistently(refreshedStamp(pod), quiet).Should(Equal(stamped), "the pods are not stamped again")
		expectNoRollout(dep, before)
	})

	It("does not roll a workload whose record is lost after a refresh that followed a rollout", func() {
		env := createConfigMap(ns, "env", map[string]string{"k": "1"})
		vol := createConfigMap(ns, "vol", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", refreshStrategy, envFromConfigMap("env"), volumeConfigMap("vol"), mountConfigMap("vol", ""))
		pod := createPod(ns, "dep-1", "dep")
		startRipple("--enable-pod-refresh")
		rolled := rolledOnceBy(dep, env, "2")
		waitServerPast(ns, recordedAt(rolled)+2)
		setData(vol, "k", "2")
		Eventually(refreshedStamp(pod), 10*time.Second).ShouldNot(BeEmpty())
		Eventually(func() string { return stateOf(dep).Recorded }, 10*time.Second).ShouldNot(Equal(rolled.Recorded))

		update(dep, func(d *appsv1.Deployment) { delete(d.Annotations, annotations.Recorded) })

		Eventually(func() string { return stateOf(dep).Recorded }, 20*time.Second).ShouldNot(BeEmpty(), "recorded again")
		expectNoRollout(dep, rolled)
	})

	It("ends a StatefulSet's pause when the change it held at its end is refreshed in place", func() {
		env := createConfigMap(ns, "env", map[string]string{"k": "1"})
		vol := createConfigMap(ns, "vol", map[string]string{"k": "1"})
		ann := map[string]string{annotations.Auto: "true", annotations.ReloadStrategy: "refresh", annotations.PausePeriod: "10s"}
		sts := createStatefulSet(ns, "sts", ann, envFromConfigMap("env"), volumeConfigMap("vol"), mountConfigMap("vol", ""))
		startRipple("--enable-pod-refresh")
		before := recorded(sts)
		setData(env, "k", "2")
		Eventually(pausedAt(sts), 10*time.Second).ShouldNot(BeEmpty(), "a change read through env pauses it")

		setData(env, "k", "1")
		setData(vol, "k", "2")
		Expect(pausedAt(sts)()).NotTo(BeEmpty(), "both changes are made during the pause")
		Consistently(eventsFor(sts), quiet).ShouldNot(ContainElement(HavePrefix("Refreshed: ")), "and held by it")

		Eventually(eventsFor(sts), 20*time.Second).Should(ContainElement(HavePrefix("Refreshed: ")))
		Eventually(pausedAt(sts), 10*time.Second).Should(BeEmpty(), "the pause ends")
		Eventually(eventsFor(sts), 10*time.Second).Should(ContainElement(HavePrefix("PauseEnded: ")), "and says so")
		expectNoRollout(sts, before)
	})

	It("stamps the pods of a workload whose native sidecar alone mounts the changed object whole, and does not roll it", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", refreshStrategy, volumeConfigMap("cfg"), sidecarMounts("cfg"))
		pod := createPod(ns, "dep-1", "dep")
		startRipple("--enable-pod-refresh")
		before := recorded(dep)

		setData(cm, "k", "2")

		Eventually(refreshedStamp(pod), 10*time.Second).ShouldNot(BeEmpty())
		expectNoRollout(dep, before)
	})

	DescribeTable("rolls instead, and says why, when the change reaches the pods another way",
		func(mods []podMod, why string) {
			cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
			dep := createDeployment(ns, "dep", refreshStrategy, mods...)
			pod := createPod(ns, "dep-1", "dep")
			startRipple("--enable-pod-refresh")
			before := recorded(dep)

			setData(cm, "k", "2")

			expectRolledOnce(dep, before)
			Expect(eventsFor(dep)()).To(ContainElement("NotRefreshed: Rolling instead of refreshing in place: " + why))
			Expect(refreshedStamp(pod)()).To(BeEmpty())
		},
		Entry("through envFrom", []podMod{volumeConfigMap("cfg"), mountConfigMap("cfg", ""), envFromConfigMap("cfg")},
			"ConfigMap/cfg reaches container app through its environment"),
		Entry("through a subPath mount", []podMod{volumeConfigMap("cfg"), mountConfigMap("cfg", "k")},
			"ConfigMap/cfg reaches container app through a subPath mount"),
		Entry("through a volume no container mounts", []podMod{volumeConfigMap("cfg")},
			"ConfigMap/cfg is mounted whole by no running container"),
		Entry("through a volume only an init container mounts, which does not run again", []podMod{volumeConfigMap("cfg"), initContainerMounts("cfg")},
			"ConfigMap/cfg reaches init container render, which does not run again"),
		Entry("through a volume an init container mounts as well as the container", []podMod{volumeConfigMap("cfg"), mountConfigMap("cfg", ""), initContainerMounts("cfg")},
			"ConfigMap/cfg reaches init container render, which does not run again"),
	)

	It("rolls under --reload-on-create for a deleted Secret recreated with the same data after a rollout it fell back to", func() {
		sec := createSecret(ns, "creds", map[string]string{"k": "1"})
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", refreshStrategy, envFromSecret("creds"), envFromConfigMap("cfg"))
		startRipple("--enable-pod-refresh", "--reload-on-create")
		before := recorded(dep)
		Expect(k8s.Delete(suiteCtx, sec)).To(Succeed())
		expectNoRollout(dep, before)
		setData(cm, "k", "2")
		rolled := expectRolledOnce(dep, before)
		Expect(eventsFor(dep)()).To(ContainElement(HavePrefix("NotRefreshed: ")))

		createSecret(ns, "creds", map[string]string{"k": "1"})

		expectRolledOnce(dep, withRollouts(dep, rolled))
	})

	DescribeTable("rolls instead, and says why, when an immutable ConfigMap is recreated with other data",
		func(immutableAgain bool, why string) {
			cm := createConfigMapWith(ns, "cfg", map[string]string{"k": "1"}, true)
			dep := createDeployment(ns, "dep", refreshStrategy, volumeConfigMap("cfg"), mountConfigMap("cfg", ""))
			pod := createPod(ns, "dep-1", "dep")
			startRipple("--enable-pod-refresh")
			before := recorded(dep)
			waitServerPast(ns, recordedAt(before)+2)

			recreateConfigMap(cm, map[string]string{"k": "2"}, immutableAgain)

			expectRolledOnce(dep, before)
			Expect(eventsFor(dep)()).To(ContainElement("NotRefreshed: Rolling instead of refreshing in place: ConfigMap/cfg " + why))
			Expect(refreshedStamp(pod)()).To(BeEmpty())
		},
		Entry("immutable again", true, "is immutable, and the kubelet does not update it in running pods"),
		// A kubelet that read the name as immutable never reads it again.
		Entry("mutable now", false, "was created again since a running pod started, and the kubelet does not update a name it read as immutable"),
	)

	It("rolls instead of refreshing for a change of a ConfigMap recreated mutable after the pods started, though a refresh since wrote the record again", func() {
		cm := createConfigMapWith(ns, "cfg", map[string]string{"k": "1"}, true)
		other := createConfigMap(ns, "other", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", refreshStrategy, volumeConfigMap("cfg"), mountConfigMap("cfg", ""),
			volumeConfigMap("other"), mountConfigMap("other", ""))
		pod := createPod(ns, "dep-1", "dep")
		startRipple("--enable-pod-refresh")
		before := recorded(dep)
		waitServerPast(ns, recordedAt(before)+2)
		// Recreated mutable with the same data: nothing to roll yet, but
		// the pod's kubelet read the name as immutable.
		again := recreateConfigMap(cm, map[string]string{"k": "1"}, false)
		setData(other, "k", "2")
		Eventually(refreshedStamp(pod), 10*time.Second).ShouldNot(BeEmpty(), "a change of the other ConfigMap refreshes the pod and writes the record")
		expectNoRollout(dep, before)

		setData(again, "k", "2")

		expectRolledOnce(dep, before)
		Expect(eventsFor(dep)()).To(ContainElement("NotRefreshed: Rolling instead of refreshing in place: ConfigMap/cfg was created again since a running pod started, and the kubelet does not update a name it read as immutable"))
	})

	It("rolls instead, and says why, when a mounted ConfigMap is deleted under --reload-on-delete", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", refreshStrategy, volumeConfigMap("cfg"), mountConfigMap("cfg", ""))
		pod := createPod(ns, "dep-1", "dep")
		startRipple("--enable-pod-refresh", "--reload-on-delete")
		before := recorded(dep)

		Expect(k8s.Delete(suiteCtx, cm)).To(Succeed())

		expectRolledOnce(dep, before)
		Expect(eventsFor(dep)()).To(ContainElement("NotRefreshed: Rolling instead of refreshing in place: ConfigMap/cfg was deleted, and running pods keep its files"))
		Expect(refreshedStamp(pod)()).To(BeEmpty())
	})

	It("rolls instead, and says why, when the API server refuses to stamp the pods", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", refreshStrategy, volumeConfigMap("cfg"), mountConfigMap("cfg", ""))
		pod := createPod(ns, "dep-1", "dep")
		refuse(ns, admissionregistrationv1.Update, "", "pods", func() error {
			probe := pod.DeepCopy()
			probe.Annotations = map[string]string{"probe": "1"}
			return k8s.Update(suiteCtx, probe, client.DryRunAll)
		})
		startRipple("--enable-pod-refresh")
		before := recorded(dep)

		setData(cm, "k", "2")

		expectRolledOnce(dep, before)
		Expect(eventsFor(dep)()).To(ContainElement(And(HavePrefix("NotRefreshed: Rolling instead of refreshing in place: stamping pod dep-1 was refused"),
			ContainSubstring("frozen by the test"))))
	})

	It("rolls instead, and says why, when ripple may not list the pods (RBAC without the refresh rule)", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", refreshStrategy, volumeConfigMap("cfg"), mountConfigMap("cfg", ""))
		createPod(ns, "dep-1", "dep")
		withRippleTransport(forbidPodLists)
		startRipple("--enable-pod-refresh")
		before := recorded(dep)

		setData(cm, "k", "2")

		expectRolledOnce(dep, before)
		Expect(eventsFor(dep)()).To(ContainElement(HavePrefix("NotRefreshed: Rolling instead of refreshing in place: listing its pods was refused")))
	})

	It("reports the strategy without --enable-pod-refresh and rolls", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", refreshStrategy, volumeConfigMap("cfg"), mountConfigMap("cfg", ""))
		pod := createPod(ns, "dep-1", "dep")
		startRipple()
		before := recorded(dep)
		Eventually(eventsFor(dep), 10*time.Second).Should(ContainElement(ContainSubstring(
			`annotation ripple.dev/reload-strategy: "refresh" needs --enable-pod-refresh; "annotations" applies`)))

		setData(cm, "k", "2")

		expectRolledOnce(dep, before)
		Expect(refreshedStamp(pod)()).To(BeEmpty())
	})

	It("refuses --reload-strategy=refresh without --enable-pod-refresh", func() {
		Expect(startRippleErr("--reload-strategy=refresh")).To(MatchError(ContainSubstring("refresh needs --enable-pod-refresh")))
	})

	It("stamps no pod and records nothing under --dry-run", func() {
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", refreshStrategy, volumeConfigMap("cfg"), mountConfigMap("cfg", ""))
		pod := createPod(ns, "dep-1", "dep")
		first := startRipple("--enable-pod-refresh")
		before := recorded(dep)
		first.stop()
		startRipple("--enable-pod-refresh", "--dry-run")

		setData(cm, "k", "2")

		Eventually(eventsFor(dep), 10*time.Second).Should(ContainElement("WouldReload: Would refresh 1 pods in place because ConfigMap/cfg changed; --dry-run changed nothing"))
		Expect(refreshedStamp(pod)()).To(BeEmpty())
		Expect(stateOf(dep).Recorded).To(Equal(before.Recorded))
		expectNoRollout(dep, before)
	})
})
