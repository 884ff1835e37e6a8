package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/ripple-controller/ripple/internal/annotations"
)

// secretValues hands out distinctive random Secret values and remembers
// them, to search ripple's log for them afterwards.
type secretValues struct{ all []string }

// next returns a new value such as "s3cr3t-<32 hex digits>".
func (v *secretValues) next() string {
	b := make([]byte, 16)
	_, err := rand.Read(b)
	Expect(err).NotTo(HaveOccurred())
	s := "s3cr3t-" + hex.EncodeToString(b)
	v.all = append(v.all, s)
	return s
}

// forms are the ways a value could show up in a log: as is, its random part
// alone, and base64-encoded as the API carries Secret data.
func (v *secretValues) forms() map[string]string {
	out := map[string]string{}
	for _, s := range v.all {
		out[s] = s
		out[strings.TrimPrefix(s, "s3cr3t-")] = s
		out[base64.StdEncoding.EncodeToString([]byte(s))] = s
		out[base64.RawStdEncoding.EncodeToString([]byte(s))] = s
		out[base64.URLEncoding.EncodeToString([]byte(s))] = s
		// A value that is base64 text itself, encoded once more by the API.
		enc := base64.StdEncoding.EncodeToString([]byte(s))
		out[base64.StdEncoding.EncodeToString([]byte(enc))] = s
	}
	return out
}

func logSecretCreate(ctx context.Context, ns string, s *corev1.Secret) {
	GinkgoHelper()
	_, err := clientset.CoreV1().Secrets(ns).Create(ctx, s, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
}

// logSecretEdit re-reads Secret name, applies edit and writes it back.
func logSecretEdit(ctx context.Context, ns, name string, edit func(*corev1.Secret)) {
	GinkgoHelper()
	Eventually(func() error {
		s, err := clientset.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		edit(s)
		_, err = clientset.CoreV1().Secrets(ns).Update(ctx, s, metav1.UpdateOptions{})
		return err
	}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
}

func logDeployment(ctx context.Context, ns, name string, ann map[string]string, use func(*corev1.PodSpec)) {
	GinkgoHelper()
	tmpl := podTemplate(name)
	use(&tmpl.Spec)
	_, err := clientset.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: ann},
		Spec:       appsv1.DeploymentSpec{Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: appLabels(name)}, Template: tmpl},
	}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
}

// recordedDigest waits until ripple has recorded Deployment name and
// returns its config digest.
func recordedDigest(ctx context.Context, ns, name string) string {
	GinkgoHelper()
	var digest string
	Eventually(func(g Gomega) {
		d, err := clientset.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(d.Annotations).To(HaveKey(annotations.Recorded))
		digest = d.Spec.Template.Annotations[annotations.ConfigDigest]
	}).WithContext(ctx).WithTimeout(rolloutTimeout).Should(Succeed(), "ripple records %s", name)
	return digest
}

// rolledFrom waits until Deployment name has a config digest other than
// before, and returns it.
func rolledFrom(ctx context.Context, ns, name, before string) string {
	GinkgoHelper()
	var digest string
	Eventually(func(g Gomega) {
		d, err := clientset.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		digest = d.Spec.Template.Annotations[annotations.ConfigDigest]
		g.Expect(digest).NotTo(Equal(before))
	}).WithContext(ctx).WithTimeout(rolloutTimeout).Should(Succeed(), "ripple rolls %s", name)
	return digest
}

func secretEnvFrom(name string) corev1.EnvFromSource {
	return corev1.EnvFromSource{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: name}}}
}

func secretVolume(name string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: name}}}
}

// hexRow is one row of a hex dump, as client-go logs API bodies that are
// not text: the offset, then up to 16 bytes in hex.
var hexRow = regexp.MustCompile(`[0-9a-f]{8}  ((?:[0-9a-f]{2}  ?){1,16})`)

// hexDumped returns the bytes of every hex dump in the log, in order, so
// that a value split across rows is found whole.
func hexDumped(log string) []byte {
	var out []byte
	for _, m := range hexRow.FindAllStringSubmatch(log, -1) {
		if b, err := hex.DecodeString(strings.ReplaceAll(m[1], " ", "")); err == nil {
			out = append(out, b...)
		}
	}
	return out
}

var _ = Describe("ripple's log at the most verbose level", func() {
	for _, format := range []string{"json", "text"} {
		It("never holds a Secret's value, raw or base64-encoded, in "+format+" format", func(ctx SpecContext) {
			ns := newNamespace(ctx)
			values := &secretValues{}

			By("creating Secrets with random values in data, in stringData, and as base64 text")
			logSecretCreate(ctx, ns, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "in-data"},
				Data: map[string][]byte{"password": []byte(values.next()), "second": []byte(values.next())}})
			logSecretCreate(ctx, ns, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "in-string-data"},
				StringData: map[string]string{"token": values.next()}})
			logSecretCreate(ctx, ns, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "base64-text"},
				StringData: map[string]string{"encoded": base64.StdEncoding.EncodeToString([]byte(values.next()))}})
			logSecretCreate(ctx, ns, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "tls"}, Type: corev1.SecretTypeTLS,
				Data: map[string][]byte{corev1.TLSCertKey: []byte(values.next()), corev1.TLSPrivateKeyKey: []byte(values.next())}})
			logSecretCreate(ctx, ns, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "badly-ignored",
				Annotations: map[string]string{annotations.Ignore: "maybe"}}, Data: map[string][]byte{"k": []byte(values.next())}})
			logSecretCreate(ctx, ns, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "orphan"},
				Data: map[string][]byte{"k": []byte(values.next())}})
			logSecretCreate(ctx, ns, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "abandoned"},
				Data: map[string][]byte{"k": []byte(values.next())}})

			By("creating a tracking workload, one with invalid annotations, and one that will be gone")
			logDeployment(ctx, ns, "web", map[string]string{annotations.Auto: "true"}, func(s *corev1.PodSpec) {
				s.Containers[0].EnvFrom = append(s.Containers[0].EnvFrom, secretEnvFrom("in-data"))
				s.Containers[0].Env = append(s.Containers[0].Env, corev1.EnvVar{Name: "ENCODED", ValueFrom: &corev1.EnvVarSource{
					SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "base64-text"}, Key: "encoded"}}})
				s.Volumes = append(s.Volumes, secretVolume("in-string-data"), secretVolume("tls"), secretVolume("badly-ignored"))
			})
			logDeployment(ctx, ns, "invalid", map[string]string{
				annotations.SecretAuto:   "yes",
				annotations.Search:       "TRUE ",
				annotations.SecretReload: "broken(, in-data",
			}, func(s *corev1.PodSpec) {
				s.Containers[0].EnvFrom = append(s.Containers[0].EnvFrom, secretEnvFrom("in-data"), secretEnvFrom("in-string-data"))
			})
			logDeployment(ctx, ns, "doomed", map[string]string{annotations.Auto: "true"}, func(s *corev1.PodSpec) {
				s.Volumes = append(s.Volumes, secretVolume("abandoned"))
			})

			key := values.next()
			logSecretCreate(ctx, ns, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "ripple-key"}, Data: map[string][]byte{"key": []byte(key)}})
			if format == "text" {
				// Make the informers LIST, as against an API server without
				// streaming lists: the LIST of Secrets must not reach the log.
				GinkgoT().Setenv("KUBE_FEATURE_WatchListClient", "false")
			}
			p := startRipple("--log-level=trace", "--log-format="+format, "--hmac-key-secret="+ns+"/ripple-key")
			web, invalid := recordedDigest(ctx, ns, "web"), recordedDigest(ctx, ns, "invalid")
			recordedDigest(ctx, ns, "doomed")

			By("editing Secrets whose edits do not roll anything: the workload is gone, or there never was one")
			Expect(clientset.AppsV1().Deployments(ns).Delete(ctx, "doomed", metav1.DeleteOptions{})).To(Succeed())
			logSecretEdit(ctx, ns, "abandoned", func(s *corev1.Secret) { s.Data["k"] = []byte(values.next()) })
			logSecretEdit(ctx, ns, "orphan", func(s *corev1.Secret) { s.Data["k"] = []byte(values.next()) })

			By("editing data: both workloads that track it roll")
			logSecretEdit(ctx, ns, "in-data", func(s *corev1.Secret) { s.Data["password"] = []byte(values.next()) })
			web = rolledFrom(ctx, ns, "web", web)
			rolledFrom(ctx, ns, "invalid", invalid)

			By("editing through stringData, as base64 text, a TLS key and a badly ignored Secret")
			logSecretEdit(ctx, ns, "in-string-data", func(s *corev1.Secret) { s.StringData = map[string]string{"token": values.next()} })
			web = rolledFrom(ctx, ns, "web", web)
			logSecretEdit(ctx, ns, "base64-text", func(s *corev1.Secret) {
				s.StringData = map[string]string{"encoded": base64.StdEncoding.EncodeToString([]byte(values.next()))}
			})
			web = rolledFrom(ctx, ns, "web", web)
			logSecretEdit(ctx, ns, "tls", func(s *corev1.Secret) { s.Data[corev1.TLSPrivateKeyKey] = []byte(values.next()) })
			web = rolledFrom(ctx, ns, "web", web)
			logSecretEdit(ctx, ns, "badly-ignored", func(s *corev1.Secret) { s.Data["k"] = []byte(values.next()) })
			rolledFrom(ctx, ns, "web", web)

			By("stopping ripple once it has logged the last rollout, so that its whole log is on disk")
			// The rollout is visible as soon as the API server applied the
			// patch, before ripple has read the reply and logged it.
			Eventually(func() int {
				raw, _ := os.ReadFile(p.LogPath)
				n := 0
				for _, line := range strings.Split(string(raw), "\n") {
					if strings.Contains(line, "Rolled workload") && strings.Contains(line, ns) {
						n++
					}
				}
				return n
			}).WithTimeout(30 * time.Second).Should(BeNumerically(">=", 6))
			p.Stop()
			raw, err := os.ReadFile(p.LogPath)
			Expect(err).NotTo(HaveOccurred())
			log := string(raw)

			By("finding the rollouts and the reported mistakes in the log")
			Expect(log).NotTo(BeEmpty())
			rolled := 0
			var lines []string
			sc := bufio.NewScanner(bytes.NewReader(raw))
			sc.Buffer(make([]byte, 1<<20), 1<<24)
			for sc.Scan() {
				line := sc.Text()
				lines = append(lines, line)
				if strings.Contains(line, "Rolled workload") && strings.Contains(line, ns) {
					rolled++
				}
				if format == "json" {
					Expect(json.Valid([]byte(line))).To(BeTrue(), "a JSON log line: %s", line)
				}
			}
			Expect(sc.Err()).NotTo(HaveOccurred())
			Expect(rolled).To(BeNumerically(">=", 6), "the log shows every rollout")
			Expect(log).To(ContainSubstring("Recording the config of a workload seen for the first time"), "trace level includes debug lines")
			for _, v := range []string{"yes", "TRUE ", "broken(", "maybe"} {
				Expect(lines).To(ContainElement(SatisfyAll(ContainSubstring("Ignoring an invalid annotation value"), ContainSubstring(ns),
					ContainSubstring(v))), "the mistake %q is logged", v)
			}

			By("searching the whole log for every value, raw and base64-encoded, also inside hex-dumped API bodies")
			Expect(len(values.all)).To(BeNumerically(">=", 16))
			// client-go logs API bodies at V(8), a LIST of Secrets' included:
			// ripple never logs that much detail.
			Expect(log).NotTo(ContainSubstring("Response Body"))
			dumped := hexDumped(log)
			for form, value := range values.forms() {
				Expect(log).NotTo(ContainSubstring(form), "the log holds %q (a form of the Secret value %q)", form, value)
				Expect(bytes.Contains(dumped, []byte(form))).To(BeFalse(), "a hex-dumped body holds %q (a form of the Secret value %q)", form, value)
			}
		}, SpecTimeout(6*time.Minute))
	}
})
