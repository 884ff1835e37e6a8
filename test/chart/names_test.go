package chart

import (
	"fmt"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The full name is cut to 63 characters, the most a Service's name (a DNS
// label) takes; a name the chart builds from it with a suffix must still fit.
var _ = Describe("The chart with the longest names", Label("install"), func() {
	const namespace = "ripple-long"

	DescribeTable("names every object, and what ripple creates, as the API server takes them",
		func(ctx SpecContext, release string, flags ...string) {
			createNamespaces(ctx, namespace)
			out, objs := renderAs(release, namespace, "monitoring", flags...)

			// The metrics Service's name is also the job label a
			// ServiceMonitor gives ripple's series, which the alerts select.
			svcs := objs.ofKind("Service")
			Expect(svcs).To(HaveLen(1))
			Expect(len(svcs[0].GetName())).To(BeNumerically("<=", 63), svcs[0].GetName())
			Expect(svcs[0].GetName()).NotTo(ContainSubstring("--"), "a '-' left where the full name was cut")
			Expect(out).To(ContainSubstring(fmt.Sprintf("job=%q", svcs[0].GetName())))
			// Every object but the Prometheus Operator's, whose CRDs the
			// control plane does not serve.
			served := slices.DeleteFunc(slices.Clone(objs), func(u *unstructured.Unstructured) bool {
				return u.GetKind() == "PrometheusRule" || u.GetKind() == "ServiceMonitor"
			})
			for _, u := range served {
				Expect(k8s.Apply(ctx, client.ApplyConfigurationFromUnstructured(u.DeepCopy()), client.FieldOwner("names-test"),
					client.ForceOwnership, client.DryRunAll)).To(Succeed(), "a server-side dry run of %s %s", u.GetKind(), u.GetName())
			}

			// The digest key Secret and the Lease, which ripple creates under
			// the names the chart passes it.
			opts, _ := parseArgs(expandArgs(deploymentOf(objs).Spec.Template.Spec.Containers[0], namespace))
			keyNs, keyName, _ := strings.Cut(opts.HMACKeySecret, "/")
			Expect(k8s.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: keyNs, Name: keyName}}, client.DryRunAll)).
				To(Succeed(), "a dry run of the key Secret %s", opts.HMACKeySecret)
			Expect(opts.EnableHA).To(BeTrue())
			Expect(k8s.Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: opts.LeaderElectionNamespace, Name: opts.LeaderElectionID}}, client.DryRunAll)).
				To(Succeed(), "a dry run of the Lease %s", opts.LeaderElectionID)
		},
		Entry("a fullnameOverride of 60 characters", goldenRelease, "--set", "fullnameOverride="+strings.Repeat("a", 60)),
		Entry("one cut to end in '-' before the suffix", goldenRelease, "--set", "fullnameOverride="+strings.Repeat("a", 54)+"-bcdefghij"),
		// 53 characters is the longest release name helm takes; without
		// "ripple" in it, "-ripple" is added, then cut.
		Entry("a release name of 53 characters", strings.Repeat("x", 53)),
	)

	// The API server refuses a Lease with another name; ripple, given one,
	// runs Ready with no replica ever leading, so nothing rolls.
	It("takes as leader election id the Lease names the API server takes, and refuses the others", func(ctx SpecContext) {
		createNamespaces(ctx, namespace)
		for _, id := range []string{
			"ripple-leader", "ripple.leader.example", "0", strings.Repeat("a", 63) + "." + strings.Repeat("b", 189),
			"Ripple_Leader", "ripple-leader-", "-ripple", "ripple..leader", "ripple_leader", strings.Repeat("a", 254),
		} {
			lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: id}}
			apiErr := k8s.Create(ctx, lease, client.DryRunAll)
			_, err := helm.run(ctx, "template", goldenRelease, chartDir, "--namespace", namespace,
				"--set", "highAvailability.enabled=true", "--set-string", "highAvailability.leaderElection.id="+id)
			if apiErr == nil {
				Expect(err).NotTo(HaveOccurred(), "the API server takes Lease %q", id)
			} else {
				Expect(apierrors.IsInvalid(apiErr)).To(BeTrue(), "Lease %q: %v", id, apiErr)
				Expect(err).To(MatchError(ContainSubstring("'/highAvailability/leaderElection/id'")), "the API server refuses Lease %q", id)
			}
		}
	})
})
