package workload

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

func TestRolloutTemplateRef_FollowsOnlyADeployment(t *testing.T) {
	cases := []struct {
		name    string
		ref     *RolloutRef
		want    string
		wantErr bool
	}{
		{"own template", nil, "", false},
		{"a Deployment", &RolloutRef{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}, "web", false},
		{"a Deployment at another version of apps", &RolloutRef{APIVersion: "apps/v1beta1", Kind: "Deployment", Name: "web"}, "web", false},
		{"a ReplicaSet", &RolloutRef{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web"}, "", true},
		{"a PodTemplate", &RolloutRef{APIVersion: "v1", Kind: "PodTemplate", Name: "web"}, "", true},
		{"no name", &RolloutRef{APIVersion: "apps/v1", Kind: "Deployment"}, "", true},
		{"a malformed apiVersion", &RolloutRef{APIVersion: "a/b/c", Kind: "Deployment", Name: "web"}, "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := rolloutTemplateRef(&Rollout{Spec: RolloutSpec{WorkloadRef: c.ref}})
			if got != c.want || (err != nil) != c.wantErr {
				t.Errorf("rolloutTemplateRef = %q, %v; want %q, error %v", got, err, c.want, c.wantErr)
			}
		})
	}
}

// The fields of spec.workloadRef are a user's text, which the error that is
// logged and put in an Event quotes only in part.
func TestRolloutTemplateRef_ErrorQuotesAtMostAShortPieceOfEachField(t *testing.T) {
	huge := strings.Repeat("y", 256<<10)
	cases := map[string]*RolloutRef{
		"kind":       {APIVersion: "apps/v1", Kind: huge, Name: "web"},
		"name":       {APIVersion: "apps/v1", Kind: "ReplicaSet", Name: huge},
		"apiVersion": {APIVersion: huge, Kind: "Deployment", Name: "web"},
		"all":        {APIVersion: "a/" + huge, Kind: huge, Name: huge},
	}
	for name, ref := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := rolloutTemplateRef(&Rollout{Spec: RolloutSpec{WorkloadRef: ref}})
			if err == nil {
				t.Fatal("rolloutTemplateRef followed a reference it cannot follow")
			}
			if n, most := len(err.Error()), 3*maxQuotedRef+200; n > most {
				t.Errorf("the error is %d bytes, want at most %d: %.200s", n, most, err)
			}
		})
	}
}

func TestRestartAt_IsTheFirstWholeSecondAfterTheChange(t *testing.T) {
	cases := []struct{ now, want string }{
		{"2026-11-24T04:05:06.300Z", "2026-11-24T04:05:07Z"},
		{"2026-11-24T04:05:06Z", "2026-11-24T04:05:07Z"},
		{"2026-11-24T05:05:06.999+01:00", "2026-11-24T04:05:07Z"},
	}
	for _, c := range cases {
		now, err := time.Parse(time.RFC3339Nano, c.now)
		if err != nil {
			t.Fatal(err)
		}
		if got := restartAt(now).Format(time.RFC3339); got != c.want {
			t.Errorf("restartAt(%s) = %s, want %s", c.now, got, c.want)
		}
	}
}

// A Rollout of any Argo version decodes into the partial type, keeping
// only what ripple reads.
func TestRollout_DecodesAFullRolloutKeepingWhatRippleReads(t *testing.T) {
	raw := `{"apiVersion":"argoproj.io/v1alpha1","kind":"Rollout","metadata":{"name":"web","namespace":"ns","resourceVersion":"5"},
	"spec":{"replicas":3,"strategy":{"canary":{"steps":[{"setWeight":20},{"pause":{}}]}},"restartAt":"2026-11-24T04:05:07Z",
	"workloadRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web","scaleDown":"onsuccess"},
	"template":{"metadata":{"annotations":{"a":"b"}},"spec":{"containers":[{"name":"app","image":"app:1"}]}}},
	"status":{"phase":"Healthy"}}`
	var ro Rollout
	if err := json.Unmarshal([]byte(raw), &ro); err != nil {
		t.Fatal(err)
	}
	if ro.Name != "web" || ro.Spec.WorkloadRef.Name != "web" || ro.Spec.Template.Annotations["a"] != "b" ||
		ro.Spec.RestartAt.UTC().Format(time.RFC3339) != "2026-11-24T04:05:07Z" {
		t.Errorf("decoded %+v", ro)
	}
}

func TestRollout_DeepCopySharesNothing(t *testing.T) {
	at := metav1.NewTime(time.Unix(100, 0))
	ro := &Rollout{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"a": "b"}}, Spec: RolloutSpec{
		Template:    corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"t": "1"}}},
		WorkloadRef: &RolloutRef{Name: "web"}, RestartAt: &at,
	}}
	list := &RolloutList{Items: []Rollout{*ro}}
	cp := ro.DeepCopyObject().(*Rollout)
	lcp := list.DeepCopyObject().(*RolloutList)
	for _, c := range []*Rollout{cp, &lcp.Items[0]} {
		c.Annotations["a"] = "x"
		c.Spec.Template.Annotations["t"] = "x"
		c.Spec.WorkloadRef.Name = "x"
		c.Spec.RestartAt.Time = time.Unix(200, 0)
	}
	if ro.Annotations["a"] != "b" || ro.Spec.Template.Annotations["t"] != "1" || ro.Spec.WorkloadRef.Name != "web" || !ro.Spec.RestartAt.Equal(&at) {
		t.Errorf("a copy shares state with the original: %+v", ro)
	}
	if list.Items[0].Annotations["a"] != "b" {
		t.Errorf("a list copy shares state with the original")
	}
}

func TestRollRollout_WritesOnePatch(t *testing.T) {
	typ, _ := ByPlural("rollouts")
	now := time.Date(2026, 11, 24, 4, 5, 6, 500, time.UTC)
	ch := Change{Record: "key=k;at=1", Stamp: "k:1:d", Now: now}
	template := `{"metadata":{"annotations":{"ripple.dev/recorded":"key=k;at=1"},"resourceVersion":"7"},"spec":{"template":{"metadata":{"annotations":{"ripple.dev/config-digest":"k:1:d"}}}}}`
	restart := `{"metadata":{"annotations":{"ripple.dev/pods-config-digest":"k:1:d","ripple.dev/recorded":"key=k;at=1"},"resourceVersion":"7"},"spec":{"restartAt":"2026-11-24T04:05:07Z"}}`
	cases := []struct {
		name     string
		strategy string
		ref      *RolloutRef
		want     string
	}{
		{"template strategy stamps the pod template", RolloutTemplate, nil, template},
		{"restart strategy sets restartAt with the record", RolloutRestart, nil, restart},
		{"a workloadRef restarts whatever the strategy", RolloutTemplate, &RolloutRef{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}, restart},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var patches []string
			cl := fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
				Patch: func(_ context.Context, _ client.WithWatch, _ client.Object, p client.Patch, _ ...client.PatchOption) error {
					data, err := p.Data(nil)
					patches = append(patches, string(data))
					return err
				},
			}).Build()
			ro := &Rollout{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", ResourceVersion: "7"}, Spec: RolloutSpec{WorkloadRef: c.ref}}
			ch := ch
			ch.Strategy = c.strategy
			if _, err := typ.Rollout(context.Background(), cl, ro, ch); err != nil {
				t.Fatal(err)
			}
			if len(patches) != 1 || patches[0] != c.want {
				t.Errorf("patches = %v\nwant    [%s]", patches, c.want)
			}
		})
	}
}
