package integration

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/transport"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// asUser makes every ripple the current spec starts act as user, whose
// rights the spec grants.
func asUser(user string) {
	withRippleTransport(func(rt http.RoundTripper) http.RoundTripper {
		return transport.NewImpersonatingRoundTripper(transport.ImpersonationConfig{UserName: user}, rt)
	})
}

// grant gives user rules, in ns or, for "", cluster-wide, and returns the
// Role or ClusterRole that holds them.
func grant(user, ns string, rules ...rbacv1.PolicyRule) client.Object {
	GinkgoHelper()
	meta := metav1.ObjectMeta{GenerateName: "ripple-access-", Namespace: ns}
	subjects := []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}
	var role, binding client.Object
	if ns == "" {
		role = &rbacv1.ClusterRole{ObjectMeta: meta, Rules: rules}
	} else {
		role = &rbacv1.Role{ObjectMeta: meta, Rules: rules}
	}
	Expect(k8s.Create(suiteCtx, role)).To(Succeed())
	ref := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.GetName()}
	if ns == "" {
		ref.Kind = "ClusterRole"
		binding = &rbacv1.ClusterRoleBinding{ObjectMeta: meta, Subjects: subjects, RoleRef: ref}
	} else {
		binding = &rbacv1.RoleBinding{ObjectMeta: meta, Subjects: subjects, RoleRef: ref}
	}
	Expect(k8s.Create(suiteCtx, binding)).To(Succeed())
	DeferCleanup(func() {
		Expect(k8s.Delete(suiteCtx, binding)).To(Succeed())
		Expect(k8s.Delete(suiteCtx, role)).To(Succeed())
	})
	return role
}

// withoutSelfReviews takes, until the spec ends, the right to review one's
// own rights from every user: the binding of system:basic-user, which the
// API server grants every authenticated user (impersonated ones too) and
// puts back only when it starts.
func withoutSelfReviews() {
	GinkgoHelper()
	binding := &rbacv1.ClusterRoleBinding{}
	Expect(k8s.Get(suiteCtx, client.ObjectKey{Name: "system:basic-user"}, binding)).To(Succeed())
	Expect(k8s.Delete(suiteCtx, binding)).To(Succeed())
	DeferCleanup(func() {
		binding.ResourceVersion, binding.UID = "", ""
		Expect(k8s.Create(suiteCtx, binding)).To(Succeed())
	})
}

func rule(group string, resources []string, verbs ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{APIGroups: []string{group}, Resources: resources, Verbs: verbs}
}

// keyRights are the digest key's rights in ripple's namespace.
var keyRights = []rbacv1.PolicyRule{rule("", []string{"secrets"}, "get", "create")}

// reloaderRights are Reloader v1.4.21's ClusterRole with its chart's
// defaults.
var reloaderRights = []rbacv1.PolicyRule{
	rule("", []string{"secrets", "configmaps"}, "list", "get", "watch"),
	rule("apps", []string{"deployments", "daemonsets", "statefulsets"}, "list", "get", "update", "patch"),
	rule("batch", []string{"cronjobs"}, "list", "get"),
	rule("batch", []string{"jobs"}, "create", "delete", "list", "get"),
	rule("", []string{"events"}, "create", "patch"),
}

// rippleRights are what the README's RBAC table lists for ripple's flags
// by default, in one namespace.
var rippleRights = []rbacv1.PolicyRule{
	rule("apps", []string{"deployments", "statefulsets", "daemonsets"}, "get", "list", "watch", "patch"),
	rule("batch", []string{"cronjobs"}, "get", "list", "watch", "patch"),
	rule("batch", []string{"jobs"}, "get", "list", "watch", "patch", "delete", "create"),
	rule("", []string{"configmaps", "secrets"}, "get", "list", "watch"),
	rule("events.k8s.io", []string{"events"}, "create"),
}

var _ = Describe("Rights at start", func() {
	It("refuses to start under Reloader's ClusterRole, naming each watch it lacks, instead of waiting unready forever", func() {
		user := "reloader-" + newNamespace(nil)
		grant(user, "", reloaderRights...)
		grant(user, metav1.NamespaceDefault, keyRights...)
		asUser(user)

		err := startRippleErr()
		Expect(err).To(HaveOccurred())
		for _, lacking := range []string{"watch deployments.apps cluster-wide", "watch statefulsets.apps cluster-wide",
			"watch daemonsets.apps cluster-wide", "watch cronjobs.batch cluster-wide", "watch jobs.batch cluster-wide"} {
			Expect(err.Error()).To(ContainSubstring(lacking))
		}
		Expect(err.Error()).NotTo(ContainSubstring("configmaps"), "Reloader's ClusterRole lets ripple list and watch ConfigMaps")
		Expect(err.Error()).To(ContainSubstring("--ignored-workload-types"))
	})

	It("refuses to start when one namespace of --namespaces does not let it watch StatefulSets, naming that namespace", func() {
		full, short := newNamespace(nil), newNamespace(nil)
		user := "scoped-" + full
		grant(user, full, rippleRights...)
		grant(user, short, append([]rbacv1.PolicyRule{rule("apps", []string{"statefulsets"}, "get", "list", "patch")}, rippleRights[1:]...)...)
		grant(user, short, rule("apps", []string{"deployments", "daemonsets"}, "get", "list", "watch", "patch"))
		grant(user, metav1.NamespaceDefault, keyRights...)
		asUser(user)

		err := startRippleErr("--namespaces=" + full + "," + short)
		Expect(err).To(MatchError(ContainSubstring("watch statefulsets.apps in namespace " + short)))
		Expect(err.Error()).NotTo(ContainSubstring("in namespace "+full), "ripple may do all it needs in %s", full)
	})

	It("asks about its rights past a low --kube-api-qps, so that it starts before a liveness probe would give up", func(ctx SpecContext) {
		var namespaces []string
		for range 6 {
			namespaces = append(namespaces, newNamespace(nil))
		}
		cm := createConfigMap(namespaces[0], "cfg", map[string]string{"k": "1"})
		dep := createDeployment(namespaces[0], "web", auto, volumeConfigMap("cfg"))

		// 84 reviews at 0.1 a second past a burst of 60 would take minutes.
		startRipple("--namespaces="+strings.Join(namespaces, ","), "--kube-api-qps=0.1", "--kube-api-burst=60")
		before := recorded(dep)
		setData(cm, "k", "2")
		expectRolledOnce(dep, before)
	}, NodeTimeout(time.Minute))

	It("starts, and says it did not check, where it may not review its own rights", func() {
		ns := newNamespace(nil)
		user := "unreviewed-" + ns
		grant(user, ns, rippleRights...)
		grant(user, metav1.NamespaceDefault, keyRights...)
		withoutSelfReviews()
		asUser(user)
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		dep := createDeployment(ns, "web", auto, volumeConfigMap("cfg"))

		ripple := startRipple("--namespaces=" + ns)
		Eventually(ripple.logs).Should(gbytes.Say("Not checking ripple's rights at start: it may not review them"))
		before := recorded(dep)
		setData(cm, "k", "2")
		expectRolledOnce(dep, before)
	})

	It("starts and rolls under a Role in each namespace of --namespaces with the rights the README lists", func() {
		ns := newNamespace(nil)
		user := "scoped-" + ns
		grant(user, ns, rippleRights...)
		grant(user, metav1.NamespaceDefault, keyRights...)
		asUser(user)
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		dep := createDeployment(ns, "web", auto, volumeConfigMap("cfg"))

		startRipple("--namespaces=" + ns)
		before := recorded(dep)
		setData(cm, "k", "2")
		expectRolledOnce(dep, before)
	})
})

// cutStatefulSetWatches makes every ripple the current spec starts act as
// user, and returns a function that ends its watches of StatefulSets, as a
// network blip or an API server's restart would: RBAC authorizes a watch
// when it starts, so a right revoked since shows only at the next one.
func cutStatefulSetWatches(user string) (cut func()) {
	var mu sync.Mutex
	var open []io.Closer
	withRippleTransport(func(rt http.RoundTripper) http.RoundTripper {
		rt = transport.NewImpersonatingRoundTripper(transport.ImpersonationConfig{UserName: user}, rt)
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(req)
			if err == nil && strings.HasSuffix(req.URL.Path, "/statefulsets") && req.URL.Query().Get("watch") != "" {
				mu.Lock()
				open = append(open, resp.Body)
				mu.Unlock()
			}
			return resp, err
		})
	})
	return func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range open {
			_ = c.Close()
		}
		open = nil
	}
}

var _ = Describe("Rights while running", func() {
	It("reports unready, and logs it once, while the API server refuses it a watch it had, and sees changes again once the right is back", func() {
		ns := newNamespace(nil)
		user := "revoked-" + ns
		grant(user, ns, append([]rbacv1.PolicyRule{rule("apps", []string{"deployments", "daemonsets"}, "get", "list", "watch", "patch")}, rippleRights[1:]...)...)
		stsRights := grant(user, ns, rule("apps", []string{"statefulsets"}, "get", "list", "watch", "patch")).(*rbacv1.Role)
		grant(user, metav1.NamespaceDefault, keyRights...)
		cut := cutStatefulSetWatches(user)
		cm := createConfigMap(ns, "cfg", map[string]string{"k": "1"})
		first := createStatefulSet(ns, "first", auto, volumeConfigMap("cfg"))
		probe := freeAddress()
		ripple := startRipple("--namespaces="+ns, "--health-probe-bind-address="+probe)
		recorded(first)
		readyz := httpGet("http://" + probe + "/readyz")
		Eventually(readyz, 20*time.Second).Should(HavePrefix("200"))

		// Listing alone keeps the informer up to a minute behind.
		update(stsRights, func(r *rbacv1.Role) { r.Rules[0].Verbs = []string{"get", "list", "patch"} })
		cut()

		Eventually(readyz, 20*time.Second).Should(And(HavePrefix("500"), ContainSubstring("[-]rights failed")))
		Consistently(readyz, 3*time.Second).Should(HavePrefix("500"), "its lists, which succeed, are not watches")
		logs := string(ripple.logs.Contents())
		Expect(strings.Count(logs, "Refused a list or watch")).To(Equal(1), "logged once, not on each retry")
		Expect(logs).NotTo(MatchRegexp(`Failed to watch.*forbidden`), "client-go's line on each retry is left out")

		update(stsRights, func(r *rbacv1.Role) { r.Rules[0].Verbs = []string{"get", "list", "watch", "patch"} })

		Eventually(readyz, 30*time.Second).Should(HavePrefix("200"))
		Eventually(ripple.logs).Should(gbytes.Say("Watching again after a refusal"))
		second := createStatefulSet(ns, "second", auto, volumeConfigMap("cfg"))
		firstBefore, secondBefore := recorded(first), recorded(second)
		setData(cm, "k", "2")
		expectRolledOnce(first, firstBefore)
		expectRolledOnce(second, secondBefore)
	})
})

// holdStatefulSetLists makes ripple's lists and watches of StatefulSets
// (client-go lists through a watch) wait until the spec ends, as a slow
// first list on a large cluster does.
func holdStatefulSetLists() {
	release := make(chan struct{})
	DeferCleanup(func() { close(release) })
	withRippleTransport(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			if req.Method == http.MethodGet && strings.HasSuffix(req.URL.Path, "/statefulsets") {
				select {
				case <-release:
				case <-req.Context().Done():
					return nil, req.Context().Err()
				}
			}
			return rt.RoundTrip(req)
		})
	})
}

var _ = Describe("Stopping", func() {
	It("ends at once when stopped before its caches are in sync, instead of waiting for them", func() {
		holdStatefulSetLists()
		r := startRipple()
		Consistently(r.done, time.Second).ShouldNot(Receive(), "ripple runs while its caches fill")

		r.cancel()
		r.cancel = nil
		Eventually(r.done, 5*time.Second).Should(Receive(BeNil()))
		Eventually(r.logs).Should(gbytes.Say("Stopped before the caches were in sync"))
	})
})
