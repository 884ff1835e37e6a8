package controller

import (
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/ripple-controller/ripple/internal/workload"
)

// paceStep is one call on a pacer: admit (want is its admission), release,
// or the end of a reconcile that did not ask for a slot.
type paceStep struct {
	op, kind, name string
	want           admission
}

func TestPacerServesWaitersInOrderAndNeverMoreThanMax(t *testing.T) {
	const wave = "ns/ConfigMap/cfg@1"
	for _, tc := range []struct {
		name  string
		max   int
		steps []paceStep
		// woken lists the Deployments woken, in order.
		woken []string
	}{
		{"admits up to max, then queues", 2, []paceStep{
			{"admit", "Deployment", "a", admitted}, {"admit", "Deployment", "b", admitted}, {"admit", "Deployment", "c", queued},
		}, nil},
		{"a freed slot goes to the first waiter, not to a newcomer or a later waiter", 1, []paceStep{
			{"admit", "Deployment", "a", admitted}, {"admit", "Deployment", "b", queued}, {"admit", "Deployment", "c", queued},
			{"release", "Deployment", "a", 0},
			{"admit", "Deployment", "d", queued}, {"admit", "Deployment", "c", queued}, {"admit", "Deployment", "b", admitted},
		}, []string{"b"}},
		{"a waiter that stops asking leaves the queue and hands its turn on", 1, []paceStep{
			{"admit", "Deployment", "a", admitted}, {"admit", "Deployment", "b", queued}, {"admit", "Deployment", "c", queued},
			{"release", "Deployment", "a", 0}, {"reconciled", "Deployment", "b", 0},
			{"admit", "Deployment", "c", admitted},
		}, []string{"b", "c"}},
		{"a waiter that asks again keeps its place", 1, []paceStep{
			{"admit", "Deployment", "a", admitted}, {"admit", "Deployment", "b", queued}, {"admit", "Deployment", "c", queued},
			{"admit", "Deployment", "b", queued}, {"release", "Deployment", "a", 0},
			{"admit", "Deployment", "c", queued}, {"admit", "Deployment", "b", admitted},
		}, []string{"b"}},
		{"a workload that holds a slot is underway, not admitted again", 2, []paceStep{
			{"admit", "Deployment", "a", admitted}, {"admit", "Deployment", "a", underway},
		}, nil},
		{"a Deployment and a StatefulSet of one name each take a slot", 2, []paceStep{
			{"admit", "Deployment", "a", admitted}, {"admit", "StatefulSet", "a", admitted}, {"admit", "Deployment", "b", queued},
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPacer(tc.max, time.Minute, nil)
			wakes := make(chan event.GenericEvent, 10)
			p.wakes["Deployment"] = wakes
			for i, s := range tc.steps {
				typ, obj := paceObject(t, s.kind, s.name)
				k := paceKey{kind: typ.Kind}
				k.Namespace, k.Name = "ns", s.name
				switch s.op {
				case "admit":
					if got := p.admit(typ, obj, wave, 0); got != s.want {
						t.Fatalf("step %d: admit %s %s = %d, want %d", i, s.kind, s.name, got, s.want)
					}
					p.reconciled(k)
				case "release":
					p.release(typ, obj, wave)
				case "reconciled":
					p.reconciled(k)
				}
				if n := len(p.waves[wave]); n > tc.max {
					t.Fatalf("step %d: %d in progress, max %d", i, n, tc.max)
				}
			}
			close(wakes)
			var woken []string
			for ev := range wakes {
				woken = append(woken, ev.Object.GetName())
			}
			if !slices.Equal(woken, tc.woken) {
				t.Errorf("woken %v, want %v", woken, tc.woken)
			}
		})
	}
}

func paceObject(t *testing.T, kind, name string) (workload.Type, *metav1.PartialObjectMetadata) {
	t.Helper()
	plural := map[string]string{"Deployment": "deployments", "StatefulSet": "statefulsets"}[kind]
	typ, ok := workload.ByPlural(plural)
	if !ok {
		t.Fatalf("no type %s", plural)
	}
	obj := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Generation: 1}}
	obj.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind(kind))
	return typ, obj
}
