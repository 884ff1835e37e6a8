package integration

import (
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ripple-controller/ripple/internal/annotations"
	"github.com/ripple-controller/ripple/internal/refs"
	"github.com/ripple-controller/ripple/test/cluster"
)

// The specs play the secrets store CSI driver: they create the
// SecretProviderClass and, for each "pod", the SecretProviderClassPodStatus
// the driver writes, and rotate a secret by updating the versions a status
// reports. No pods run, so a rollout's new pods are new statuses.

var csiGroup = schema.GroupVersion{Group: "secrets-store.csi.x-k8s.io", Version: "v1"}

// csiCRDs holds the CSI CRDs this Ginkgo process installed; nil while they
// are not served. Each process has its own API server.
var csiCRDs []*apiextensionsv1.CustomResourceDefinition

var csiCRDNames = []string{cluster.SecretProviderClassCRD, cluster.SecretProviderClassPodStatusCRD}

// serveCSI installs the CSI CRDs, once per process.
func serveCSI() {
	GinkgoHelper()
	if csiCRDs != nil {
		return
	}
	crds, err := cluster.InstallCRDs(restConfig, csiCRDNames...)
	Expect(err).NotTo(HaveOccurred())
	csiCRDs = crds
}

// stopServingCSI uninstalls the CSI CRDs until the spec ends.
func stopServingCSI() {
	GinkgoHelper()
	serveCSI()
	Expect(cluster.UninstallCRDs(restConfig, csiCRDs, csiCRDNames...)).To(Succeed())
	csiCRDs = nil
	DeferCleanup(serveCSI)
}

func volumeCSI(class string) podMod {
	return func(s *corev1.PodSpec) {
		s.Volumes = append(s.Volumes, corev1.Volume{Name: "csi-" + class, VolumeSource: corev1.VolumeSource{
			CSI: &corev1.CSIVolumeSource{Driver: refs.CSIDriver, ReadOnly: ptr.To(true),
				VolumeAttributes: map[string]string{refs.CSIClassAttribute: class}}}})
	}
}

func csiObject(kind, ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(csiGroup.WithKind(kind))
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

// createClass creates a SecretProviderClass, as its user would.
func createClass(ns, name string) {
	GinkgoHelper()
	spc := csiObject("SecretProviderClass", ns, name)
	Expect(unstructured.SetNestedField(spc.Object, "vault", "spec", "provider")).To(Succeed())
	Expect(k8s.Create(suiteCtx, spc)).To(Succeed())
	DeferCleanup(func() { _ = k8s.Delete(suiteCtx, spc) })
}

// mountStatus creates the status the driver writes when a pod mounts the
// class: the secret "db" at the version.
func mountStatus(ns, pod, class, version string) *unstructured.Unstructured {
	GinkgoHelper()
	st := csiObject("SecretProviderClassPodStatus", ns, pod+"-"+ns+"-"+class)
	Expect(unstructured.SetNestedMap(st.Object, map[string]any{
		"podName": pod, "secretProviderClassName": class, "targetPath": "/var/lib/kubelet/pods/" + pod, "mounted": true,
		"objects": []any{map[string]any{"id": "secret/db", "version": version}},
	}, "status")).To(Succeed())
	Expect(k8s.Create(suiteCtx, st)).To(Succeed())
	DeferCleanup(func() { _ = k8s.Delete(suiteCtx, st) })
	return st
}

// rotate makes the status report a new version of the secret, as the
// driver's rotation does.
func rotate(st *unstructured.Unstructured, version string) {
	GinkgoHelper()
	Expect(k8s.Get(suiteCtx, client.ObjectKeyFromObject(st), st)).To(Succeed())
	Expect(unstructured.SetNestedSlice(st.Object, []any{map[string]any{"id": "secret/db", "version": version}}, "status", "objects")).To(Succeed())
	Expect(k8s.Update(suiteCtx, st)).To(Succeed())
}

var spcAuto = map[string]string{annotations.SecretProviderClassAuto: "true"}

// recordNames waits until the workload's record names the ref.
func recordNames(obj client.Object, ref string) {
	GinkgoHelper()
	Eventually(func() string { return stateOf(obj).Recorded }, 20*time.Second).Should(ContainSubstring(ref+"="),
		"the record of %s names %s", obj.GetName(), ref)
}

var _ = Describe("SecretProviderClass rotation with --enable-csi-integration", func() {
	BeforeEach(serveCSI)

	It("does not roll a Deployment back to an older rotation when the rollout replaces the pods of the newest one", func() {
		ns := newNamespace(nil)
		createClass(ns, "vault")
		// Another workload's pod, which ripple does not roll, rotated
		// once, long before.
		other := mountStatus(ns, "other-1", "vault", "0")
		rotate(other, "1")
		pod := mountStatus(ns, "app-1", "vault", "1")
		startRipple("--enable-csi-integration")
		dep := createDeployment(ns, "app", spcAuto, volumeCSI("vault"))
		before := recorded(dep)
		// Older than ripple's slack for a lagging cache, 5 s, and its
		// estimate of the API server's clock.
		waitServerPast(ns, lastWrite(other)+7)

		rotate(pod, "2")
		after := expectRolledOnce(dep, before)
		// The rollout's pod mounts what is current; the old one goes.
		mountStatus(ns, "app-2", "vault", "2")
		Expect(k8s.Delete(suiteCtx, pod)).To(Succeed())
		expectNoRollout(dep, after)

		// A label on the stale status, by another manager, is no rotation.
		Expect(k8s.Get(suiteCtx, client.ObjectKeyFromObject(other), other)).To(Succeed())
		other.SetLabels(map[string]string{"audited": "yes"})
		Expect(k8s.Update(suiteCtx, other, client.FieldOwner("kubectl-label"))).To(Succeed())
		expectNoRollout(dep, after)

		rotate(other, "2")
		expectNoRollout(dep, after)
	})

	It("rolls a Deployment with secretproviderclass auto once when its pods' statuses report a new version, and not again when the rollout's pods report the same one", func() {
		ns := newNamespace(nil)
		createClass(ns, "vault")
		pod1 := mountStatus(ns, "app-1", "vault", "1")
		pod2 := mountStatus(ns, "app-2", "vault", "1")
		startRipple("--enable-csi-integration")
		d := createDeployment(ns, "app", spcAuto, volumeCSI("vault"))
		before := recorded(d)
		Expect(before.Recorded).To(ContainSubstring("SecretProviderClass/vault="))

		By("the driver rotating one pod, then the other")
		rotate(pod1, "2")
		after := expectRolledOnce(d, before)
		Expect(eventsFor(d)()).To(ContainElement(ContainSubstring("SecretProviderClass/vault")))
		rotate(pod2, "2")
		expectNoRollout(d, after)

		By("the rollout replacing both pods")
		mountStatus(ns, "app-3", "vault", "2")
		mountStatus(ns, "app-4", "vault", "2")
		Expect(k8s.Delete(suiteCtx, pod1)).To(Succeed())
		Expect(k8s.Delete(suiteCtx, pod2)).To(Succeed())
		expectNoRollout(d, after)
	})

	It("rolls nothing when new pods report versions of their own, as a provider's dynamic secrets do, and rolls once for a rotation", func() {
		ns := newNamespace(nil)
		createClass(ns, "vault")
		st := mountStatus(ns, "app-1", "vault", "1")
		startRipple("--enable-csi-integration")
		d := createDeployment(ns, "app", spcAuto, volumeCSI("vault"))
		before := recorded(d)

		mountStatus(ns, "app-2", "vault", "2")
		expectNoRollout(d, before)
		mountStatus(ns, "app-3", "vault", "3")
		expectNoRollout(d, before)

		rotate(st, "4")
		expectRolledOnce(d, before)
	})

	It("rolls nothing when the record of a workload that mounts a class is lost after its pods were replaced", func() {
		ns := newNamespace(nil)
		createClass(ns, "vault")
		st := mountStatus(ns, "app-1", "vault", "1")
		first := startRipple("--enable-csi-integration")
		d := createDeployment(ns, "app", spcAuto, volumeCSI("vault"))
		before := recorded(d)
		rotate(st, "2")
		after := expectRolledOnce(d, before)
		mountStatus(ns, "app-2", "vault", "3")
		Expect(k8s.Delete(suiteCtx, st)).To(Succeed())
		expectNoRollout(d, after)
		first.stop()

		removeRecord(d)
		startRipple("--enable-csi-integration")
		Eventually(func() string { return stateOf(d).Recorded }, 20*time.Second).ShouldNot(BeEmpty())
		expectNoRollout(d, after)
	})

	It("sets STAKATER_<NAME>_SECRETPROVIDERCLASS on a rotation under the env-vars strategy (Reloader's case)", func() {
		ns := newNamespace(nil)
		createClass(ns, "vault-db")
		pod := mountStatus(ns, "app-1", "vault-db", "1")
		startRipple("--enable-csi-integration", "--reload-strategy=env-vars")
		d := createDeployment(ns, "app", spcAuto, volumeCSI("vault-db"))
		before := recorded(d)

		rotate(pod, "2")

		expectRolledOnce(d, before)
		Expect(envOf(d, "STAKATER_VAULT_DB_SECRETPROVIDERCLASS")).To(HaveKeyWithValue("app", HaveLen(1)))
	})

	It("records a SecretProviderClass on first sight without rolling the Deployment", func() {
		ns := newNamespace(nil)
		createClass(ns, "vault")
		mountStatus(ns, "app-1", "vault", "1")
		d := createDeployment(ns, "app", spcAuto, volumeCSI("vault"))
		startRipple("--enable-csi-integration")
		before := recorded(d)
		Expect(before.Recorded).To(ContainSubstring("SecretProviderClass/vault="))
		expectNoRollout(d, before)
	})

	It("treats a SecretProviderClass no pod mounts yet as absent: its first status rolls nothing, a rotation then does", func() {
		ns := newNamespace(nil)
		createClass(ns, "vault")
		startRipple("--enable-csi-integration")
		d := createDeployment(ns, "app", spcAuto, volumeCSI("vault"))
		before := recorded(d)
		Expect(before.Recorded).NotTo(ContainSubstring("SecretProviderClass/"))

		st := mountStatus(ns, "app-1", "vault", "1")
		recordNames(d, "SecretProviderClass/vault")
		expectNoRollout(d, before)

		rotate(st, "2")
		expectRolledOnce(d, before)
	})

	It("restarts a Rollout with workloadRef when a SecretProviderClass only the referenced Deployment mounts rotates, though no pod mounted it at first sight", func() {
		ns := newArgoNamespace()
		createClass(ns, "vault")
		createSourceDeployment(ns, "web-template", volumeCSI("vault"))
		ro := createRolloutRef(ns, "web", "web-template", spcAuto)
		startRipple(argo, "--enable-csi-integration")
		before := rolloutRecorded(ro)
		Expect(before.Recorded).NotTo(ContainSubstring("SecretProviderClass/"))

		st := mountStatus(ns, "web-1", "vault", "1")
		Eventually(func() string { return rolloutStateOf(ro).Recorded }, 20*time.Second).Should(ContainSubstring("SecretProviderClass/vault="))
		changedAt := time.Now()
		rotate(st, "2")
		expectRestartedOnce(ro, before, changedAt)
	})

	It("rolls a Deployment whose secretproviderclass reload annotation names the class, without auto, and not for another class it mounts", func() {
		ns := newNamespace(nil)
		vault := mountStatus(ns, "app-1", "vault", "1")
		other := mountStatus(ns, "app-1", "other", "1")
		startRipple("--enable-csi-integration")
		d := createDeployment(ns, "app", map[string]string{annotations.SecretProviderClassReload: "vault"},
			volumeCSI("vault"), volumeCSI("other"))
		before := recorded(d)

		rotate(other, "2")
		expectNoRollout(d, before)
		rotate(vault, "2")
		expectRolledOnce(d, before)
	})

	It("never rolls a Deployment for a class its secretproviderclasses exclude annotation lists, but still for the others", func() {
		ns := newNamespace(nil)
		excluded := mountStatus(ns, "app-1", "vault", "1")
		kept := mountStatus(ns, "app-1", "aws", "1")
		startRipple("--enable-csi-integration")
		d := createDeployment(ns, "app", map[string]string{annotations.SecretProviderClassAuto: "true",
			annotations.SecretProviderClassExclude: "vault"}, volumeCSI("vault"), volumeCSI("aws"))
		before := recorded(d)
		Expect(before.Recorded).NotTo(ContainSubstring("SecretProviderClass/vault"))

		rotate(excluded, "2")
		expectNoRollout(d, before)
		rotate(kept, "2")
		expectRolledOnce(d, before)
	})

	// Reloader's CSI end-to-end cases, replayed with statuses in place of a
	// real driver and Vault.
	It("rolls once for each of two rotations of a SecretProviderClass named by the reload annotation, the second reported by the rollout's new pod (Reloader: multiple Vault secret updates)", func() {
		ns := newNamespace(nil)
		first := mountStatus(ns, "app-1", "vault", "1")
		startRipple("--enable-csi-integration")
		d := createDeployment(ns, "app", map[string]string{annotations.SecretProviderClassReload: "vault"}, volumeCSI("vault"))
		before := recorded(d)

		rotate(first, "2")
		after := expectRolledOnce(d, before)
		second := mountStatus(ns, "app-2", "vault", "2")
		Expect(k8s.Delete(suiteCtx, first)).To(Succeed())
		expectNoRollout(d, after)

		rotate(second, "3")
		expectRolledOnce(d, after)
	})

	It("rolls a Deployment with only secretproviderclass auto for its SecretProviderClass, not for the ConfigMap it also uses (Reloader: typed auto)", func() {
		ns := newNamespace(nil)
		cm := createConfigMap(ns, "settings", map[string]string{"k": "1"})
		st := mountStatus(ns, "app-1", "vault", "1")
		startRipple("--enable-csi-integration")
		d := createDeployment(ns, "app", spcAuto, envFromConfigMap("settings"), volumeCSI("vault"))
		before := recorded(d)

		setData(cm, "k", "2")
		expectNoRollout(d, before)
		rotate(st, "2")
		expectRolledOnce(d, before)
	})

	It("rolls a Deployment with auto for both its ConfigMap and its SecretProviderClass (Reloader: combined auto)", func() {
		ns := newNamespace(nil)
		cm := createConfigMap(ns, "settings", map[string]string{"k": "1"})
		st := mountStatus(ns, "app-1", "vault", "1")
		startRipple("--enable-csi-integration")
		d := createDeployment(ns, "app", auto, envFromConfigMap("settings"), volumeCSI("vault"))
		before := recorded(d)

		setData(cm, "k", "2")
		after := expectRolledOnce(d, before)
		rotate(st, "2")
		expectRolledOnce(d, after)
	})

	It("ignores SecretProviderClass statuses without --enable-csi-integration", func() {
		ns := newNamespace(nil)
		cm := createConfigMap(ns, "settings", map[string]string{"k": "1"})
		st := mountStatus(ns, "app-1", "vault", "1")
		startRipple()
		d := createDeployment(ns, "app", map[string]string{annotations.Auto: "true", annotations.SecretProviderClassAuto: "true"},
			envFromConfigMap("settings"), volumeCSI("vault"))
		before := recorded(d)
		Expect(before.Recorded).NotTo(ContainSubstring("SecretProviderClass/"))

		rotate(st, "2")
		expectNoRollout(d, before)
		setData(cm, "k", "2")
		expectRolledOnce(d, before)
	})

	It("starts with --enable-csi-integration when SecretProviderClass CRDs are not served, says so once, and still rolls for ConfigMaps", func() {
		stopServingCSI()
		ns := newNamespace(nil)
		cm := createConfigMap(ns, "settings", map[string]string{"k": "1"})
		ripple := startRipple("--enable-csi-integration")
		Eventually(ripple.logs).Should(gbytes.Say("CSI integration is off"))
		d := createDeployment(ns, "app", auto, envFromConfigMap("settings"), volumeCSI("vault"))
		before := recorded(d)

		setData(cm, "k", "2")
		expectRolledOnce(d, before)
		Expect(strings.Count(string(ripple.logs.Contents()), "CSI integration is off")).To(Equal(1))
	})
})

var _ = Describe("SecretProviderClass rotation after a stale record is written back", func() {
	It("rolls for a rotation made while ripple was down after a stale record was written back", func() {
		serveCSI()
		ns := newNamespace(nil)
		createClass(ns, "vault")
		st := mountStatus(ns, "app-1", "vault", "1")
		ripple := startRipple("--enable-csi-integration")
		d := createDeployment(ns, "app", spcAuto, volumeCSI("vault"))
		first := recorded(d)
		waitServerPast(ns, recordedAt(first)+2)
		rotate(st, "2")
		rolled := expectRolledOnce(d, first)
		waitServerPast(ns, recordedAt(rolled)+2)
		ripple.stop()

		update(d, func(d *appsv1.Deployment) { d.Annotations[annotations.Recorded] = first.Recorded })
		rotate(st, "3")
		written := withRollouts(d, stateOf(d))
		startRipple("--enable-csi-integration")

		expectRolledOnce(d, written)
	})
})
