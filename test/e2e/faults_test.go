package e2e

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	"github.com/ripple-controller/ripple/internal/annotations"
	"github.com/ripple-controller/ripple/internal/digest"
	"github.com/ripple-controller/ripple/internal/refs"
)

// fleet is a namespace of Deployments with no replicas, dep-i tracking
// ConfigMap cm-i, plus control Deployments tracking a ConfigMap nobody edits.
type fleet struct {
	ns       string
	size     int
	controls int
	mu       sync.Mutex
	rollouts map[string]int
}

func newFleet(ctx context.Context, size, controls int) *fleet {
	GinkgoHelper()
	f := &fleet{ns: newNamespace(ctx), size: size, controls: controls, rollouts: map[string]int{}}
	f.createConfigMap(ctx, "quiet")
	for i := range size {
		f.createConfigMap(ctx, fmt.Sprintf("cm-%d", i))
		f.createDeployment(ctx, fmt.Sprintf("dep-%d", i), fmt.Sprintf("cm-%d", i))
	}
	for i := range controls {
		f.createDeployment(ctx, fmt.Sprintf("control-%d", i), "quiet")
	}
	return f
}

func (f *fleet) createConfigMap(ctx context.Context, name string) {
	GinkgoHelper()
	_, err := clientset.CoreV1().ConfigMaps(f.ns).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"k": "initial"}}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
}

func (f *fleet) createDeployment(ctx context.Context, name, configMap string) {
	GinkgoHelper()
	tmpl := podTemplate(name)
	tmpl.Spec.Volumes = []corev1.Volume{{Name: "cfg", VolumeSource: corev1.VolumeSource{
		ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: configMap}}}}}
	_, err := clientset.AppsV1().Deployments(f.ns).Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{annotations.Auto: "true"}},
		Spec:       appsv1.DeploymentSpec{Replicas: ptr.To[int32](0), Selector: &metav1.LabelSelector{MatchLabels: appLabels(name)}, Template: tmpl},
	}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
}

// waitRecorded waits until ripple recorded every Deployment, then counts
// every later change of a pod template: each is one rollout.
func (f *fleet) waitRecorded(ctx context.Context) {
	GinkgoHelper()
	var rv string
	Eventually(func(g Gomega) {
		list, err := clientset.AppsV1().Deployments(f.ns).List(ctx, metav1.ListOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(list.Items).To(HaveLen(f.size + f.controls))
		for _, d := range list.Items {
			g.Expect(d.Annotations).To(HaveKey(annotations.Recorded), d.Name)
		}
		rv = list.ResourceVersion
	}).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())
	w, err := clientset.AppsV1().Deployments(f.ns).Watch(ctx, metav1.ListOptions{ResourceVersion: rv})
	Expect(err).NotTo(HaveOccurred())
	templates := map[string]corev1.PodTemplateSpec{}
	list, err := clientset.AppsV1().Deployments(f.ns).List(ctx, metav1.ListOptions{ResourceVersion: rv})
	Expect(err).NotTo(HaveOccurred())
	for _, d := range list.Items {
		templates[d.Name] = d.Spec.Template
	}
	go func() {
		defer GinkgoRecover()
		for ev := range w.ResultChan() {
			d, ok := ev.Object.(*appsv1.Deployment)
			if !ok || ev.Type != watch.Modified {
				continue
			}
			if !equality.Semantic.DeepEqual(templates[d.Name], d.Spec.Template) {
				templates[d.Name] = d.Spec.Template
				f.mu.Lock()
				f.rollouts[d.Name]++
				f.mu.Unlock()
			}
		}
	}()
	DeferCleanup(w.Stop)
}

func (f *fleet) rolloutsOf(name string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.rollouts[name]
}

// waitRolled waits until dep-i has rolled n times since waitRecorded.
func (f *fleet) waitRolled(ctx context.Context, i, n int) {
	GinkgoHelper()
	Eventually(func() int { return f.rolloutsOf(fmt.Sprintf("dep-%d", i)) }).WithContext(ctx).WithTimeout(time.Minute).
		Should(Equal(n), "dep-%d rolls once for each of the %d edits of cm-%d", i, n, i)
}

func (f *fleet) edit(ctx context.Context, i int, value string) {
	GinkgoHelper()
	Eventually(func() error {
		cm, err := clientset.CoreV1().ConfigMaps(f.ns).Get(ctx, fmt.Sprintf("cm-%d", i), metav1.GetOptions{})
		if err != nil {
			return err
		}
		cm.Data["k"] = value
		_, err = clientset.CoreV1().ConfigMaps(f.ns).Update(ctx, cm, metav1.UpdateOptions{})
		return err
	}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
}

// expectConverged waits until every dep-i carries the digest of cm-i's final
// data, checks no Deployment rolled more often than its ConfigMap was edited,
// and that the control Deployments never rolled.
func (f *fleet) expectConverged(ctx context.Context, edits map[int]int) {
	GinkgoHelper()
	keyed := rippleKeyed(ctx)
	Eventually(func(g Gomega) {
		for i := range f.size {
			cm, err := clientset.CoreV1().ConfigMaps(f.ns).Get(ctx, fmt.Sprintf("cm-%d", i), metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			want := ""
			if edits[i] > 0 {
				want = keyed.Workload([]digest.Entry{{Ref: refs.Ref{Kind: refs.ConfigMap, Name: cm.Name}, Sum: digest.ConfigMap(cm)}})
			}
			d, err := clientset.AppsV1().Deployments(f.ns).Get(ctx, fmt.Sprintf("dep-%d", i), metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			if want == "" {
				g.Expect(d.Spec.Template.Annotations).NotTo(HaveKey(annotations.ConfigDigest), "dep-%d never rolled", i)
			} else {
				g.Expect(d.Spec.Template.Annotations[annotations.ConfigDigest]).To(HaveSuffix(":"+want), "dep-%d has the digest of its final config", i)
			}
		}
	}).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())
	Consistently(func(g Gomega) {
		for i := range f.size {
			g.Expect(f.rolloutsOf(fmt.Sprintf("dep-%d", i))).To(BeNumerically("<=", edits[i]),
				"dep-%d rolled at most once per edit of cm-%d", i, i)
		}
		for i := range f.controls {
			g.Expect(f.rolloutsOf(fmt.Sprintf("control-%d", i))).To(BeZero(), "control-%d tracks nothing that changed", i)
		}
	}).WithContext(ctx).WithTimeout(3 * time.Second).Should(Succeed())
}

var _ = Describe("Faults", func() {
	It("loses no change and rolls nothing extra when ripple is SIGKILLed during a burst of 100 edits across 50 ConfigMaps", func(ctx SpecContext) {
		f := newFleet(ctx, 50, 5)
		first := startRipple()
		f.waitRecorded(ctx)

		edits := map[int]int{}
		for j := range 100 {
			if j == 50 {
				first.Kill()
			}
			f.edit(ctx, j%50, fmt.Sprintf("v%d", j))
			edits[j%50]++
		}
		startRipple()

		f.expectConverged(ctx, edits)
	}, SpecTimeout(8*time.Minute))

	It("hands over to the standby within the lease duration when the leader is killed, losing and doubling nothing", func(ctx SpecContext) {
		const lease, renew, retry = 8 * time.Second, 6 * time.Second, time.Second
		f := newFleet(ctx, 10, 2)
		ha := []string{"--enable-ha", "--leader-election-namespace=" + f.ns, "--leader-election-id=ripple-e2e",
			"--leader-election-lease-duration=" + lease.String(), "--leader-election-renew-deadline=" + renew.String(),
			"--leader-election-retry-period=" + retry.String()}
		replicas := []*rippleProcess{startRipple(ha...), startRipple(ha...)}
		waitLeader(ctx, replicas, nil)
		f.waitRecorded(ctx)

		edits := map[int]int{}
		for j := range 20 {
			if j == 10 {
				// On a busy machine a leader can miss its renew deadline and
				// exit before the kill: the kill must hit the replica that
				// leads now, with a standby beside it.
				replicas = replaceExited(replicas, ha)
				leader := waitLeader(ctx, replicas, nil)
				holder := leaseHolder(ctx, f.ns)
				leader.Kill()
				killed := time.Now()
				// The standby sees the lease expire up to one retry period
				// late and takes it at its next try, each try jittered by
				// up to 1.2x; the rest is slack for API latency under load.
				Eventually(func() string { return leaseHolder(ctx, f.ns) }).WithContext(ctx).
					WithTimeout(lease+5*retry).WithPolling(100*time.Millisecond).ShouldNot(Equal(holder), "the killed leader was %s", holder)
				GinkgoWriter.Printf("standby took the lease %s after the leader was killed (lease duration %s)\n", time.Since(killed), lease)
				waitLeader(ctx, replicas, leader)
			}
			f.edit(ctx, j%10, fmt.Sprintf("v%d", j))
			edits[j%10]++
			// The leader is killed within the debounce window of the last
			// edit before the kill, so the standby must roll it: that
			// edit's rollout is awaited with cm-9's next edit.
			if j != 9 {
				f.waitRolled(ctx, j%10, edits[j%10])
			}
		}

		f.expectConverged(ctx, edits)
	}, SpecTimeout(8*time.Minute))

	It("recovers without a restart when kube-apiserver is away for 20 s, and reloads edits made after it returns", func(ctx SpecContext) {
		f := newFleet(ctx, 5, 2)
		p := startRipple()
		f.waitRecorded(ctx)

		// A stop that ends in SIGKILL is still an outage, which is the point.
		_ = env.APIServer.Stop()
		Expect(env.APIServer.Running()).To(BeFalse())
		// The outage's length is what the spec is about: nothing ends it
		// early, and ripple must stay up all through it.
		Consistently(p.done).WithContext(ctx).WithTimeout(20*time.Second).WithPolling(500*time.Millisecond).
			ShouldNot(BeClosed(), "ripple keeps running while the API server is away")
		Expect(env.APIServer.Start(ctx)).To(Succeed())
		// The other specs share this cluster: leave it with every node Ready.
		DeferCleanup(func(ctx SpecContext) {
			Eventually(func(g Gomega) {
				nodes, err := clientset.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
				g.Expect(err).NotTo(HaveOccurred())
				for _, n := range nodes.Items {
					g.Expect(n.Spec.Taints).To(BeEmpty(), "node %s is tainted", n.Name)
					for _, c := range n.Status.Conditions {
						if c.Type == corev1.NodeReady {
							g.Expect(c.Status).To(Equal(corev1.ConditionTrue), "node %s is Ready", n.Name)
						}
					}
				}
			}).WithContext(ctx).WithTimeout(3 * time.Minute).Should(Succeed())
		}, NodeTimeout(4*time.Minute))
		Expect(p.done).NotTo(BeClosed(), "ripple kept running while the API server was away")

		edits := map[int]int{}
		for i := range 5 {
			f.edit(ctx, i, "after")
			edits[i]++
		}
		f.expectConverged(ctx, edits)
		Expect(p.done).NotTo(BeClosed())
	}, SpecTimeout(6*time.Minute))
})

func leaseHolder(ctx context.Context, ns string) string {
	l, err := clientset.CoordinationV1().Leases(ns).Get(ctx, "ripple-e2e", metav1.GetOptions{})
	if err != nil || l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// replaceExited starts a new replica with args in place of each one that
// has exited.
func replaceExited(replicas []*rippleProcess, args []string) []*rippleProcess {
	GinkgoHelper()
	out := make([]*rippleProcess, 0, len(replicas))
	for _, r := range replicas {
		if r.exited() {
			GinkgoWriter.Printf("replica logging to %s had exited; starting another\n", r.LogPath)
			r = startRipple(args...)
		}
		out = append(out, r)
	}
	return out
}

// waitLeader returns the running replica whose log says it became the
// leader, other than not. (A leader that missed its renew deadline on a
// busy machine exits, and its log still says it was elected.)
func waitLeader(ctx context.Context, replicas []*rippleProcess, not *rippleProcess) *rippleProcess {
	GinkgoHelper()
	var leader *rippleProcess
	Eventually(func() *rippleProcess {
		for _, r := range replicas {
			if r == not || r.exited() {
				continue
			}
			if log, err := os.ReadFile(r.LogPath); err == nil && strings.Contains(string(log), "Elected leader") {
				leader = r
			}
		}
		return leader
	}).WithContext(ctx).WithTimeout(time.Minute).ShouldNot(BeNil())
	return leader
}
