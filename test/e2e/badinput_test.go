package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/ripple-controller/ripple/internal/annotations"
)

var _ = Describe("Bad input against the ripple binary", func() {
	It("stays ready, rolls other workloads and stays within 64 MiB of its peak RSS with a 15 KB pathological reload list on one Deployment", func(ctx SpecContext) {
		f := newFleet(ctx, 10, 0)
		probe := freeAddr()
		p := startRipple("--health-probe-bind-address=" + probe)
		f.waitRecorded(ctx)
		edits := map[int]int{}
		for i := range f.size {
			f.edit(ctx, i, "before")
			edits[i]++
		}
		f.expectConverged(ctx, edits)
		usual := p.peakRSS()

		tmpl := podTemplate("patho")
		_, err := clientset.AppsV1().Deployments(f.ns).Create(ctx, &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "patho", Annotations: map[string]string{annotations.ConfigMapReload: pathologicalList(15 << 10)}},
			Spec:       appsv1.DeploymentSpec{Replicas: ptr.To[int32](0), Selector: &metav1.LabelSelector{MatchLabels: appLabels("patho")}, Template: tmpl},
		}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		for round := range 3 {
			for i := range f.size {
				f.edit(ctx, i, fmt.Sprintf("after-%d", round))
				edits[i]++
			}
			f.expectConverged(ctx, edits)
		}

		Expect(get(ctx, "http://"+probe+"/readyz")).To(Equal(http.StatusOK), "ripple stays ready")
		Expect(p.exited()).To(BeFalse(), "ripple is still running")
		Expect(p.peakRSS()-usual).To(BeNumerically("<", 64<<20), "peak RSS grew from %d MiB", usual>>20)
	}, SpecTimeout(5*time.Minute))
})

// pathologicalList is a reload list of about size bytes whose entries are
// costly to parse and compile: large Unicode classes under large counts,
// nested repetitions, and over-long entries.
func pathologicalList(size int) string {
	entries := []string{`[\p{Greek}\p{Han}\p{Cyrillic}]{1000}`, `((a{1,100}){1,100}){1,100}`, `(?i)\pL{500}\pN{500}`, strings.Repeat("x", 600)}
	var b strings.Builder
	for i := 0; b.Len() < size; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(entries[i%len(entries)])
	}
	return b.String()
}

// peakRSS reads the process's peak resident set size (VmHWM) in bytes.
func (p *rippleProcess) peakRSS() int64 {
	GinkgoHelper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	Expect(err).NotTo(HaveOccurred())
	defer func() { _ = f.Close() }()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			Expect(err).NotTo(HaveOccurred())
			return kb << 10
		}
	}
	Fail("no VmHWM in /proc status")
	return 0
}

func freeAddr() string {
	GinkgoHelper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	defer func() { _ = l.Close() }()
	return l.Addr().String()
}

func get(ctx context.Context, url string) int {
	GinkgoHelper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	Expect(err).NotTo(HaveOccurred())
	resp, err := http.DefaultClient.Do(req)
	Expect(err).NotTo(HaveOccurred())
	_ = resp.Body.Close()
	return resp.StatusCode
}
