package integration

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ripple-controller/ripple/internal/annotations"
	"github.com/ripple-controller/ripple/internal/cli"
	"github.com/ripple-controller/ripple/internal/workload"
)

// quiet is how long a spec watches for a write that must not happen. Ripple
// runs with --debounce=0 unless a spec says otherwise, so anything it would
// do happens well within it.
const quiet = 2 * time.Second

// rippleInstance is ripple running in this process, built by the same
// cli.Parse and cli.NewManager as cmd/ripple.
type rippleInstance struct {
	cancel context.CancelFunc
	done   chan error
	// logs is what ripple logged, also written to GinkgoWriter.
	logs *gbytes.Buffer
}

// startRipple parses args exactly as cmd/ripple does, starts ripple, and
// stops it when the spec ends.
func startRipple(args ...string) *rippleInstance {
	GinkgoHelper()
	r, err := tryStartRipple(args...)
	Expect(err).NotTo(HaveOccurred())
	return r
}

// startRippleErr returns the error that keeps ripple from starting.
func startRippleErr(args ...string) error {
	GinkgoHelper()
	_, err := tryStartRipple(args...)
	return err
}

// defaultArgs are added to every ripple a spec starts, before its own.
var defaultArgs []string

// withDefaultArgs makes every ripple the current spec starts take args.
// Specs of one process run one after the other, so a BeforeEach may set it.
func withDefaultArgs(args ...string) {
	defaultArgs = args
	DeferCleanup(func() { defaultArgs = nil })
}

// rippleTransport, if set, wraps the transport of every ripple the current
// spec starts.
var rippleTransport func(http.RoundTripper) http.RoundTripper

// withRippleTransport makes every ripple the current spec starts send its
// requests through wrap.
func withRippleTransport(wrap func(http.RoundTripper) http.RoundTripper) {
	rippleTransport = wrap
	DeferCleanup(func() { rippleTransport = nil })
}

func tryStartRipple(args ...string) (*rippleInstance, error) {
	defaults := []string{"--metrics-bind-address=0", "--health-probe-bind-address=0", "--debounce=0"}
	defaults = append(defaults, defaultArgs...)
	opts, err := cli.Parse(append(defaults, args...))
	if err != nil {
		return nil, err
	}
	cfg := restConfig
	if rippleTransport != nil {
		cfg = rest.CopyConfig(restConfig)
		cfg.Wrap(rippleTransport)
	}
	ctx, cancel := context.WithCancel(suiteCtx)
	logs := gbytes.NewBuffer()
	mgr, err := cli.NewManager(ctx, cfg, &opts, io.MultiWriter(GinkgoWriter, logs))
	if err != nil {
		cancel()
		return nil, err
	}
	r := &rippleInstance{cancel: cancel, done: make(chan error, 1), logs: logs}
	go func() {
		defer GinkgoRecover()
		r.done <- mgr.Start(ctx)
	}()
	DeferCleanup(r.stop)
	return r, nil
}

func (r *rippleInstance) stop() {
	GinkgoHelper()
	if r.cancel == nil {
		return
	}
	r.cancel()
	r.cancel = nil
	// A blocking receive, not Eventually: a poll would add up to its
	// interval to every spec's end.
	select {
	case err := <-r.done:
		Expect(err).NotTo(HaveOccurred())
	case <-time.After(30 * time.Second):
		Fail("ripple did not stop within 30s of its context ending")
	}
}

func newNamespace(labels map[string]string) string {
	GinkgoHelper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "it-", Labels: labels}}
	Expect(k8s.Create(suiteCtx, ns)).To(Succeed())
	DeferCleanup(func() { emptyAndDelete(ns.Name) })
	return ns.Name
}

// emptyAndDelete deletes what specs create in a namespace, then the
// namespace. The control plane runs no namespace controller, so a deleted
// namespace stays Terminating with its objects forever, and every later
// spec's ripple would reconcile them all again.
func emptyAndDelete(ns string) {
	ctx := context.Background()
	for _, obj := range []client.Object{&appsv1.Deployment{}, &appsv1.StatefulSet{}, &appsv1.DaemonSet{}, &corev1.ConfigMap{}, &corev1.Secret{}} {
		_ = k8s.DeleteAllOf(ctx, obj, client.InNamespace(ns))
	}
	_ = k8s.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
}

func createConfigMap(ns, name string, data map[string]string, ann ...map[string]string) *corev1.ConfigMap {
	GinkgoHelper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: data}
	if len(ann) > 0 {
		cm.Annotations = ann[0]
	}
	Expect(k8s.Create(suiteCtx, cm)).To(Succeed())
	return cm
}

func createSecret(ns, name string, data map[string]string, ann ...map[string]string) *corev1.Secret {
	GinkgoHelper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, StringData: data}
	if len(ann) > 0 {
		s.Annotations = ann[0]
	}
	Expect(k8s.Create(suiteCtx, s)).To(Succeed())
	return s
}

// update re-reads obj, applies change and writes it back.
func update[T client.Object](obj T, change func(T)) {
	GinkgoHelper()
	Eventually(func() error {
		if err := k8s.Get(suiteCtx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		change(obj)
		return k8s.Update(suiteCtx, obj)
	}).Should(Succeed())
}

func setData(cm *corev1.ConfigMap, k, v string) {
	GinkgoHelper()
	update(cm, func(c *corev1.ConfigMap) {
		if c.Data == nil {
			c.Data = map[string]string{}
		}
		c.Data[k] = v
	})
}

func setSecretData(s *corev1.Secret, k, v string) {
	GinkgoHelper()
	update(s, func(c *corev1.Secret) {
		if c.Data == nil {
			c.Data = map[string][]byte{}
		}
		c.Data[k] = []byte(v)
	})
}

// podMod adds a use of a config object to a pod spec.
type podMod func(*corev1.PodSpec)

func volumeConfigMap(name string) podMod {
	return func(s *corev1.PodSpec) {
		s.Volumes = append(s.Volumes, corev1.Volume{Name: "cm-" + name, VolumeSource: corev1.VolumeSource{
			ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: name}}}})
	}
}

func volumeSecret(name string) podMod {
	return func(s *corev1.PodSpec) {
		s.Volumes = append(s.Volumes, corev1.Volume{Name: "s-" + name, VolumeSource: corev1.VolumeSource{
			Secret: &corev1.SecretVolumeSource{SecretName: name}}})
	}
}

func projected(configMap, secret string) podMod {
	return func(s *corev1.PodSpec) {
		s.Volumes = append(s.Volumes, corev1.Volume{Name: "projected", VolumeSource: corev1.VolumeSource{
			Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: configMap}}},
				{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: secret}}},
			}}}})
	}
}

func envConfigMapKey(name string) podMod {
	return func(s *corev1.PodSpec) {
		s.Containers[0].Env = append(s.Containers[0].Env, corev1.EnvVar{Name: "FROM_" + envName(name), ValueFrom: &corev1.EnvVarSource{
			ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: "k"}}})
	}
}

func envSecretKey(name string) podMod {
	return func(s *corev1.PodSpec) {
		s.Containers[0].Env = append(s.Containers[0].Env, corev1.EnvVar{Name: "FROM_" + envName(name), ValueFrom: &corev1.EnvVarSource{
			SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: "k"}}})
	}
}

// creator makes a workload of one kind, for specs that hold for several.
type creator func(ns, name string, ann map[string]string, mods ...podMod) client.Object

func deployment(ns, name string, ann map[string]string, mods ...podMod) client.Object {
	return createDeployment(ns, name, ann, mods...)
}

func statefulSet(ns, name string, ann map[string]string, mods ...podMod) client.Object {
	return createStatefulSet(ns, name, ann, mods...)
}

func daemonSet(ns, name string, ann map[string]string, mods ...podMod) client.Object {
	return createDaemonSet(ns, name, ann, mods...)
}

func envFromConfigMap(name string) podMod {
	return func(s *corev1.PodSpec) {
		s.Containers[0].EnvFrom = append(s.Containers[0].EnvFrom, corev1.EnvFromSource{
			ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: name}}})
	}
}

func envFromSecret(name string) podMod {
	return func(s *corev1.PodSpec) {
		s.Containers[0].EnvFrom = append(s.Containers[0].EnvFrom, corev1.EnvFromSource{
			SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: name}}})
	}
}

func initContainerEnvFrom(name string) podMod {
	return func(s *corev1.PodSpec) {
		s.InitContainers = append(s.InitContainers, corev1.Container{Name: "init", Image: "app:1",
			EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: name}}}}})
	}
}

func envName(s string) string {
	out := []byte(s)
	for i, c := range out {
		if c == '-' || c == '.' {
			out[i] = '_'
		}
	}
	return string(out)
}

func template(name string, mods []podMod) corev1.PodTemplateSpec {
	t := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:1"}}},
	}
	for _, m := range mods {
		m(&t.Spec)
	}
	return t
}

func createDeployment(ns, name string, ann map[string]string, mods ...podMod) *appsv1.Deployment {
	GinkgoHelper()
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: maps.Clone(ann)},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: template(name, mods),
		},
	}
	Expect(k8s.Create(suiteCtx, d)).To(Succeed())
	return d
}

func createStatefulSet(ns, name string, ann map[string]string, mods ...podMod) *appsv1.StatefulSet {
	GinkgoHelper()
	s := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: maps.Clone(ann)},
		Spec: appsv1.StatefulSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: template(name, mods),
		},
	}
	Expect(k8s.Create(suiteCtx, s)).To(Succeed())
	return s
}

func createDaemonSet(ns, name string, ann map[string]string, mods ...podMod) *appsv1.DaemonSet {
	GinkgoHelper()
	d := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: maps.Clone(ann)},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: template(name, mods),
		},
	}
	Expect(k8s.Create(suiteCtx, d)).To(Succeed())
	return d
}

// state is what a user sees of a workload: the resourceVersion moves on
// every write, the pod template on every rollout. (A Deployment's generation
// also moves when only its annotations change, so it does not count
// rollouts.)
type state struct {
	ResourceVersion string
	Digest          string
	Recorded        string
	Template        corev1.PodTemplateSpec
	// Rollouts counts the changes of the pod template since this state.
	Rollouts func() int
}

func templateOf(obj client.Object) corev1.PodTemplateSpec {
	switch o := obj.(type) {
	case *appsv1.Deployment:
		return o.Spec.Template
	case *appsv1.StatefulSet:
		return o.Spec.Template
	case *appsv1.DaemonSet:
		return o.Spec.Template
	case *batchv1.Job:
		return o.Spec.Template
	}
	Fail(fmt.Sprintf("%T is not a workload", obj))
	return corev1.PodTemplateSpec{}
}

func listOf(obj client.Object) client.ObjectList {
	switch obj.(type) {
	case *appsv1.Deployment:
		return &appsv1.DeploymentList{}
	case *appsv1.StatefulSet:
		return &appsv1.StatefulSetList{}
	}
	return &appsv1.DaemonSetList{}
}

func stateOf(obj client.Object) state {
	GinkgoHelper()
	Expect(k8s.Get(suiteCtx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
	tmpl := templateOf(obj)
	return state{
		ResourceVersion: obj.GetResourceVersion(),
		Digest:          stampOf(&tmpl),
		Recorded:        obj.GetAnnotations()[annotations.Recorded],
		Template:        tmpl,
	}
}

// stampOf is what ripple stamped on a pod template: the annotation, and
// the variables of the env-vars strategy.
func stampOf(tmpl *corev1.PodTemplateSpec) string {
	out := tmpl.Annotations[annotations.ConfigDigest]
	for _, c := range tmpl.Spec.Containers {
		for _, e := range c.Env {
			if strings.HasPrefix(e.Name, workload.EnvVarPrefix) {
				out += " " + e.Name + "=" + e.Value
			}
		}
	}
	return out
}

// withRollouts starts counting, through a watch from s, every change of the
// workload's pod template: each one is a rollout Kubernetes would make.
func withRollouts(obj client.Object, s state) state {
	GinkgoHelper()
	ctx, cancel := context.WithCancel(suiteCtx)
	DeferCleanup(cancel)
	w, err := watcher.Watch(ctx, listOf(obj), client.InNamespace(obj.GetNamespace()),
		client.MatchingFields{"metadata.name": obj.GetName()},
		&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: s.ResourceVersion}})
	Expect(err).NotTo(HaveOccurred())
	var n atomic.Int64
	go func() {
		defer GinkgoRecover()
		last := s.Template
		for ev := range w.ResultChan() {
			o, ok := ev.Object.(client.Object)
			if !ok {
				continue
			}
			if t := templateOf(o); !equality.Semantic.DeepEqual(t, last) {
				n.Add(1)
				last = t
			}
		}
	}()
	s.Rollouts = func() int { return int(n.Load()) }
	return s
}

// recorded waits until ripple has recorded the workload's config, and counts
// the rollouts from then on.
func recorded(obj client.Object) state {
	GinkgoHelper()
	var s state
	Eventually(func() string { s = stateOf(obj); return s.Recorded }, 30*time.Second).ShouldNot(BeEmpty(),
		"ripple records the config of %s on first sight", obj.GetName())
	return withRollouts(obj, s)
}

// expectRolledOnce waits for exactly one rollout after before, with a new
// digest, and no second one for a while.
func expectRolledOnce(obj client.Object, before state) state {
	GinkgoHelper()
	Eventually(before.Rollouts, 20*time.Second).Should(Equal(1), "%s rolls", obj.GetName())
	Consistently(before.Rollouts, quiet).Should(Equal(1), "%s rolls only once", obj.GetName())
	s := stateOf(obj)
	Expect(s.Digest).NotTo(Equal(before.Digest))
	return withRollouts(obj, s)
}

// expectNoRollout asserts the workload's pod template is never changed.
func expectNoRollout(obj client.Object, before state) {
	GinkgoHelper()
	Consistently(before.Rollouts, quiet).Should(BeZero(), "%s does not roll", obj.GetName())
}

// expectNoWrite asserts nothing at all is written to the workload.
func expectNoWrite(obj client.Object, before state) {
	GinkgoHelper()
	Consistently(func() string { return stateOf(obj).ResourceVersion }, quiet).Should(Equal(before.ResourceVersion),
		"nothing is written to %s", obj.GetName())
}

// eventsFor lists the reasons and notes of the Events about a workload.
func eventsFor(obj client.Object) func() []string {
	return func() []string {
		list, err := clientset.EventsV1().Events(obj.GetNamespace()).List(suiteCtx, metav1.ListOptions{})
		Expect(err).NotTo(HaveOccurred())
		var out []string
		for _, e := range list.Items {
			if e.Regarding.Name == obj.GetName() {
				out = append(out, e.Reason+": "+e.Note)
			}
		}
		return out
	}
}

var auto = map[string]string{annotations.Auto: "true"}
