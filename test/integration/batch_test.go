package integration

import (
	"context"
	"maps"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ripple-controller/ripple/internal/annotations"
	"github.com/ripple-controller/ripple/internal/workload"
)

// The control plane runs no CronJob, Job or garbage collector controller:
// these specs play them where the behaviour needs them (a CronJob's active
// Jobs, a Job's completion, the removal of foregroundDeletion).

// batchWait bounds what a spec waits for ripple: long enough for a loaded
// 2-core machine running the suite in parallel.
const batchWait = 20 * time.Second

// forbiddenWait covers ripple's 5 s re-check of a CronJob under Forbid.
const forbiddenWait = 30 * time.Second

func waitFor(actual any) AsyncAssertion {
	return Eventually(actual).WithTimeout(batchWait)
}

func jobPod(mods []podMod) corev1.PodTemplateSpec {
	t := template("batch", mods)
	t.Labels = nil
	t.Spec.RestartPolicy = corev1.RestartPolicyNever
	return t
}

func createCronJob(ns, name string, ann map[string]string, mods ...podMod) *batchv1.CronJob {
	GinkgoHelper()
	cj := &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: maps.Clone(ann)},
		Spec: batchv1.CronJobSpec{Schedule: "0 0 1 1 *", JobTemplate: batchv1.JobTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"team": "batch"}, Annotations: map[string]string{"note": "kept"}},
			Spec:       batchv1.JobSpec{Template: jobPod(mods)},
		}},
	}
	Expect(k8s.Create(suiteCtx, cj)).To(Succeed())
	return cj
}

func createJob(ns, name string, ann map[string]string, mods ...podMod) *batchv1.Job {
	GinkgoHelper()
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: maps.Clone(ann), Labels: map[string]string{"app": "migrate"}},
		Spec:       batchv1.JobSpec{BackoffLimit: ptr.To[int32](3), Template: jobPod(mods)},
	}
	Expect(k8s.Create(suiteCtx, job)).To(Succeed())
	return job
}

// jobsIn lists the names of the Jobs in ns.
func jobsIn(ns string) func() []string {
	return func() []string {
		list := &batchv1.JobList{}
		Expect(k8s.List(suiteCtx, list, client.InNamespace(ns))).To(Succeed())
		var out []string
		for _, j := range list.Items {
			out = append(out, j.Name)
		}
		return out
	}
}

func recordOf(obj client.Object) func() string {
	return func() string {
		if err := k8s.Get(suiteCtx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return ""
		}
		return obj.GetAnnotations()[annotations.Recorded]
	}
}

func expectRecorded(obj client.Object) string {
	GinkgoHelper()
	waitFor(recordOf(obj)).ShouldNot(BeEmpty())
	return recordOf(obj)()
}

// removeBatchLeftovers lets a spec's namespace empty: the finalizers of a
// Job being recreated wait for controllers this control plane lacks.
func removeBatchLeftovers(ns string) {
	ctx := context.Background()
	list := &batchv1.JobList{}
	_ = k8s.List(ctx, list, client.InNamespace(ns))
	for i := range list.Items {
		if j := &list.Items[i]; len(j.Finalizers) > 0 {
			_ = k8s.Patch(ctx, j, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`)))
		}
	}
	_ = k8s.DeleteAllOf(ctx, &batchv1.Job{}, client.InNamespace(ns), client.PropagationPolicy(metav1.DeletePropagationBackground))
	_ = k8s.DeleteAllOf(ctx, &batchv1.CronJob{}, client.InNamespace(ns))
}

func newBatchNamespace() string {
	GinkgoHelper()
	ns := newNamespace(nil)
	DeferCleanup(removeBatchLeftovers, ns)
	return ns
}

var _ = Describe("CronJobs", func() {
	It("records a CronJob at first sight without running a Job", func() {
		ns := newBatchNamespace()
		createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		cj := createCronJob(ns, "nightly", auto, envFromConfigMap("cfg"))
		startRipple()
		expectRecorded(cj)
		Consistently(jobsIn(ns), quiet).Should(BeEmpty())
	})

	DescribeTable("runs one Job from the jobTemplate, owned by the CronJob, when its config changes (Reloader's cases)",
		func(ann map[string]string, useSecret bool, mod func(string) podMod) {
			ns := newBatchNamespace()
			var change func()
			if useSecret {
				s := createSecret(ns, "cfg", map[string]string{"k": "1"})
				change = func() { setSecretData(s, "k", "2") }
			} else {
				cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
				change = func() { setData(cm, "k", "2") }
			}
			cj := createCronJob(ns, "nightly", ann, mod("cfg"))
			startRipple()
			expectRecorded(cj)
			change()
			waitFor(jobsIn(ns)).Should(ConsistOf(MatchRegexp(`^nightly-reload-[0-9a-f]{8}$`)))
			list := &batchv1.JobList{}
			Expect(k8s.List(suiteCtx, list, client.InNamespace(ns))).To(Succeed())
			job := list.Items[0]
			owner := metav1.GetControllerOf(&job)
			Expect(owner).NotTo(BeNil())
			Expect(owner.UID).To(Equal(cj.UID))
			Expect(job.Annotations).To(HaveKeyWithValue("cronjob.kubernetes.io/instantiate", "manual"))
			Expect(job.Annotations).To(HaveKeyWithValue("note", "kept"))
			Expect(job.Annotations[annotations.ReloadCause]).To(ContainSubstring("cfg"))
			Expect(job.Labels).To(HaveKeyWithValue("team", "batch"))
			Expect(job.Spec.Template.Annotations).To(HaveKey(annotations.ConfigDigest))
			waitFor(eventsFor(cj)).Should(ContainElement(And(HavePrefix("Reloaded: Created Job "), ContainSubstring(job.Name))))
			Consistently(jobsIn(ns), quiet).Should(HaveLen(1), "one change runs one Job")
		},
		Entry("ConfigMap named by the reload annotation", map[string]string{annotations.ConfigMapReload: "cfg"}, false, envFromConfigMap),
		Entry("Secret named by the reload annotation", map[string]string{annotations.SecretReload: "cfg"}, true, envFromSecret),
		Entry("auto and a ConfigMap", auto, false, envFromConfigMap),
		Entry("auto and a ConfigMap key reference", auto, false, envConfigMapKey),
		Entry("auto and a Secret key reference", auto, true, envSecretKey),
	)

	It("runs one Job for two edits within the debounce window and none for a labels-only edit", func() {
		ns := newBatchNamespace()
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		cj := createCronJob(ns, "nightly", auto, envFromConfigMap("cfg"))
		startRipple("--debounce=1s")
		expectRecorded(cj)
		relabel(cm, "x")
		Consistently(jobsIn(ns), quiet).Should(BeEmpty())
		setData(cm, "k", "2")
		setData(cm, "k", "3")
		waitFor(jobsIn(ns)).Should(HaveLen(1))
		Consistently(jobsIn(ns), quiet).Should(HaveLen(1))
	})

	It("starts no Job for a suspended CronJob, records the change and says why", func() {
		ns := newBatchNamespace()
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		cj := createCronJob(ns, "nightly", auto, envFromConfigMap("cfg"))
		update(cj, func(c *batchv1.CronJob) { c.Spec.Suspend = ptr.To(true) })
		startRipple()
		before := expectRecorded(cj)
		setData(cm, "k", "2")
		waitFor(recordOf(cj)).ShouldNot(Equal(before))
		waitFor(eventsFor(cj)).Should(ContainElement(And(HavePrefix("ReloadSkipped: "), ContainSubstring("suspended"))))
		Consistently(jobsIn(ns), quiet).Should(BeEmpty())
	})

	It("waits for the running Job under concurrencyPolicy Forbid, then runs one", func() {
		ns := newBatchNamespace()
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		cj := createCronJob(ns, "nightly", auto, envFromConfigMap("cfg"))
		update(cj, func(c *batchv1.CronJob) { c.Spec.ConcurrencyPolicy = batchv1.ForbidConcurrent })
		setActive := func(active []corev1.ObjectReference) {
			waitFor(func() error {
				if err := k8s.Get(suiteCtx, client.ObjectKeyFromObject(cj), cj); err != nil {
					return err
				}
				cj.Status.Active = active
				return k8s.Status().Update(suiteCtx, cj)
			}).Should(Succeed())
		}
		setActive([]corev1.ObjectReference{{Kind: "Job", Namespace: ns, Name: "nightly-123", APIVersion: "batch/v1"}})
		startRipple()
		expectRecorded(cj)
		setData(cm, "k", "2")
		Consistently(jobsIn(ns), 3*time.Second).Should(BeEmpty(), "no second Job while one runs")
		setActive(nil)
		Eventually(jobsIn(ns), forbiddenWait).Should(HaveLen(1))
	})

	DescribeTable("runs no second Job under concurrencyPolicy Forbid while the one it started runs, then runs one", func(flags ...string) {
		ns := newBatchNamespace()
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		cj := createCronJob(ns, "nightly", auto, envFromConfigMap("cfg"))
		update(cj, func(c *batchv1.CronJob) { c.Spec.ConcurrencyPolicy = batchv1.ForbidConcurrent })
		ripple := startRipple(flags...)
		expectRecorded(cj)
		setData(cm, "k", "2")
		waitFor(jobsIn(ns)).Should(HaveLen(1))
		first := jobNow(ns, jobsIn(ns)()[0])()
		setData(cm, "k", "3")
		Consistently(jobsIn(ns), 7*time.Second).Should(HaveLen(1), "the CronJob controller does not list ripple's Job as active")
		Expect(strings.Count(string(ripple.logs.Contents()), "Waiting to roll")).To(Equal(1), "the wait is logged once, not at each re-check")
		setJobStatus(first, batchv1.JobSuccessCriteriaMet, batchv1.JobComplete)
		Eventually(jobsIn(ns), forbiddenWait).Should(HaveLen(2))
	},
		Entry("reading the Jobs ripple caches"),
		Entry("reading them from the API server when ripple caches none", "--ignored-workload-types=jobs"),
	)

	It("starts no Job while the CronJob's record cannot be written, and runs one once it can", func() {
		ns := newBatchNamespace()
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		cj := createCronJob(ns, "nightly", auto, envFromConfigMap("cfg"))
		startRipple()
		expectRecorded(cj)
		allow := refuse(ns, admissionregistrationv1.Update, "batch", "cronjobs", func() error {
			probe := &batchv1.CronJob{}
			Expect(k8s.Get(suiteCtx, client.ObjectKeyFromObject(cj), probe)).To(Succeed())
			return k8s.Update(suiteCtx, probe, client.DryRunAll)
		})
		setData(cm, "k", "2")
		waitFor(eventsFor(cj)).Should(ContainElement(And(HavePrefix("ReloadFailed: "), ContainSubstring("frozen by the test"))))
		Consistently(jobsIn(ns), quiet).Should(BeEmpty(), "no Job runs for a change ripple could not record")

		allow()
		waitFor(jobsIn(ns)).Should(HaveLen(1))
		Consistently(jobsIn(ns), quiet).Should(HaveLen(1))
	})

	It("runs the Job of a recorded change the API server refused, once it admits it, across a restart of ripple", func() {
		ns := newBatchNamespace()
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		cj := createCronJob(ns, "nightly", auto, envFromConfigMap("cfg"))
		log := captureLog()
		r := startRipple()
		before := expectRecorded(cj)
		allow := refuseJobs(ns)
		setData(cm, "k", "2")
		waitFor(eventsFor(cj)).Should(ContainElement(And(HavePrefix("ReloadFailed: "), ContainSubstring("frozen by the test"))))
		waitFor(recordOf(cj)).ShouldNot(Equal(before))

		r.stop()
		addr := freeAddress()
		startRipple("--namespaces="+ns, "--metrics-bind-address="+addr)
		Consistently(log.lines("panic"), quiet).Should(BeEmpty(), "a run put off is retried, without a panic")
		// The counter is the test process's, which earlier specs added to.
		runs := metric(addr, `ripple_reloads_total{kind="CronJob",result="success"}`)
		counted := max(runs(), 0)
		allow()

		waitFor(jobsIn(ns)).Should(ConsistOf(MatchRegexp(`^nightly-reload-[0-9a-f]{8}$`)))
		waitFor(eventsFor(cj)).Should(ContainElement(And(HavePrefix("Reloaded: Created Job nightly-reload-"), ContainSubstring("cfg"))))
		waitFor(runs).Should(Equal(counted+1), "the run is counted when it goes")
		Consistently(jobsIn(ns), quiet).Should(HaveLen(1))
	})

	It("reports a run as skipped, not created, when a record written back names a change whose Job exists", func() {
		ns := newBatchNamespace()
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		cj := createCronJob(ns, "nightly", auto, envFromConfigMap("cfg"))
		startRipple()
		old := expectRecorded(cj)
		setData(cm, "k", "2")
		waitFor(jobsIn(ns)).Should(HaveLen(1))
		waitFor(recordOf(cj)).ShouldNot(Equal(old))

		// As a GitOps tool writes back the manifest it holds.
		update(cj, func(c *batchv1.CronJob) {
			c.Annotations[annotations.Recorded] = old
			c.Annotations["synced"] = "1"
		})
		waitFor(eventsFor(cj)).Should(ContainElement(And(HavePrefix("ReloadSkipped: "), ContainSubstring("exists already"))))
		Expect(countPrefix(eventsFor(cj)(), "Reloaded")).To(Equal(1))
		Consistently(jobsIn(ns), quiet).Should(HaveLen(1))
	})

	It("reports a run whose Job started as reloaded when its run annotation cannot be removed yet, and removes it later", func() {
		ns := newBatchNamespace()
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		cj := createCronJob(ns, "nightly", auto, envFromConfigMap("cfg"))
		startRipple()
		expectRecorded(cj)
		// Refuse the update that removes the run annotation, and only it.
		probe := createCronJob(ns, "probe", map[string]string{annotations.Run: "{}"})
		allow := refuseUnless(ns, admissionregistrationv1.Update, "batch", "cronjobs",
			`!has(oldObject.metadata.annotations) || !('`+annotations.Run+`' in oldObject.metadata.annotations) || `+
				`(has(object.metadata.annotations) && '`+annotations.Run+`' in object.metadata.annotations)`,
			func() error {
				Expect(k8s.Get(suiteCtx, client.ObjectKeyFromObject(probe), probe)).To(Succeed())
				delete(probe.Annotations, annotations.Run)
				return k8s.Update(suiteCtx, probe, client.DryRunAll)
			})
		setData(cm, "k", "2")
		waitFor(jobsIn(ns)).Should(HaveLen(1))
		waitFor(eventsFor(cj)).Should(ContainElement(HavePrefix("Reloaded: Created Job nightly-reload-")))
		Expect(eventsFor(cj)()).NotTo(ContainElement(HavePrefix("ReloadFailed: Rolling")))
		waitFor(eventsFor(cj)).Should(ContainElement(And(HavePrefix("ReloadFailed: Carrying on a rollout failed"), ContainSubstring("frozen by the test"))),
			"the removal refused again is said, not only logged")

		allow()
		waitFor(func() map[string]string {
			Expect(k8s.Get(suiteCtx, client.ObjectKeyFromObject(cj), cj)).To(Succeed())
			return cj.Annotations
		}).ShouldNot(HaveKey(annotations.Run))
		Consistently(jobsIn(ns), quiet).Should(HaveLen(1))
		Expect(countPrefix(eventsFor(cj)(), "Reloaded")).To(Equal(1))
	})

	It("runs the Job of an Indexed CronJob with a long name, whose pods' host names take the Job's name and an index", func() {
		ns := newBatchNamespace()
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		cj := createCronJob(ns, strings.Repeat("a", 50), auto, envFromConfigMap("cfg"))
		makeIndexed(cj)
		startRipple()
		expectRecorded(cj)
		setData(cm, "k", "2")
		waitFor(jobsIn(ns)).Should(HaveLen(1))
		Expect(eventsFor(cj)()).NotTo(ContainElement(HavePrefix("ReloadFailed")))
	})

	It("runs one Job for each of two CronJobs whose long names differ only at the end, recorded together", func() {
		ns := newBatchNamespace()
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		name := strings.Repeat("a", 51)
		first := createCronJob(ns, name+"1", auto, envFromConfigMap("cfg"))
		second := createCronJob(ns, name+"2", auto, envFromConfigMap("cfg"))
		startRipple()
		expectRecorded(first)
		expectRecorded(second)
		setData(cm, "k", "2")
		waitFor(jobsIn(ns)).Should(HaveLen(2))
		Expect(eventsFor(second)()).NotTo(ContainElement(HavePrefix("ReloadSkipped")))
	})

	It("starts a recorded change's Job only once the Job running under concurrencyPolicy Forbid ends", func() {
		ns := newBatchNamespace()
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		cj := createCronJob(ns, "nightly", auto, envFromConfigMap("cfg"))
		update(cj, func(c *batchv1.CronJob) { c.Spec.ConcurrencyPolicy = batchv1.ForbidConcurrent })
		startRipple()
		expectRecorded(cj)
		allow := refuseJobsUnless(ns, "object.metadata.name == 'nightly-123'")
		setData(cm, "k", "2")
		waitFor(eventsFor(cj)).Should(ContainElement(And(HavePrefix("ReloadFailed: "), ContainSubstring("frozen by the test"))))

		// A run the CronJob controller started meanwhile, as its own Job.
		running := createJob(ns, "nightly-123", nil, envFromConfigMap("cfg"))
		update(running, func(j *batchv1.Job) {
			j.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "CronJob", Name: cj.Name, UID: cj.UID, Controller: ptr.To(true)}}
		})
		allow()
		Consistently(jobsIn(ns), 3*time.Second).Should(ConsistOf("nightly-123"), "no second Job while one runs")
		setJobStatus(jobNow(ns, "nightly-123")(), batchv1.JobSuccessCriteriaMet, batchv1.JobComplete)
		Eventually(jobsIn(ns), forbiddenWait).Should(HaveLen(2))
	})

	It("runs the pending change of an Indexed CronJob whose Job an earlier ripple named too long, under a name that fits", func() {
		ns := newBatchNamespace()
		createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		name := strings.Repeat("a", 52)
		run := `{"job":"` + name[:47] + `-reload-0123abcd","stamp":"s","cause":"ConfigMap/cfg"}`
		cj := createCronJob(ns, name, map[string]string{annotations.Auto: "true", annotations.Run: run}, envFromConfigMap("cfg"))
		makeIndexed(cj)
		startRipple()
		waitFor(jobsIn(ns)).Should(ConsistOf(name[:45] + "-reload-0123abcd"))
		waitFor(eventsFor(cj)).Should(ContainElement(HavePrefix("Reloaded: Created Job " + name[:45] + "-reload-0123abcd")))
	})

	It("starts no second Job for a pending change whose Job runs under the name it had before its CronJob became Indexed", func() {
		ns := newBatchNamespace()
		createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		name := strings.Repeat("a", 52)
		long := name[:47] + "-reload-0123abcd"
		run := `{"job":"` + long + `","stamp":"s","cause":"ConfigMap/cfg"}`
		cj := createCronJob(ns, name, map[string]string{annotations.Auto: "true", annotations.Run: run}, envFromConfigMap("cfg"))
		started := createJob(ns, long, nil, envFromConfigMap("cfg"))
		update(started, func(j *batchv1.Job) {
			j.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "CronJob", Name: cj.Name, UID: cj.UID, Controller: ptr.To(true)}}
		})
		makeIndexed(cj)
		startRipple()
		waitFor(func() map[string]string {
			Expect(k8s.Get(suiteCtx, client.ObjectKeyFromObject(cj), cj)).To(Succeed())
			return cj.Annotations
		}).ShouldNot(HaveKey(annotations.Run))
		Consistently(jobsIn(ns), quiet).Should(ConsistOf(long))
	})

	DescribeTable("drops a run annotation that names no Job ripple could start, and starts none",
		func(run string) {
			ns := newBatchNamespace()
			createConfigMap(ns, "cfg", map[string]string{"k": "1"})
			cj := createCronJob(ns, "nightly", map[string]string{annotations.Auto: "true", annotations.Run: run}, envFromConfigMap("cfg"))
			startRipple()
			waitFor(func() map[string]string {
				Expect(k8s.Get(suiteCtx, client.ObjectKeyFromObject(cj), cj)).To(Succeed())
				return cj.Annotations
			}).ShouldNot(HaveKey(annotations.Run))
			Consistently(jobsIn(ns), quiet).Should(BeEmpty())
			Expect(eventsFor(cj)()).NotTo(ContainElement(HavePrefix("ReloadFailed")))
		},
		Entry("not ripple's JSON", "run it"),
		Entry("a name the API server refuses", `{"job":"Nightly_Run","stamp":"s","cause":"ConfigMap/cfg"}`),
		Entry("a name over 63 characters", `{"job":"`+strings.Repeat("n", 64)+`","stamp":"s","cause":"ConfigMap/cfg"}`),
	)

	It("starts no Job a recorded change still waits to run once its CronJob is being deleted", func() {
		ns := newBatchNamespace()
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		cj := createCronJob(ns, "nightly", auto, envFromConfigMap("cfg"))
		DeferCleanup(func() {
			_ = k8s.Patch(context.Background(), cj, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`)))
		})
		startRipple()
		before := expectRecorded(cj)
		allow := refuseJobs(ns)
		setData(cm, "k", "2")
		waitFor(recordOf(cj)).ShouldNot(Equal(before))
		waitFor(func() map[string]string {
			Expect(k8s.Get(suiteCtx, client.ObjectKeyFromObject(cj), cj)).To(Succeed())
			return cj.Annotations
		}).Should(HaveKey(annotations.Run), "the change waits to run")
		// No garbage collector runs here: the CronJob stays, being deleted.
		Expect(k8s.Delete(suiteCtx, cj, client.PropagationPolicy(metav1.DeletePropagationForeground))).To(Succeed())
		allow()
		update(cj, func(c *batchv1.CronJob) { c.Labels = map[string]string{"poke": "1"} })
		Consistently(jobsIn(ns), quiet).Should(BeEmpty(), "a CronJob being deleted runs nothing more")
	})

	// A suspended CronJob's record, written without a run, passes none of
	// ripple's event filters: a change set back before it reached the cache
	// compared equal to the record before, which was left naming the change,
	// and the CronJob ran a Job for it once resumed.
	It("records a change set back while suspended before its record reached ripple's cache, and runs no Job once resumed", func() {
		ns := newBatchNamespace()
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		cj := createCronJob(ns, "nightly", auto, envFromConfigMap("cfg"))
		update(cj, func(c *batchv1.CronJob) { c.Spec.Suspend = ptr.To(true) })
		slow := lagging("/cronjobs")
		startRipple()
		before := expectRecorded(cj)
		slow.delay.Store(int64(time.Second))

		setData(cm, "k", "2")
		waitFor(recordOf(cj)).ShouldNot(Equal(before))
		changed := recordOf(cj)()
		setData(cm, "k", "1")
		waitFor(recordOf(cj)).ShouldNot(Equal(changed), "the change set back is recorded")
		slow.delay.Store(0)
		update(cj, func(c *batchv1.CronJob) { c.Spec.Suspend = ptr.To(false) })
		Consistently(jobsIn(ns), quiet).Should(BeEmpty())
	})

	// The jobTemplate's stamp names the config of ripple's last run, not
	// the one a change held while suspended left to the next runs: read
	// against it, a lost record ran a Job for a change already recorded.
	It("runs no Job when its record is lost after a change held while suspended and the CronJob resumed", func() {
		ns := newBatchNamespace()
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		cj := createCronJob(ns, "nightly", auto, envFromConfigMap("cfg"))
		first := startRipple()
		expectRecorded(cj)
		setData(cm, "k", "2")
		waitFor(jobsIn(ns)).Should(HaveLen(1))
		// Stamps tell time in whole seconds, and a tie goes to the
		// template's: the held change comes in a later second than the run.
		// ripple's clock is the API server's, read off the whole-second
		// Date of its answers, so up to a second behind this one.
		ran := time.Now().Unix()
		Eventually(func() int64 { return time.Now().Unix() }).WithTimeout(5 * time.Second).Should(BeNumerically(">", ran+1))
		update(cj, func(c *batchv1.CronJob) { c.Spec.Suspend = ptr.To(true) })
		before := recordOf(cj)()
		setData(cm, "k", "3")
		waitFor(recordOf(cj)).ShouldNot(Equal(before))
		waitFor(eventsFor(cj)).Should(ContainElement(And(HavePrefix("ReloadSkipped: "), ContainSubstring("suspended"))))
		update(cj, func(c *batchv1.CronJob) { c.Spec.Suspend = ptr.To(false) })
		first.stop()

		update(cj, func(c *batchv1.CronJob) { delete(c.Annotations, annotations.Recorded) })
		startRipple()
		expectRecorded(cj)
		Consistently(jobsIn(ns), quiet).Should(HaveLen(1), "nothing changed since the last record")
	})

	It("starts no Job a recorded change still waits to run once its CronJob is suspended", func() {
		ns := newBatchNamespace()
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		cj := createCronJob(ns, "nightly", auto, envFromConfigMap("cfg"))
		startRipple()
		expectRecorded(cj)
		allow := refuseJobs(ns)
		setData(cm, "k", "2")
		waitFor(eventsFor(cj)).Should(ContainElement(And(HavePrefix("ReloadFailed: "), ContainSubstring("frozen by the test"))))

		update(cj, func(c *batchv1.CronJob) { c.Spec.Suspend = ptr.To(true) })
		allow()
		waitFor(eventsFor(cj)).Should(ContainElement(And(HavePrefix("ReloadSkipped: Not run after a change of ConfigMap/cfg"), ContainSubstring("suspended"))))
		Consistently(jobsIn(ns), quiet).Should(BeEmpty())
	})

	DescribeTable("runs no Job, and only stamps the jobTemplate, with the template strategy",
		func(ann map[string]string, flags []string, wantJob bool) {
			ns := newBatchNamespace()
			cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
			cj := createCronJob(ns, "nightly", ann, envFromConfigMap("cfg"))
			startRipple(flags...)
			expectRecorded(cj)
			stamp := func() string {
				Expect(k8s.Get(suiteCtx, client.ObjectKeyFromObject(cj), cj)).To(Succeed())
				return cj.Spec.JobTemplate.Spec.Template.Annotations[annotations.ConfigDigest]
			}
			setData(cm, "k", "2")
			if wantJob {
				waitFor(jobsIn(ns)).Should(HaveLen(1))
				job := jobNow(ns, jobsIn(ns)()[0])()
				waitFor(stamp).Should(Equal(job.Spec.Template.Annotations[annotations.ConfigDigest]), "the jobTemplate says what ripple's last run used")
				return
			}
			waitFor(stamp).ShouldNot(BeEmpty())
			Consistently(jobsIn(ns), quiet).Should(BeEmpty())
		},
		Entry("by annotation", map[string]string{annotations.Auto: "true", annotations.CronJobStrategy: "template"}, nil, false),
		Entry("by flag", auto, []string{"--cronjob-strategy=template"}, false),
		Entry("the annotation job overrides the flag", map[string]string{annotations.Auto: "true", annotations.CronJobStrategy: "job"},
			[]string{"--cronjob-strategy=template"}, true),
	)

	It("runs at most one Job per minimum rollout interval, with every change made meanwhile", func() {
		ns := newBatchNamespace()
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		cj := createCronJob(ns, "nightly", map[string]string{annotations.Auto: "true", annotations.MinRolloutInterval: "4s"}, envFromConfigMap("cfg"))
		startRipple()
		expectRecorded(cj)
		setData(cm, "k", "2")
		waitFor(jobsIn(ns)).Should(HaveLen(1))
		setData(cm, "k", "3")
		setData(cm, "k", "4")
		Consistently(jobsIn(ns), 2*time.Second).Should(HaveLen(1), "held within the interval")
		waitFor(jobsIn(ns)).Should(HaveLen(2))
		Consistently(jobsIn(ns), quiet).Should(HaveLen(2))
	})

	It("runs a Job for a change made while its record was lost, as the jobTemplate's stamp tells", func() {
		ns := newBatchNamespace()
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		cj := createCronJob(ns, "nightly", auto, envFromConfigMap("cfg"))
		first := startRipple()
		expectRecorded(cj)
		setData(cm, "k", "2")
		waitFor(jobsIn(ns)).Should(HaveLen(1))
		job := jobNow(ns, jobsIn(ns)()[0])()
		waitFor(func() string {
			Expect(k8s.Get(suiteCtx, client.ObjectKeyFromObject(cj), cj)).To(Succeed())
			return cj.Spec.JobTemplate.Spec.Template.Annotations[annotations.ConfigDigest]
		}).Should(Equal(job.Spec.Template.Annotations[annotations.ConfigDigest]), "ripple wrote the record and the stamp after the Job")
		first.stop()
		setData(cm, "k", "3")
		update(cj, func(c *batchv1.CronJob) { delete(c.Annotations, annotations.Recorded) })
		startRipple()
		waitFor(jobsIn(ns)).Should(HaveLen(2))
		Consistently(jobsIn(ns), quiet).Should(HaveLen(2))
	})

	It("reports an unknown strategy and applies the flag's, and refuses an unknown flag value", func() {
		Expect(startRippleErr("--cronjob-strategy=nope")).To(MatchError(ContainSubstring("--cronjob-strategy")))
		ns := newBatchNamespace()
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		cj := createCronJob(ns, "nightly", map[string]string{annotations.Auto: "true", annotations.CronJobStrategy: "nope"}, envFromConfigMap("cfg"))
		startRipple()
		expectRecorded(cj)
		waitFor(eventsFor(cj)).Should(ContainElement(And(HavePrefix("InvalidAnnotation: "), ContainSubstring(annotations.CronJobStrategy))))
		setData(cm, "k", "2")
		waitFor(jobsIn(ns)).Should(HaveLen(1))
	})

	It("leaves CronJobs alone with --ignored-workload-types=cronjobs", func() {
		ns := newBatchNamespace()
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		cj := createCronJob(ns, "nightly", auto, envFromConfigMap("cfg"))
		dep := createDeployment(ns, "control", auto, envFromConfigMap("cfg"))
		startRipple("--ignored-workload-types=cronjobs")
		before := expectRecorded(dep)
		setData(cm, "k", "2")
		waitFor(recordOf(dep)).ShouldNot(Equal(before), "ripple saw the change")
		Consistently(jobsIn(ns), quiet).Should(BeEmpty())
		Expect(recordOf(cj)()).To(BeEmpty())
	})
})

// jobNow reads the Job of that name, whatever its UID.
func jobNow(ns, name string) func() *batchv1.Job {
	return func() *batchv1.Job {
		j := &batchv1.Job{}
		if err := k8s.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: name}, j); err != nil {
			return nil
		}
		return j
	}
}

// refuseJobs makes the API server refuse every Job created in ns until the
// returned func removes the policy.
func refuseJobs(ns string) (allow func()) {
	GinkgoHelper()
	return refuseJobsUnless(ns, "false")
}

// refuseJobsUnless is refuseJobs for the Jobs where the CEL expression
// admits is false.
func refuseJobsUnless(ns, admits string) (allow func()) {
	GinkgoHelper()
	return refuseUnless(ns, admissionregistrationv1.Create, "batch", "jobs", admits, func() error {
		j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "probe"}, Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{
			Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}}}
		return k8s.Create(suiteCtx, j, client.DryRunAll)
	})
}

// refuseJobsButDryRuns makes the API server refuse every Job created in ns
// but by a dry run, until the returned func removes the policy.
func refuseJobsButDryRuns(ns string) (allow func()) {
	GinkgoHelper()
	return refuseUnless(ns, admissionregistrationv1.Create, "batch", "jobs", "request.dryRun", func() error {
		j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "probe-"}, Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{
			Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}}}
		err := k8s.Create(suiteCtx, j)
		if err == nil {
			Expect(k8s.Delete(suiteCtx, j, client.PropagationPolicy(metav1.DeletePropagationBackground))).To(Succeed())
		}
		return err
	})
}

// owedJob makes ripple delete Job migrate in ns for a change and owe its
// recreation: the API server refuses the new Job after a dry run admitted
// it, until allow.
func owedJob(ns string) (job *batchv1.Job, r *rippleInstance, allow func()) {
	GinkgoHelper()
	cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
	job = createJob(ns, "migrate", auto, envFromConfigMap("cfg"))
	r = startRipple()
	expectRecorded(job)
	allow = refuseJobsButDryRuns(ns)
	setData(cm, "k", "2")
	actAsGarbageCollector(job)
	Eventually(r.logs, 30*time.Second).Should(gbytes.Say("recreating Job "+ns+"/migrate"), "the first tries are refused")
	return job, r, allow
}

// fillJobQuota puts ns under a quota of one Job, filled, with the status
// the quota controller, which the control plane does not run, would give
// it; the returned func frees it, as that controller does once the Job is
// gone.
func fillJobQuota(ns string) (freed func()) {
	GinkgoHelper()
	jobs := corev1.ResourceName("count/jobs.batch")
	quota := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "one-job"},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{jobs: resource.MustParse("1")}}}
	Expect(k8s.Create(suiteCtx, quota)).To(Succeed())
	setUsed := func(n string) {
		GinkgoHelper()
		waitFor(func() error {
			if err := k8s.Get(suiteCtx, client.ObjectKeyFromObject(quota), quota); err != nil {
				return err
			}
			quota.Status = corev1.ResourceQuotaStatus{Hard: quota.Spec.Hard, Used: corev1.ResourceList{jobs: resource.MustParse(n)}}
			return k8s.Status().Update(suiteCtx, quota)
		}).Should(Succeed())
	}
	setUsed("1")
	return func() { setUsed("0") }
}

// refuse makes the API server refuse every op on the v1 resource of group
// in ns, by an admission policy, until the returned func removes it. probe
// makes such a request as a dry run.
func refuse(ns string, op admissionregistrationv1.OperationType, group, resource string, probe func() error) (allow func()) {
	GinkgoHelper()
	return refuseUnless(ns, op, group, resource, "false", probe)
}

// refuseUnless is refuse for the requests where the CEL expression admits
// is false; probe makes a request it refuses.
func refuseUnless(ns string, op admissionregistrationv1.OperationType, group, resource, admits string, probe func() error) (allow func()) {
	GinkgoHelper()
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "refuse-" + resource + "-" + ns},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{op},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{group}, APIVersions: []string{"v1"}, Resources: []string{resource}},
				},
			}}},
			Validations: []admissionregistrationv1.Validation{{Expression: admits, Message: "frozen by the test"}},
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: policy.Name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        policy.Name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
			MatchResources: &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{corev1.LabelMetadataName: ns}}},
		},
	}
	Expect(k8s.Create(suiteCtx, policy)).To(Succeed())
	Expect(k8s.Create(suiteCtx, binding)).To(Succeed())
	waitFor(probe).Should(MatchError(ContainSubstring("frozen by the test")))
	removed := func() {
		_ = k8s.Delete(suiteCtx, binding)
		_ = k8s.Delete(suiteCtx, policy)
	}
	DeferCleanup(removed)
	return func() {
		GinkgoHelper()
		removed()
		waitFor(probe).Should(Succeed())
	}
}

// markedWhileDeletionRefused starts ripple on a running Job whose
// ConfigMap then changes while an admission policy refuses deletions in
// ns: ripple marks the Job and cannot delete it. allow lets deletions
// through again.
func markedWhileDeletionRefused(ns string) (job *batchv1.Job, ripple *rippleInstance, allow func()) {
	GinkgoHelper()
	cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
	job = createJob(ns, "migrate", auto, envFromConfigMap("cfg"))
	probe := createJob(ns, "probe", nil, envFromConfigMap("cfg"))
	ripple = startRipple()
	expectRecorded(job)
	allow = refuse(ns, admissionregistrationv1.Delete, "batch", "jobs", func() error {
		return k8s.Delete(suiteCtx, probe, client.DryRunAll)
	})
	setData(cm, "k", "2")
	waitFor(jobNow(ns, "migrate")).Should(HaveField("Annotations", HaveKey(annotations.Recreate)), "marked")
	waitFor(eventsFor(job)).Should(ContainElement(HavePrefix("ReloadFailed: ")), "its deletion refused")
	return job, ripple, allow
}

// actAsGarbageCollector removes foregroundDeletion once the Job is being
// deleted, as the garbage collector does when its pods are gone.
func actAsGarbageCollector(job *batchv1.Job) {
	GinkgoHelper()
	waitFor(func() []string {
		if j := jobNow(job.Namespace, job.Name)(); j != nil && j.UID == job.UID && j.DeletionTimestamp != nil {
			return j.Finalizers
		}
		return nil
	}).Should(ContainElements(metav1.FinalizerDeleteDependents, annotations.Recreate))
	update(job, func(j *batchv1.Job) {
		j.Finalizers = slices.DeleteFunc(j.Finalizers, func(f string) bool { return f == metav1.FinalizerDeleteDependents })
	})
}

func expectRecreated(old *batchv1.Job) *batchv1.Job {
	GinkgoHelper()
	waitFor(func() types.UID {
		if j := jobNow(old.Namespace, old.Name)(); j != nil {
			return j.UID
		}
		return ""
	}).Should(And(Not(BeEmpty()), Not(Equal(old.UID))))
	return jobNow(old.Namespace, old.Name)()
}

func setJobStatus(job *batchv1.Job, conditions ...batchv1.JobConditionType) {
	GinkgoHelper()
	waitFor(func() error {
		if err := k8s.Get(suiteCtx, client.ObjectKeyFromObject(job), job); err != nil {
			return err
		}
		now := metav1.Now()
		job.Status.StartTime = &now
		for _, c := range conditions {
			job.Status.Conditions = append(job.Status.Conditions, batchv1.JobCondition{Type: c, Status: corev1.ConditionTrue,
				LastProbeTime: now, LastTransitionTime: now, Reason: "Spec", Message: "set by the spec"})
		}
		switch {
		case slices.Contains(conditions, batchv1.JobComplete):
			job.Status.CompletionTime = &now
			job.Status.Succeeded = 1
		case slices.Contains(conditions, batchv1.JobSuccessCriteriaMet):
			job.Status.Succeeded = 1
		default:
			job.Status.Failed = 4
		}
		return k8s.Status().Update(suiteCtx, job)
	}).Should(Succeed())
}

var _ = Describe("Jobs", func() {
	It("records a Job at first sight without recreating it", func() {
		ns := newBatchNamespace()
		createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		job := createJob(ns, "migrate", auto, envFromConfigMap("cfg"))
		startRipple()
		expectRecorded(job)
		Consistently(func() types.UID { return jobNow(ns, "migrate")().UID }, quiet).Should(Equal(job.UID))
	})

	It("recreates a Job after its pods are gone, with the same spec, a stamp and an Event naming the change", func() {
		ns := newBatchNamespace()
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		job := createJob(ns, "migrate", map[string]string{annotations.ConfigMapReload: "cfg"}, envFromConfigMap("cfg"))
		startRipple()
		expectRecorded(job)
		setData(cm, "k", "2")
		Consistently(func() types.UID { return jobNow(ns, "migrate")().UID }, time.Second).Should(Equal(job.UID),
			"the old Job stays until the garbage collector has deleted its pods")
		actAsGarbageCollector(job)
		next := expectRecreated(job)

		Expect(*next.Spec.BackoffLimit).To(Equal(int32(3)))
		Expect(next.Spec.Template.Spec.Containers[0].EnvFrom).To(Equal(job.Spec.Template.Spec.Containers[0].EnvFrom))
		Expect(next.Labels).To(HaveKeyWithValue("app", "migrate"))
		for _, generated := range []string{"controller-uid", batchv1.ControllerUidLabel, "job-name", batchv1.JobNameLabel} {
			Expect(next.Labels[generated]).NotTo(Equal(string(job.UID)), "%s is the new Job's own", generated)
			Expect(next.Spec.Template.Labels[generated]).NotTo(Equal(string(job.UID)), "%s is the new Job's own", generated)
		}
		Expect(ptr.Deref(next.Spec.ManualSelector, false)).To(BeFalse())
		Expect(next.Spec.Selector.MatchLabels).To(HaveKeyWithValue(batchv1.ControllerUidLabel, string(next.UID)), "a selector of its own")
		Expect(next.Spec.Template.Annotations).To(HaveKey(annotations.ConfigDigest))
		Expect(next.Annotations[annotations.ReloadCause]).To(ContainSubstring("cfg"))
		Expect(next.Annotations).NotTo(HaveKey(annotations.Recreate))
		Expect(next.Finalizers).NotTo(ContainElement(annotations.Recreate))
		waitFor(eventsFor(next)).Should(ContainElement(And(HavePrefix("Reloaded: Recreated"), ContainSubstring("cfg"))))
		Consistently(func() types.UID { return jobNow(ns, "migrate")().UID }, quiet).Should(Equal(next.UID), "recreated once")
	})

	DescribeTable("recreates a Job when what it uses changes (Reloader's Job cases)",
		func(ann map[string]string, useSecret bool, mod func(string) podMod) {
			ns := newBatchNamespace()
			var change func()
			if useSecret {
				s := createSecret(ns, "cfg", map[string]string{"k": "1"})
				change = func() { setSecretData(s, "k", "2") }
			} else {
				cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
				change = func() { setData(cm, "k", "2") }
			}
			job := createJob(ns, "migrate", ann, mod("cfg"))
			startRipple()
			expectRecorded(job)
			change()
			actAsGarbageCollector(job)
			expectRecreated(job)
		},
		Entry("ConfigMap named by the reload annotation", map[string]string{annotations.ConfigMapReload: "cfg"}, false, envFromConfigMap),
		Entry("Secret named by the reload annotation", map[string]string{annotations.SecretReload: "cfg"}, true, envFromSecret),
		Entry("auto and a ConfigMap", auto, false, envFromConfigMap),
		Entry("a ConfigMap key reference", map[string]string{annotations.ConfigMapReload: "cfg"}, false, envConfigMapKey),
		Entry("a Secret key reference", map[string]string{annotations.SecretReload: "cfg"}, true, envSecretKey),
	)

	It("recreates a Job under env-vars with the changed object's variable, and the stamp in place of the SHA-1 Reloader left for a tracked Secret", func() {
		const reloaders = "9f2c4a3b6d1e8f7a5c0b2d4e6f8a1c3e5b7d9f0a"
		ns := newBatchNamespace()
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		createSecret(ns, "creds", map[string]string{"password": "hunter2"})
		leftover := func(s *corev1.PodSpec) {
			s.Containers[0].Env = append(s.Containers[0].Env, corev1.EnvVar{Name: "STAKATER_CREDS_SECRET", Value: reloaders})
		}
		job := createJob(ns, "migrate", auto, envFromConfigMap("cfg"), envFromSecret("creds"), leftover)
		startRipple(envVarsStrategy)
		expectRecorded(job)
		setData(cm, "k", "2")
		actAsGarbageCollector(job)
		next := expectRecreated(job)

		stamped := HaveKeyWithValue("app", ConsistOf(MatchRegexp(`^[^:]+:[0-9]+:[^:]+$`)))
		Expect(envOf(next, "STAKATER_CFG_CONFIGMAP")).To(stamped)
		Expect(envOf(next, "STAKATER_CREDS_SECRET")).To(stamped, "a reader of the Job can no longer test guesses of the Secret")
		Expect(next.Spec.Template.Annotations).NotTo(HaveKey(annotations.ConfigDigest), "the variables carry the change")
	})

	It("recreates a Job even when its recreation resumes from a read older than the garbage collector's work", func() {
		ns := newBatchNamespace()
		job := createJob(ns, "migrate", map[string]string{annotations.Recreate: `{"stamp":"s","cause":"ConfigMap cfg"}`}, envFromConfigMap("cfg"))
		update(job, func(j *batchv1.Job) { j.Finalizers = append(j.Finalizers, annotations.Recreate) })
		stale := jobNow(ns, "migrate")()
		Expect(k8s.Delete(suiteCtx, stale, client.PropagationPolicy(metav1.DeletePropagationForeground))).To(Succeed())
		actAsGarbageCollector(job)

		jobs, _ := workload.ByPlural("jobs")
		_, underway, err := jobs.Resume(suiteCtx, k8s, stale)
		Expect(underway).To(BeTrue())
		Expect(apierrors.IsConflict(err)).To(BeTrue(), "the stale read is refused, not acted on: %v", err)
		_, _, err = jobs.Resume(suiteCtx, k8s, jobNow(ns, "migrate")())
		Expect(err).NotTo(HaveOccurred())
		Expect(jobNow(ns, "migrate")().UID).NotTo(Equal(job.UID), "recreated, not waiting for a collection that already happened")
	})

	It("keeps a Job deleted for a change while an admission policy would refuse the new one, and recreates it once allowed, across a restart of ripple", func() {
		ns := newBatchNamespace()
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		job := createJob(ns, "migrate", auto, envFromConfigMap("cfg"))
		r := startRipple()
		expectRecorded(job)
		allow := refuseJobs(ns)
		setData(cm, "k", "2")
		actAsGarbageCollector(job)
		waitFor(eventsFor(job)).Should(ContainElement(And(HavePrefix("ReloadFailed: Recreation waits"), ContainSubstring("frozen by the test"))))
		old := jobNow(ns, "migrate")()
		Expect(old).NotTo(BeNil(), "the old Job stays")
		Expect(old.UID).To(Equal(job.UID))
		Expect(old.Finalizers).To(ConsistOf(annotations.Recreate), "held by ripple alone, its pods gone")

		r.stop()
		startRipple()
		allow()

		expectRecreated(job)
	})

	It("lets a Job it keeps for its recreation go with its namespace", func() {
		ns := newBatchNamespace()
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		job := createJob(ns, "migrate", auto, envFromConfigMap("cfg"))
		startRipple()
		expectRecorded(job)
		refuseJobs(ns)
		setData(cm, "k", "2")
		actAsGarbageCollector(job)
		waitFor(eventsFor(job)).Should(ContainElement(HavePrefix("ReloadFailed: Recreation waits")))

		Expect(k8s.Delete(suiteCtx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())

		waitFor(jobNow(ns, "migrate")).Should(BeNil(), "ripple's finalizer no longer holds the namespace's deletion")
	})

	It("recreates a Job the API server refused after a dry run admitted it, once it accepts it", func() {
		ns := newBatchNamespace()
		job, _, allow := owedJob(ns)
		Expect(jobNow(ns, "migrate")()).To(BeNil(), "the old Job is gone")

		allow()

		expectRecreated(job)
	})

	It("stops owing a Job the API server refused once its namespace is being deleted", func() {
		ns := newBatchNamespace()
		_, r, _ := owedJob(ns)

		Expect(k8s.Delete(suiteCtx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())

		Eventually(r.logs, 30*time.Second).Should(gbytes.Say("Dropping the workload owed: its namespace is being deleted.*" + ns))
		Consistently(r.logs, quiet).ShouldNot(gbytes.Say("creating Job "+ns+"/migrate again"), "not retried for good")
	})

	It("recreates a Job whose old one fills a quota of Jobs", func() {
		ns := newBatchNamespace()
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		job := createJob(ns, "migrate", auto, envFromConfigMap("cfg"))
		freed := fillJobQuota(ns)
		startRipple()
		expectRecorded(job)
		setData(cm, "k", "2")
		actAsGarbageCollector(job)
		waitFor(jobNow(ns, "migrate")).Should(BeNil(), "the old Job goes, though the quota refuses the dry run")

		freed()

		expectRecreated(job)
	})

	It("recreates a Job whose recreation a restart of ripple interrupted", func() {
		ns := newBatchNamespace()
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		job := createJob(ns, "migrate", auto, envFromConfigMap("cfg"))
		r := startRipple()
		expectRecorded(job)
		setData(cm, "k", "2")
		waitFor(func() bool { j := jobNow(ns, "migrate")(); return j != nil && j.DeletionTimestamp != nil }).Should(BeTrue())
		r.stop()
		actAsGarbageCollector(job)
		startRipple()
		expectRecreated(job)
	})

	DescribeTable("recreates a failed Job and never one that completed",
		func(condition batchv1.JobConditionType, recreated bool) {
			ns := newBatchNamespace()
			cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
			job := createJob(ns, "migrate", auto, envFromConfigMap("cfg"))
			conditions := []batchv1.JobConditionType{batchv1.JobFailureTarget, batchv1.JobFailed}
			switch condition {
			case batchv1.JobComplete:
				conditions = []batchv1.JobConditionType{batchv1.JobSuccessCriteriaMet, batchv1.JobComplete}
			case batchv1.JobSuccessCriteriaMet:
				conditions = []batchv1.JobConditionType{batchv1.JobSuccessCriteriaMet}
			}
			setJobStatus(job, conditions...)
			startRipple()
			before := expectRecorded(job)
			setData(cm, "k", "2")
			if recreated {
				actAsGarbageCollector(job)
				expectRecreated(job)
				return
			}
			waitFor(recordOf(job)).ShouldNot(Equal(before), "the change is recorded")
			waitFor(eventsFor(job)).Should(ContainElement(And(HavePrefix("ReloadSkipped: "), ContainSubstring("completed"))))
			Consistently(func() *metav1.Time { return jobNow(ns, "migrate")().DeletionTimestamp }, quiet).Should(BeNil())
		},
		Entry("failed", batchv1.JobFailed, true),
		Entry("completed", batchv1.JobComplete, false),
		Entry("succeeded, its last pods still terminating", batchv1.JobSuccessCriteriaMet, false),
	)

	// The Job completes between ripple's mark and its deletion, here one
	// an admission policy refuses for a while: its run is over, and the
	// mark goes instead.
	It("never runs again a Job that completed after ripple marked it for recreation, while its deletion was refused", func() {
		ns := newBatchNamespace()
		job, _, allow := markedWhileDeletionRefused(ns)
		setJobStatus(job, batchv1.JobSuccessCriteriaMet, batchv1.JobComplete)
		allow()

		waitFor(eventsFor(job)).Should(ContainElement(And(HavePrefix("ReloadSkipped: "), ContainSubstring("completed"))))
		waitFor(jobNow(ns, "migrate")).Should(And(
			HaveField("UID", Equal(job.UID)),
			HaveField("DeletionTimestamp", BeNil()),
			HaveField("Annotations", Not(HaveKey(annotations.Recreate))),
			HaveField("Finalizers", Not(ContainElement(annotations.Recreate)))), "not run a second time, and no longer marked")
	})

	// Once complete, the Job is deleted by someone else (its TTL, a Helm
	// hook's delete policy) while ripple is away: ripple's finalizer holds
	// it, and the deletion must go on without a Job taking its place.
	It("never runs again a Job that completed after ripple marked it and that someone else then deleted", func() {
		ns := newBatchNamespace()
		job, first, allow := markedWhileDeletionRefused(ns)
		first.stop()
		setJobStatus(job, batchv1.JobSuccessCriteriaMet, batchv1.JobComplete)
		allow()
		Expect(k8s.Delete(suiteCtx, job, client.PropagationPolicy(metav1.DeletePropagationForeground))).To(Succeed())
		actAsGarbageCollector(job)

		startRipple()
		waitFor(jobNow(ns, "migrate")).Should(BeNil(), "its deletion goes on")
		Consistently(jobNow(ns, "migrate"), quiet).Should(BeNil(), "and no Job takes its place")
	})

	It("never recreates a Job controlled by a CronJob, whatever its template says", func() {
		ns := newBatchNamespace()
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		cj := createCronJob(ns, "nightly", nil, envFromConfigMap("cfg"))
		job := &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nightly-1",
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "CronJob", Name: cj.Name, UID: cj.UID, Controller: ptr.To(true)}}},
			Spec: batchv1.JobSpec{Template: jobPod([]podMod{envFromConfigMap("cfg")})},
		}
		job.Spec.Template.Annotations = map[string]string{annotations.Auto: "true"}
		Expect(k8s.Create(suiteCtx, job)).To(Succeed())
		dep := createDeployment(ns, "control", auto, envFromConfigMap("cfg"))
		startRipple()
		before := expectRecorded(dep)
		setData(cm, "k", "2")
		waitFor(recordOf(dep)).ShouldNot(Equal(before), "ripple saw the change")
		Consistently(func() *metav1.Time { return jobNow(ns, job.Name)().DeletionTimestamp }, quiet).Should(BeNil())
		Expect(recordOf(job)()).To(BeEmpty())
	})

	It("leaves Jobs alone with --ignored-workload-types=jobs", func() {
		ns := newBatchNamespace()
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		job := createJob(ns, "migrate", auto, envFromConfigMap("cfg"))
		dep := createDeployment(ns, "control", auto, envFromConfigMap("cfg"))
		startRipple("--ignored-workload-types=jobs")
		before := expectRecorded(dep)
		setData(cm, "k", "2")
		waitFor(recordOf(dep)).ShouldNot(Equal(before), "ripple saw the change")
		Consistently(func() *metav1.Time { return jobNow(ns, "migrate")().DeletionTimestamp }, quiet).Should(BeNil())
		Expect(recordOf(job)()).To(BeEmpty())
		Expect(strings.Join(jobsIn(ns)(), ",")).To(Equal("migrate"))
	})
})

// makeIndexed makes the CronJob's Jobs Indexed, of two completions: their
// pods' host names add "-<index>" to the Job's name.
func makeIndexed(cj *batchv1.CronJob) {
	update(cj, func(c *batchv1.CronJob) {
		c.Spec.JobTemplate.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
		c.Spec.JobTemplate.Spec.Completions = ptr.To[int32](2)
	})
}
