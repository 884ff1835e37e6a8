package integration

import (
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/common/expfmt"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/ripple-controller/ripple/internal/annotations"
	"github.com/ripple-controller/ripple/internal/digest"
	"github.com/ripple-controller/ripple/internal/options"
)

// writeTap keeps the method, URL and body of every request ripple sends
// that is not a read.
type writeTap struct {
	mu  sync.Mutex
	out []string
}

func (w *writeTap) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(r *http.Request) (*http.Response, error) {
		// The key Secret's creation holds the key, by design.
		if r.Method != http.MethodGet && !strings.HasSuffix(r.URL.Path, "/namespaces/default/secrets") {
			var body []byte
			if r.Body != nil {
				body, _ = io.ReadAll(r.Body)
				r.Body = io.NopCloser(bytes.NewReader(body))
			}
			w.mu.Lock()
			w.out = append(w.out, r.Method+" "+r.URL.String()+"\n"+string(body))
			w.mu.Unlock()
		}
		return rt.RoundTrip(r)
	})
}

func (w *writeTap) all() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Join(w.out, "\n----\n")
}

// reloaderSHA1 is stakater/Reloader's value for a Secret: the SHA-1 of its
// sorted "key=value" entries joined by ";".
func reloaderSHA1(data map[string]string) string {
	var v []string
	for k, x := range data {
		v = append(v, k+"="+x)
	}
	sort.Strings(v)
	s := sha1.Sum([]byte(strings.Join(v, ";")))
	return hex.EncodeToString(s[:])
}

// guessables lists what must never appear in anything ripple writes, each
// of which would let a reader test guesses of the Secret: the values, their
// encodings, and every unkeyed digest of the data, with the 8-character
// prefix of each (a truncated digest).
func guessables(ns, name string, data map[string]string) map[string]string {
	out := map[string]string{}
	bin := map[string][]byte{}
	for k, v := range data {
		bin[k] = []byte(v)
		out["value of "+k] = v
		out["base64 of "+k] = base64.StdEncoding.EncodeToString([]byte(v))
		s1, s256 := sha1.Sum([]byte(v)), sha256.Sum256([]byte(v))
		out["sha1 of "+k] = hex.EncodeToString(s1[:])
		out["sha256 of "+k] = hex.EncodeToString(s256[:])
	}
	out["reloader sha1"] = reloaderSHA1(data)
	q := digest.Qualified(ns, name)
	whole := digest.Object("Secret", q, nil, bin)
	out["ripple's unkeyed sum"] = whole.String()
	sums := digest.KeySums("Secret", q, nil, bin)
	var keys []string
	for k, s := range sums {
		out["ripple's unkeyed key sum of "+k] = s.String()
		keys = append(keys, k)
		out["ripple's unkeyed subset of "+k] = digest.Subset(sums, []string{k}).String()
	}
	slices.Sort(keys)
	out["ripple's unkeyed subset of all"] = digest.Subset(sums, keys).String()
	for label, v := range out {
		if strings.HasPrefix(label, "ripple's") || strings.HasPrefix(label, "sha") || strings.HasPrefix(label, "reloader") {
			out[label+" (8-char prefix)"] = v[:8]
		}
	}
	return out
}

func expectNoneIn(what, text string, secrets map[string]string) {
	GinkgoHelper()
	for label, s := range secrets {
		Expect(strings.Contains(text, s)).To(BeFalse(), "%s holds the %s (%q)", what, label, s)
	}
}

var _ = Describe("Secret data in what ripple writes", func() {
	It("appears nowhere, nor any unkeyed digest of it, in requests, objects, Events, logs at trace, alerts, metrics or explain", func() {
		ns := newNamespace(nil)
		v1 := map[string]string{"k": "Zq7-hunter2-s3cr3t-ONE", "user": "admin-Xw9"}
		v2 := map[string]string{"k": "Zq7-hunter2-s3cr3t-TWO", "user": "admin-Xw9"}
		// kubectl apply's copy of the data, which the metadata watch carries.
		lastApplied := `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"db"},"stringData":{"k":"` + v1["k"] + `","user":"` + v1["user"] + `"}}`
		sec := createSecret(ns, "db", v1, map[string]string{"kubectl.kubernetes.io/last-applied-configuration": lastApplied})

		depAnnot := createDeployment(ns, "dep-annot", auto, volumeSecret("db"))
		envAnn := map[string]string{annotations.Auto: "true", annotations.ReloadStrategy: "env-vars"}
		// A template Reloader managed: its SHA-1 of the Secret's data.
		depEnv := createDeployment(ns, "dep-env", envAnn, envFromSecret("db"), func(s *corev1.PodSpec) {
			s.Containers[0].Env = append(s.Containers[0].Env, corev1.EnvVar{Name: "STAKATER_DB_SECRET", Value: reloaderSHA1(v1)})
		})
		precise := map[string]string{annotations.Auto: "true", annotations.KeyPrecision: "true"}
		depPrecise := createDeployment(ns, "dep-precise", precise, envSecretKey("db"))
		cj := createCronJob(ns, "cj", auto, volumeSecret("db"))
		job := createJob(ns, "job", auto, envSecretKey("db"))
		DeferCleanup(func() { removeBatchLeftovers(ns) })

		h := newHook(http.StatusOK)
		alertTo("webhook", h.URL+"/hook")
		setEnv(options.EnvAlertAdditionalInfo, info)
		tap := &writeTap{}
		withRippleTransport(tap.wrap)
		ripple := startRipple("--log-level=trace")

		for _, w := range []client.Object{depAnnot, depEnv, depPrecise, cj, job} {
			Eventually(recordOf(w), 30*time.Second).ShouldNot(BeEmpty(), "%s is recorded", w.GetName())
		}
		before := recorded(depAnnot)

		setSecretData(sec, "k", v2["k"])

		expectRolledOnce(depAnnot, before)
		Eventually(func() []string { return envOf(depEnv, "STAKATER_DB_SECRET")["app"] }, 20*time.Second).
			ShouldNot(ContainElement(reloaderSHA1(v1)), "Reloader's SHA-1 is replaced")
		Eventually(h.bodies, 20*time.Second).Should(HaveLen(5), "an alert per workload")
		Eventually(jobsIn(ns), 20*time.Second).Should(HaveLen(2), "the CronJob's run and the Job")
		for _, w := range []client.Object{depAnnot, depEnv, depPrecise, cj} {
			Eventually(eventsFor(w), 20*time.Second).Should(ContainElement(HavePrefix("Reloaded: ")), "%s's Event is written", w.GetName())
		}
		explained := explainIn(ns, "secret", "db") + explainIn(ns, "deployment", "dep-precise") + explainIn(ns, "deployment", "dep-env")

		// The key, which nothing ripple writes may hold either.
		keySecret := &corev1.Secret{}
		Expect(k8s.Get(suiteCtx, types.NamespacedName{Namespace: metav1.NamespaceDefault, Name: options.DefaultKeySecret}, keySecret)).To(Succeed())
		key := keySecret.Data["key"]
		Expect(key).NotTo(BeEmpty())

		secrets := guessables(ns, "db", v1)
		for l, s := range guessables(ns, "db", v2) {
			secrets[l+" (v2)"] = s
		}
		secrets["the HMAC key, base64"] = base64.StdEncoding.EncodeToString(key)
		secrets["the HMAC key, hex"] = hex.EncodeToString(key)
		secrets["the HMAC key"] = string(key)

		writes := tap.all()
		Expect(writes).To(ContainSubstring("PATCH"), "the tap saw the rollouts")
		// Reloader's SHA-1 of v1 was written by the spec, not ripple: only
		// ripple's writes are held to it.
		expectNoneIn("a request ripple sent", writes, secrets)
		expectNoneIn("ripple's log", string(ripple.logs.Contents()), secrets)
		expectNoneIn("ripple explain", explained, secrets)
		expectNoneIn("an alert", strings.Join(h.bodies(), "\n"), secrets)

		mfs, err := metrics.Registry.Gather()
		Expect(err).NotTo(HaveOccurred())
		var m bytes.Buffer
		for _, mf := range mfs {
			_, _ = expfmt.MetricFamilyToText(&m, mf)
		}
		expectNoneIn("/metrics", m.String(), secrets)

		var objs []any
		for _, l := range []client.ObjectList{&appsv1.DeploymentList{}, &batchv1.CronJobList{}, &batchv1.JobList{}} {
			Expect(k8s.List(suiteCtx, l, client.InNamespace(ns))).To(Succeed())
			objs = append(objs, l)
		}
		evs, err := clientset.EventsV1().Events(ns).List(context.Background(), metav1.ListOptions{})
		Expect(err).NotTo(HaveOccurred())
		objs = append(objs, evs)
		raw, err := json.Marshal(objs)
		Expect(err).NotTo(HaveOccurred())
		expectNoneIn("a workload, Job or Event now", string(raw), secrets)
	})
})
