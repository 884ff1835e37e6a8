package integration

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ripple-controller/ripple/internal/annotations"
)

// requestLog counts ripple's requests by method and path; a LIST once,
// whatever its pages (its later pages carry a continue token).
type requestLog struct {
	mu    sync.Mutex
	count map[string]int
}

func (l *requestLog) wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		if req.URL.Query().Get("continue") == "" {
			l.mu.Lock()
			if l.count == nil {
				l.count = map[string]int{}
			}
			l.count[req.Method+" "+req.URL.Path]++
			l.mu.Unlock()
		}
		return next.RoundTrip(req)
	})
}

func (l *requestLog) of(method, path string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.count[method+" "+path]
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// refuseConfigMapData fails every list and watch of ConfigMaps that asks
// for their data rather than their metadata only.
func refuseConfigMapData(next http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		if req.Method == http.MethodGet && strings.HasSuffix(req.URL.Path, "/configmaps") &&
			!strings.Contains(req.Header.Get("Accept"), "as=PartialObjectMetadata") {
			return nil, errors.New("refused by the spec")
		}
		return next.RoundTrip(req)
	})
}

var _ = Describe("Reading the data of a changed ConfigMap", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace(nil) })

	It("takes a tracked ConfigMap's new data from its watch, without reading it again", func() {
		requests := &requestLog{}
		withRippleTransport(requests.wrap)
		cm := createConfigMap(ns, "app-config", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", auto, volumeConfigMap("app-config"))
		r := startRipple()
		before := recorded(dep)
		Eventually(r.logs, 30*time.Second).Should(gbytes.Say("Watching ConfigMaps with their data"))
		get := "/api/v1/namespaces/" + ns + "/configmaps/app-config"
		reads := requests.of(http.MethodGet, get)
		Expect(reads).To(BeNumerically(">", 0), "the first sight reads the ConfigMap, through this path")

		setData(cm, "k", "2")
		before = expectRolledOnce(dep, before)
		setData(cm, "k", "3")
		expectRolledOnce(dep, before)

		Expect(requests.of(http.MethodGet, get)).To(Equal(reads), "both changes are hashed from the watch")
	})

	It("reads the ConfigMaps a reload list matches with one LIST of their namespace, shared by every workload under that list", func() {
		requests := &requestLog{}
		withRippleTransport(requests.wrap)
		for i := range 40 {
			createConfigMap(ns, fmt.Sprintf("tenant-%d", i), map[string]string{"k": "1"})
		}
		var deps []client.Object
		for i := range 20 {
			deps = append(deps, createDeployment(ns, fmt.Sprintf("dep-%d", i), map[string]string{annotations.ConfigMapReload: "tenant-.*"}))
		}
		startRipple()
		for _, d := range deps {
			recorded(d)
		}

		// Two at most: a reconcile that looked just as the shared LIST
		// ended runs its own.
		Expect(requests.of(http.MethodGet, "/api/v1/namespaces/"+ns+"/configmaps")).To(BeNumerically("<=", 2),
			"each worker reading the namespace's ConfigMaps, with their data, at once could run ripple out of memory")
	})

	It("still rolls on a ConfigMap change when ConfigMaps cannot be watched with their data", func() {
		withRippleTransport(refuseConfigMapData)
		cm := createConfigMap(ns, "app-config", map[string]string{"k": "1"})
		dep := createDeployment(ns, "dep", auto, envFromConfigMap("app-config"))
		r := startRipple()
		before := recorded(dep)
		Eventually(r.logs, 30*time.Second).Should(gbytes.Say("Watching ConfigMaps with their data failed"))

		setData(cm, "k", "2")

		expectRolledOnce(dep, before)
	})
})

// secretDataReads records the paths of ripple's reads of Secrets with
// their data, rather than their metadata only.
type secretDataReads struct {
	mu    sync.Mutex
	paths []string
}

func (s *secretDataReads) wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		if req.Method == http.MethodGet && strings.Contains(req.URL.Path, "/secrets") &&
			!strings.Contains(req.Header.Get("Accept"), "as=PartialObjectMetadata") {
			s.mu.Lock()
			s.paths = append(s.paths, req.URL.Path)
			s.mu.Unlock()
		}
		return next.RoundTrip(req)
	})
}

func (s *secretDataReads) all() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.paths)
}

var _ = Describe("Reading the data of Secrets", func() {
	It("reads only the Secrets a workload uses, one by one, even when its reload list matches many", func() {
		ns := newNamespace(nil)
		reads := &secretDataReads{}
		withRippleTransport(reads.wrap)
		for i := range 40 {
			createSecret(ns, fmt.Sprintf("tenant-%d", i), map[string]string{"k": "1"})
		}
		createSecret(ns, "unrelated", map[string]string{"token": "never read"})
		dep := createDeployment(ns, "dep", map[string]string{annotations.SecretReload: "tenant-.*"})
		startRipple()
		Eventually(func() string { return stateOf(dep).Recorded }, 30*time.Second).Should(ContainSubstring("Secret/tenant-39="))

		prefix := "/api/v1/namespaces/" + ns + "/secrets"
		here := slices.DeleteFunc(reads.all(), func(p string) bool {
			return strings.HasPrefix(p, "/api/v1/namespaces/") && !strings.HasPrefix(p, prefix)
		})
		Expect(here).To(HaveEach(HavePrefix(prefix+"/")), "no list of Secrets with their data")
		Expect(here).To(ContainElement(prefix + "/tenant-0"))
		Expect(here).NotTo(ContainElement(prefix + "/unrelated"))
	})
})
