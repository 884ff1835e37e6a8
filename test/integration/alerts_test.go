package integration

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ripple-controller/ripple/internal/annotations"
	"github.com/ripple-controller/ripple/internal/options"
)

// hook is a webhook receiver in the spec's process: it answers with the
// status set last and keeps what it was sent.
type hook struct {
	*httptest.Server
	status atomic.Int32
	// hang makes it answer nothing until the request or the spec ends.
	hang     atomic.Bool
	release  chan struct{}
	mu       sync.Mutex
	requests int
	accepted []string
	// beforeAnswer, when set, runs before each answer.
	beforeAnswer func()
}

func newHook(status int) *hook {
	GinkgoHelper()
	h := &hook{release: make(chan struct{})}
	h.status.Store(int32(status))
	h.Server = httptest.NewServer(http.HandlerFunc(h.serve))
	DeferCleanup(h.Close)
	// Runs before Close: a hanging handler must return for Close to.
	DeferCleanup(func() { close(h.release) })
	return h
}

func (h *hook) serve(w http.ResponseWriter, r *http.Request) {
	defer GinkgoRecover()
	body, _ := io.ReadAll(r.Body)
	if h.hang.Load() {
		select {
		case <-r.Context().Done():
		case <-h.release:
		}
		return
	}
	h.mu.Lock()
	before := h.beforeAnswer
	h.mu.Unlock()
	if before != nil {
		before()
	}
	code := int(h.status.Load())
	h.mu.Lock()
	h.requests++
	if r.Method == http.MethodPost && r.Header.Get("Content-Type") == "application/json" && code < 300 {
		h.accepted = append(h.accepted, string(body))
	}
	h.mu.Unlock()
	w.WriteHeader(code)
}

// bodies returns the bodies of the POSTs it accepted.
func (h *hook) bodies() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.accepted...)
}

func (h *hook) requestCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.requests
}

// metric returns the value of one series on ripple's /metrics: -1 when the
// series is absent, -2 while /metrics does not answer. series is written as
// Prometheus prints it, labels in alphabetical order.
func metric(addr, series string) func() float64 {
	re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`)
	return func() float64 {
		body, ok := strings.CutPrefix(httpGet("http://"+addr+"/metrics")(), "200 ")
		if !ok {
			return -2
		}
		m := re.FindStringSubmatch(body)
		if m == nil {
			return -1
		}
		v, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			return -3
		}
		return v
	}
}

func decode(body string) map[string]string {
	GinkgoHelper()
	var out map[string]string
	Expect(json.Unmarshal([]byte(body), &out)).To(Succeed(), "a JSON object of strings: %s", body)
	return out
}

var _ = Describe("Reloader's metric names", func() {
	It("counts each rollout in reloader_reload_executed_total and reloader_action_total, and not by namespace without METRICS_COUNT_BY_NAMESPACE", func() {
		ns := newNamespace(nil)
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("cfg"))
		addr := freeAddress()
		startRipple("--metrics-bind-address=" + addr)
		before := recorded(dep)
		executed := metric(addr, `reloader_reload_executed_total{success="true"}`)
		Eventually(executed, "10s").Should(BeNumerically(">=", 0), "both outcomes show before the first rollout")
		Expect(metric(addr, `reloader_reload_executed_total{success="false"}`)()).To(BeNumerically(">=", 0))
		was := executed()
		// Absent (-1) until this process's first rollout of a Deployment.
		actions := metric(addr, `reloader_action_total{result="success",workload_kind="Deployment"}`)
		timed := metric(addr, `reloader_action_latency_seconds_count{workload_kind="Deployment"}`)
		wasActions, wasTimed := max(actions(), 0), max(timed(), 0)

		setData(cm, "k", "2")

		expectRolledOnce(dep, before)
		Expect(executed()).To(Equal(was+1), "one rollout, counted once")
		Expect(actions()).To(Equal(wasActions+1), "under Reloader's action name too")
		Expect(timed()).To(Equal(wasTimed+1), "and its latency")
		Expect(metric(addr, `reloader_reload_executed_total_by_namespace{namespace="`+ns+`",success="true"}`)()).To(Equal(-1.0))
	})

	It("counts each rollout by namespace in reloader_reload_executed_total_by_namespace with METRICS_COUNT_BY_NAMESPACE=enabled", func() {
		ns := newNamespace(nil)
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("cfg"))
		setEnv(options.EnvMetricsCountByNamespace, "enabled")
		addr := freeAddress()
		startRipple("--metrics-bind-address=" + addr)
		before := recorded(dep)

		setData(cm, "k", "2")

		expectRolledOnce(dep, before)
		Expect(metric(addr, `reloader_reload_executed_total_by_namespace{namespace="`+ns+`",success="true"}`)()).To(Equal(1.0))
	})
})

var _ = Describe("ripple_workloads_tracked", func() {
	It("counts the workloads of each kind that opted in, and stops counting one that opts out or is deleted", func() {
		ns := newNamespace(nil)
		createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		web := createDeployment(ns, "web", auto, volumeConfigMap("cfg"))
		api := createDeployment(ns, "api", auto, volumeConfigMap("cfg"))
		createDeployment(ns, "plain", nil, volumeConfigMap("cfg"))
		createStatefulSet(ns, "db", auto, volumeConfigMap("cfg"))
		addr := freeAddress()
		startRipple("--namespaces="+ns, "--metrics-bind-address="+addr)
		deployments := metric(addr, `ripple_workloads_tracked{kind="Deployment"}`)
		Eventually(deployments, "10s").Should(Equal(2.0))
		Eventually(metric(addr, `ripple_workloads_tracked{kind="StatefulSet"}`), "10s").Should(Equal(1.0))

		update(web, func(d *appsv1.Deployment) { delete(d.Annotations, annotations.Auto) })
		Eventually(deployments, "10s").Should(Equal(1.0))
		Expect(k8s.Delete(suiteCtx, api)).To(Succeed())
		Eventually(deployments, "10s").Should(Equal(0.0))
	})

	It("stops counting a workload replaced by a manifest without the opt-in or the record, as kubectl replace writes it", func() {
		ns := newNamespace(nil)
		createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		web := createDeployment(ns, "web", auto, volumeConfigMap("cfg"))
		addr := freeAddress()
		startRipple("--namespaces="+ns, "--metrics-bind-address="+addr)
		recorded(web)
		deployments := metric(addr, `ripple_workloads_tracked{kind="Deployment"}`)
		Eventually(deployments, "10s").Should(Equal(1.0))

		update(web, func(d *appsv1.Deployment) {
			delete(d.Annotations, annotations.Auto)
			delete(d.Annotations, annotations.Recorded)
		})
		Eventually(deployments, "10s").Should(Equal(0.0))
	})
})

var _ = Describe("pprof", func() {
	It("serves /debug/pprof/ on --pprof-addr with --enable-pprof", func() {
		addr := freeAddress()
		startRipple("--enable-pprof", "--pprof-addr="+addr)
		Eventually(httpGet("http://"+addr+"/debug/pprof/"), "20s").Should(HavePrefix("200 "))
	})

	It("serves nothing on --pprof-addr without --enable-pprof", func() {
		ns := newNamespace(nil)
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("cfg"))
		addr := freeAddress()
		startRipple("--pprof-addr=" + addr)
		recorded(dep)
		Expect(httpGet("http://" + addr + "/debug/pprof/")()).To(ContainSubstring("connection refused"))
	})
})

// alertTo makes the ripple a spec starts alert each rollout to url, in
// sink's format.
func alertTo(sink, url string) {
	setEnv(options.EnvAlertOnReload, "true")
	setEnv(options.EnvAlertSink, sink)
	setEnv(options.EnvAlertWebhookURL, url)
}

var _ = Describe("Alerts on rollouts", func() {
	DescribeTable("sends one alert per rollout in the sink's format, naming the workload and what changed, never a Secret's value",
		func(sink string, check func(body map[string]string, ns, changed string)) {
			ns := newNamespace(nil)
			cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
			sec := createSecret(ns, "creds", map[string]string{"k": "0ld-s3cr3t-value"})
			dep := createDeployment(ns, "dep", auto, volumeConfigMap("cfg"), volumeSecret("creds"))
			h := newHook(http.StatusOK)
			alertTo(sink, h.URL+"/hook")
			setEnv(options.EnvAlertAdditionalInfo, info)
			startRipple()
			before := recorded(dep)

			setData(cm, "k", "2")
			before = expectRolledOnce(dep, before)
			Eventually(h.bodies, "10s").Should(HaveLen(1))
			check(decode(h.bodies()[0]), ns, "ConfigMap/cfg")

			setSecretData(sec, "k", "n3w-s3cr3t-value")
			expectRolledOnce(dep, before)
			Eventually(h.bodies, "10s").Should(HaveLen(2))
			Consistently(h.bodies, quiet).Should(HaveLen(2), "one alert per rollout")
			check(decode(h.bodies()[1]), ns, "Secret/creds")
			for _, b := range h.bodies() {
				Expect(b).NotTo(ContainSubstring("s3cr3t"))
			}
		},
		Entry("slack", "slack", chatText),
		Entry("teams", "teams", chatText),
		Entry("gchat", "gchat", chatText),
		Entry("raw", "raw", func(body map[string]string, ns, changed string) {
			Expect(body).To(Equal(map[string]string{
				"text":           info + " : ripple rolled Deployment dep in namespace " + ns + " because " + changed + " changed",
				"kind":           "Deployment",
				"namespace":      ns,
				"name":           "dep",
				"changed":        changed,
				"additionalInfo": info,
			}))
		}),
	)

	It("sends the alert of a rollout that it is still retrying when ripple stops", func() {
		ns := newNamespace(nil)
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("cfg"))
		h := newHook(http.StatusServiceUnavailable)
		alertTo("raw", h.URL+"/hook")
		r := startRipple()
		before := recorded(dep)

		setData(cm, "k", "2")
		expectRolledOnce(dep, before)
		Eventually(h.requestCount, "10s").Should(BeNumerically(">=", 1), "the first try is refused")
		h.status.Store(http.StatusOK)
		r.stop()

		Expect(h.bodies()).To(HaveLen(1), "sent before ripple stopped")
	})

	It("posts no text a CronJob's editor wrote into its run mark: the run is alerted as a change of its config", func() {
		ns := newBatchNamespace()
		createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		cj := createCronJob(ns, "cj", auto, envFromConfigMap("cfg"))
		h := newHook(http.StatusOK)
		alertTo("slack", h.URL+"/hook")
		startRipple()
		expectRecorded(cj)

		forged := `{"job":"cj-reload-deadbeef","stamp":"x","cause":"<!channel> re-enter your password at <https://evil.example|the portal>"}`
		update(cj, func(c *batchv1.CronJob) { c.Annotations[annotations.Run] = forged })

		Eventually(h.bodies, "10s").Should(HaveLen(1))
		Expect(decode(h.bodies()[0])["text"]).To(And(ContainSubstring("because *its config* changed"), Not(ContainSubstring("channel"))))
		waitFor(eventsFor(cj)).Should(ContainElement(And(ContainSubstring("because its config changed"), Not(ContainSubstring("evil")))))
	})

	DescribeTable("alerts a paused Deployment's rollout once, when it is resumed and rolls, not when it pauses",
		func(period string, resume func(dep *appsv1.Deployment)) {
			ns := newNamespace(nil)
			cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
			dep := createDeployment(ns, "dep", pauseFor(period), envFromConfigMap("cfg"))
			h := newHook(http.StatusOK)
			alertTo("raw", h.URL+"/hook")
			startRipple()
			recorded(dep)

			setData(cm, "k", "2")
			Eventually(specPaused(dep), 10*time.Second).Should(BeTrue())
			Expect(h.bodies()).To(BeEmpty(), "pausing is not a rollout")
			resume(dep)

			Eventually(specPaused(dep), 10*time.Second).Should(BeFalse())
			Eventually(h.bodies, "10s").Should(HaveLen(1))
			Consistently(h.bodies, quiet).Should(HaveLen(1))
			Expect(decode(h.bodies()[0])).To(HaveKeyWithValue("name", "dep"))
		},
		Entry("by ripple, when the pause ends", "3s", func(*appsv1.Deployment) {}),
		Entry("by hand, before it ends", "1h", func(dep *appsv1.Deployment) {
			update(dep, func(d *appsv1.Deployment) { d.Spec.Paused = false })
		}),
	)

	DescribeTable("rolls at once and only once while the alert webhook fails",
		func(fail func(h *hook), checkCounted bool) {
			ns := newNamespace(nil)
			cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
			dep := createDeployment(ns, "dep", auto, volumeConfigMap("cfg"))
			h := newHook(http.StatusOK)
			fail(h)
			alertTo("slack", h.URL+"/hook/s3cr3t-token")
			addr := freeAddress()
			ripple := startRipple("--metrics-bind-address=" + addr)
			before := recorded(dep)
			failed := metric(addr, "ripple_alerts_failed_total")
			was := failed()

			setData(cm, "k", "2")

			// An alert's POST waits up to 10s per attempt: a rollout that
			// waited for it would come later than this.
			Eventually(before.Rollouts, "5s").Should(Equal(1))
			expectRolledOnce(dep, before)
			if checkCounted {
				Eventually(failed, "30s").Should(Equal(was+1), "the alert is given up after its last attempt")
				Eventually(ripple.logs).Should(gbytes.Say("Cannot send a rollout alert"))
			}
			Expect(string(ripple.logs.Contents())).NotTo(ContainSubstring("s3cr3t-token"), "the webhook's path is never logged")
		},
		Entry("answering 500", func(h *hook) { h.status.Store(http.StatusInternalServerError) }, true),
		Entry("never answering", func(h *hook) { h.hang.Store(true) }, false),
		Entry("gone", func(h *hook) { h.Close() }, true),
	)

	It("refuses to start on an alert setting that cannot work, naming the variable", func() {
		setEnv(options.EnvAlertOnReload, "true")
		setEnv(options.EnvAlertWebhookURL, "hooks.example.com/s3cr3t")
		setEnv(options.EnvAlertSink, "discord")
		err := startRippleErr()
		Expect(err).To(MatchError(SatisfyAll(ContainSubstring(options.EnvAlertWebhookURL), ContainSubstring(options.EnvAlertSink))))
		Expect(err.Error()).NotTo(ContainSubstring("s3cr3t"))
	})
})

// chatText checks a Slack, Teams or Google Chat body: only "text", the
// additional info first and the names in bold.
func chatText(body map[string]string, ns, changed string) {
	GinkgoHelper()
	Expect(body).To(HaveLen(1))
	Expect(body).To(HaveKeyWithValue("text",
		info+" : ripple rolled Deployment *dep* in namespace *"+ns+"* because *"+changed+"* changed"))
}

// info is the ALERT_ADDITIONAL_INFO of the alert specs.
const info = "cluster-it"

var _ = Describe("--webhook-url", func() {
	It("posts each change instead of rolling and records it: a second edit posts again, no edit posts nothing", func() {
		ns := newNamespace(nil)
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("cfg"))
		h := newHook(http.StatusOK)
		ripple := startRipple("--webhook-url=" + h.URL + "/hook/s3cr3t-token")
		Eventually(ripple.logs).Should(gbytes.Say("Rolling no workload: --webhook-url is set"))
		before := recorded(dep)

		setData(cm, "k", "2")

		Eventually(h.bodies, "10s").Should(HaveLen(1))
		Expect(decode(h.bodies()[0])).To(Equal(map[string]string{
			"webhook": "update successful", "kind": "Deployment", "namespace": ns, "name": "dep", "changed": "ConfigMap/cfg",
		}))
		Eventually(func() string { return stateOf(dep).Recorded }, "10s").ShouldNot(Equal(before.Recorded), "the change is recorded")
		Eventually(eventsFor(dep), "10s").Should(ContainElement(ContainSubstring("WebhookSent: Posted the change of ConfigMap/cfg")))
		expectNoRollout(dep, before)
		Expect(h.bodies()).To(HaveLen(1), "no edit, no POST")

		setData(cm, "k", "3")

		Eventually(h.bodies, "10s").Should(HaveLen(2))
		Consistently(h.bodies, quiet).Should(HaveLen(2))
		expectNoRollout(dep, before)
		Expect(string(ripple.logs.Contents())).NotTo(ContainSubstring("s3cr3t-token"), "the webhook's path is never logged")
	})

	It("posts a change once when the workload is written while the webhook answers", func() {
		ns := newNamespace(nil)
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("cfg"))
		h := newHook(http.StatusOK)
		key, touches := client.ObjectKeyFromObject(dep), 0
		h.mu.Lock()
		h.beforeAnswer = func() {
			// Its own object: the spec reads dep meanwhile.
			touches++
			d := &appsv1.Deployment{}
			if k8s.Get(suiteCtx, key, d) == nil {
				d.Labels = map[string]string{"touched": strconv.Itoa(touches)}
				_ = k8s.Update(suiteCtx, d)
			}
		}
		h.mu.Unlock()
		startRipple("--webhook-url=" + h.URL + "/hook")
		before := recorded(dep)

		setData(cm, "k", "2")

		Eventually(func() string { return stateOf(dep).Recorded }, "10s").ShouldNot(Equal(before.Recorded), "the change is recorded")
		Consistently(h.bodies, quiet).Should(HaveLen(1), "posted once, though the record's first write conflicted")
	})

	// Ripple's record passes none of its event filters: a reconcile before
	// its cache holds it reads the version it replaced, whose record names
	// the data set back. When the receiver writes the workload before it
	// answers, the record is written again over a version read afresh,
	// later than the one the cache holds.
	DescribeTable("posts again for a change set back before its record reached ripple's cache",
		func(receiverWrites bool) {
			ns := newNamespace(nil)
			cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
			dep := createDeployment(ns, "dep", auto, volumeConfigMap("cfg"))
			h := newHook(http.StatusOK)
			key, answered := client.ObjectKeyFromObject(dep), 0
			if receiverWrites {
				h.mu.Lock()
				h.beforeAnswer = func() {
					answered++
					d := &appsv1.Deployment{}
					if answered == 1 && k8s.Get(suiteCtx, key, d) == nil {
						d.Labels = map[string]string{"redeployed": "yes"}
						_ = k8s.Update(suiteCtx, d)
					}
				}
				h.mu.Unlock()
			}
			slow := lagging("/deployments")
			startRipple("--webhook-url=" + h.URL + "/hook")
			before := recorded(dep)
			slow.delay.Store(int64(time.Second))

			setData(cm, "k", "2")
			Eventually(h.bodies, "10s").Should(HaveLen(1))
			Eventually(func() string { return stateOf(dep).Recorded }, "10s").ShouldNot(Equal(before.Recorded))
			setData(cm, "k", "1")
			Eventually(h.bodies, "20s").Should(HaveLen(2), "the receiver, told of k=2, is told of k=1")
		},
		Entry("the record written over the version ripple read", false),
		Entry("the record written again over the version read after a conflict", true),
	)

	It("retries a failing webhook, recording nothing, until it answers", func() {
		ns := newNamespace(nil)
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("cfg"))
		h := newHook(http.StatusServiceUnavailable)
		startRipple("--webhook-url=" + h.URL + "/hook")
		before := recorded(dep)

		setData(cm, "k", "2")

		Eventually(h.requestCount, "10s").Should(BeNumerically(">=", 2), "ripple retries")
		Eventually(eventsFor(dep), "10s").Should(ContainElement(ContainSubstring("WebhookFailed: ")))
		Expect(stateOf(dep).Recorded).To(Equal(before.Recorded), "nothing is recorded before the webhook took the change")
		h.status.Store(http.StatusOK)

		Eventually(h.bodies, "20s").Should(HaveLen(1))
		Eventually(func() string { return stateOf(dep).Recorded }, "10s").ShouldNot(Equal(before.Recorded))
		Consistently(h.bodies, quiet).Should(HaveLen(1), "posted once it answers, and not again")
		expectNoRollout(dep, before)
	})

	It("posts each change once while the API server refuses its record, a change back to an earlier config too, and records it once allowed", func() {
		ns := newNamespace(nil)
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("cfg"))
		h := newHook(http.StatusOK)
		startRipple("--webhook-url=" + h.URL + "/hook")
		before := recorded(dep)
		// An admission policy, as one that lets only a GitOps tool edit.
		allow := refuse(ns, admissionregistrationv1.Update, "apps", "deployments", func() error {
			probe := &appsv1.Deployment{}
			Expect(k8s.Get(suiteCtx, client.ObjectKeyFromObject(dep), probe)).To(Succeed())
			return k8s.Update(suiteCtx, probe, client.DryRunAll)
		})

		setData(cm, "k", "2")

		Eventually(h.bodies, "10s").Should(HaveLen(1))
		Consistently(h.bodies, 3*time.Second).Should(HaveLen(1), "one change, one POST, however often the record write is retried")
		setData(cm, "k", "3")
		Eventually(h.bodies, "10s").Should(HaveLen(2))
		setData(cm, "k", "2")
		Eventually(h.bodies, "10s").Should(HaveLen(3), "the receiver last heard of k=3")
		allow()
		Eventually(func() string { return stateOf(dep).Recorded }, "20s").ShouldNot(Equal(before.Recorded), "the change is recorded")
		Consistently(h.bodies, quiet).Should(HaveLen(3))
		expectNoRollout(dep, before)
	})

	It("posts nothing for a finished Job or a suspended CronJob, which would not roll, and records the change", func() {
		ns := newBatchNamespace()
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		job := createJob(ns, "migrate", auto, envFromConfigMap("cfg"))
		setJobStatus(job, batchv1.JobSuccessCriteriaMet, batchv1.JobComplete)
		cj := createCronJob(ns, "nightly", auto, envFromConfigMap("cfg"))
		update(cj, func(c *batchv1.CronJob) { c.Spec.Suspend = ptr.To(true) })
		h := newHook(http.StatusOK)
		startRipple("--webhook-url=" + h.URL + "/hook")
		beforeJob, beforeCronJob := expectRecorded(job), expectRecorded(cj)

		setData(cm, "k", "2")

		waitFor(recordOf(job)).ShouldNot(Equal(beforeJob))
		waitFor(recordOf(cj)).ShouldNot(Equal(beforeCronJob))
		waitFor(eventsFor(job)).Should(ContainElement(HavePrefix("ReloadSkipped: Not rolled after a change of ConfigMap/cfg")))
		waitFor(eventsFor(cj)).Should(ContainElement(HavePrefix("ReloadSkipped: Not rolled after a change of ConfigMap/cfg")))
		Consistently(h.bodies, quiet).Should(BeEmpty(), "neither would roll, as ripple explain says")
	})

	It("refuses a URL that is not http or https, naming the flag", func() {
		Expect(startRippleErr("--webhook-url=ftp://receiver/hook")).To(MatchError(ContainSubstring("--webhook-url")))
	})
})
