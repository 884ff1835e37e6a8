package controller

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/ripple-controller/ripple/internal/annotations"
	"github.com/ripple-controller/ripple/internal/refs"
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
		{"a waiter is woken once until it asks again", 2, []paceStep{
			{"admit", "Deployment", "a", admitted}, {"admit", "Deployment", "b", admitted},
			{"admit", "Deployment", "c", queued}, {"admit", "Deployment", "d", queued},
			{"release", "Deployment", "a", 0}, {"release", "Deployment", "b", 0},
		}, []string{"c", "d"}},
		{"a workload that holds a slot is underway, not admitted again", 2, []paceStep{
			{"admit", "Deployment", "a", admitted}, {"admit", "Deployment", "a", underway},
		}, nil},
		{"a Deployment and a StatefulSet of one name each take a slot", 2, []paceStep{
			{"admit", "Deployment", "a", admitted}, {"admit", "StatefulSet", "a", admitted}, {"admit", "Deployment", "b", queued},
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPacer(tc.max, time.Minute, nil, time.Now)
			wakes := make(chan event.GenericEvent, 10)
			p.wakes["Deployment"] = wakes
			for i, s := range tc.steps {
				typ, obj := paceObject(t, s.kind, s.name)
				k := paceKey{kind: typ.Kind}
				k.Namespace, k.Name = "ns", s.name
				switch s.op {
				case "admit":
					if got := p.admit(context.Background(), typ, obj, wave, 0); got != s.want {
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
				if _, inWave := p.waves[wave][k]; p.holds(k) != inWave {
					t.Fatalf("step %d: holds(%s %s) = %t, against the wave's slots", i, s.kind, s.name, !inWave)
				}
			}
			// Drained, not closed: a slot's expiry sends a minute later.
			var woken []string
			for len(wakes) > 0 {
				woken = append(woken, (<-wakes).Object.GetName())
			}
			if !slices.Equal(woken, tc.woken) {
				t.Errorf("woken %v, want %v", woken, tc.woken)
			}
		})
	}
}

// A holder is woken at its timeout by the pacer itself, so that a holder
// whose reconciles keep failing still frees its slot in time, and again
// every paceRecheck while it holds it, as settle keeps a slot whose
// workload it could not read; a slot freed before its timeout wakes nobody.
func TestPacerWakesAHolderAtItsTimeoutAndAgainWhileItHoldsItsSlot(t *testing.T) {
	const wave = "ns/ConfigMap/cfg@1"
	p := newPacer(1, 50*time.Millisecond, nil, time.Now)
	wakes := make(chan event.GenericEvent, 10)
	p.wakes["Deployment"] = wakes
	typ, freed := paceObject(t, "Deployment", "freed")
	_, holder := paceObject(t, "Deployment", "holder")
	if got := p.admit(context.Background(), typ, freed, wave, 0); got != admitted {
		t.Fatalf("admit freed = %d, want admitted", got)
	}
	p.release(typ, freed, wave)
	if got := p.admit(context.Background(), typ, holder, wave, 0); got != admitted {
		t.Fatalf("admit holder = %d, want admitted", got)
	}
	for i := range 2 {
		select {
		case ev := <-wakes:
			if ev.Object.GetName() != "holder" {
				t.Fatalf("wake-up %d is of %s, want holder: a freed slot's timeout woke it", i+1, ev.Object.GetName())
			}
		case <-time.After(paceRecheck + 5*time.Second):
			t.Fatalf("wake-up %d of a holder that keeps its slot did not come", i+1)
		}
	}
}

// A workload that never becomes available, changed in wave after wave,
// holds a slot in each: it is rechecked once every paceRecheck, not once
// per slot that timed out, which added a wake-up loop per change for good.
func TestPacerRechecksAHolderOfManySlotsOnce(t *testing.T) {
	p := newPacer(1, 50*time.Millisecond, nil, time.Now)
	wakes := make(chan event.GenericEvent, 10)
	p.wakes["Deployment"] = wakes
	typ, holder := paceObject(t, "Deployment", "holder")
	for _, wave := range []string{"ns/ConfigMap/cfg@1", "ns/ConfigMap/cfg@2", "ns/ConfigMap/cfg@3"} {
		if got := p.admit(context.Background(), typ, holder, wave, 0); got != admitted {
			t.Fatalf("admit in %s = %d, want admitted", wave, got)
		}
	}
	time.Sleep(time.Second)
	if got := len(wakes); got != 3 {
		t.Fatalf("%d wake-ups at the slots' timeouts, want 3, one per slot", got)
	}
	for len(wakes) > 0 {
		<-wakes
	}
	time.Sleep(paceRecheck)
	if got := len(wakes); got != 1 {
		t.Errorf("%d wake-ups in the paceRecheck after the timeouts, want 1", got)
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

// TestPacerRestoresTheRolloutsInProgress checks that a restarted pacer
// counts, in their waves, the rollouts a paced run started that are
// neither available nor past --rollout-timeout by the API server's clock,
// which may be far from the local one, or whose pause still holds them,
// their timeouts counted from the record or the pause's end; and that it
// wakes each of them to look again.
func TestPacerRestoresTheRolloutsInProgress(t *testing.T) {
	typ, ok := workload.ByPlural("deployments")
	if !ok {
		t.Fatal("no deployments type")
	}
	apiNow := time.Now().Add(-time.Hour)
	now := apiNow.Unix()
	deployment := func(name, rec string, available bool) *appsv1.Deployment {
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Generation: 2,
			Annotations: map[string]string{annotations.Recorded: rec}}}
		if available {
			d.Status = appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 1, UpdatedReplicas: 1, AvailableReplicas: 1}
		}
		return d
	}
	recordIn := func(wave string, at int64) string {
		return record{keyID: "k", at: at, wave: wave, objects: map[refs.Ref]string{cmRef("cfg"): "x"}}.encode()
	}
	c := fake.NewClientBuilder().WithObjects(
		deployment("rolling", recordIn("ns/ConfigMap/cfg@2", now-10), false),
		deployment("rolling-other-change", recordIn("ns/ConfigMap/other@7", now), false),
		deployment("available", recordIn("ns/ConfigMap/cfg@2", now), true),
		deployment("timed-out", recordIn("ns/ConfigMap/cfg@2", now-120), false),
		deployment("unpaced", record{keyID: "k", at: now, objects: map[refs.Ref]string{cmRef("cfg"): "x"}}.encode(), false),
		deployment("unrecorded", "", false),
		deployment("paused", recordIn("ns/ConfigMap/cfg@2", now-120), false),
		deployment("pause-ran-out", recordIn("ns/ConfigMap/cfg@2", now-120), false),
		deployment("pause-ended", recordIn("ns/ConfigMap/cfg@2", now-120), false),
		deployment("pause-ended-record-written-in-it", recordIn("ns/ConfigMap/cfg@2", now-50), false),
	).Build()
	p := newPacer(1, time.Minute, c, func() time.Time { return apiNow })
	pauseLeft := func(o client.Object) (time.Duration, bool) {
		switch o.GetName() {
		case "paused":
			return 30 * time.Second, true
		case "pause-ran-out":
			return -5 * time.Minute, true
		}
		return 0, false
	}
	// ripple ended its 110 s pause; its rollout started then, 10 s ago.
	pausePeriod := func(o client.Object) time.Duration {
		if strings.HasPrefix(o.GetName(), "pause-ended") {
			return 110 * time.Second
		}
		return 0
	}
	p.types = []pacedType{{Type: typ, pauseLeft: pauseLeft, pausePeriod: pausePeriod}}
	wakes := make(chan event.GenericEvent, 16)
	p.wakes["Deployment"] = wakes
	waiter := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "waiting"}}
	if got := p.admit(context.Background(), typ, waiter, "ns/ConfigMap/cfg@2", 0); got != queued {
		t.Fatalf("admit = %v, want queued behind the rollout a previous run started", got)
	}
	if got := p.admit(context.Background(), typ, waiter, "ns/ConfigMap/new@9", 0); got != admitted {
		t.Fatalf("admit in another wave = %v, want admitted", got)
	}
	// When each restored timeout starts, by the local clock.
	starts := map[string]time.Time{"rolling": time.Now().Add(-10 * time.Second), "rolling-other-change": time.Now(),
		"paused": time.Now().Add(30 * time.Second), "pause-ran-out": time.Now(), "pause-ended": time.Now().Add(-10 * time.Second),
		"pause-ended-record-written-in-it": time.Now()}
	for _, name := range []string{"rolling", "rolling-other-change", "paused", "pause-ran-out", "pause-ended", "pause-ended-record-written-in-it",
		"available", "timed-out", "unpaced"} {
		k := paceKey{kind: "Deployment", NamespacedName: types.NamespacedName{Namespace: "ns", Name: name}}
		want, restored := starts[name]
		if got := p.holds(k); got != restored {
			t.Errorf("%s holds a slot: %t, want %t", name, got, restored)
			continue
		}
		for wave, slots := range p.waves {
			if s, ok := slots[k]; ok && (s.from.Sub(want) > 2*time.Second || want.Sub(s.from) > 2*time.Second) {
				t.Errorf("%s's timeout in %s starts at %s, want about %s", name, wave, s.from.Format(time.TimeOnly), want.Format(time.TimeOnly))
			}
		}
	}
	woken := map[string]bool{}
	for len(wakes) > 0 {
		woken[(<-wakes).Object.GetName()] = true
	}
	if want := map[string]bool{"rolling": true, "rolling-other-change": true, "paused": true, "pause-ran-out": true, "pause-ended": true,
		"pause-ended-record-written-in-it": true}; !maps.Equal(woken, want) {
		t.Errorf("woken %v, want %v", woken, want)
	}
}

func TestPacerFreesASlotOnceItsRolloutIsDoneOrTheWorkloadIsGone(t *testing.T) {
	typ, ok := workload.ByPlural("deployments")
	if !ok {
		t.Fatal("no deployments type")
	}
	started := slot{typ: typ, uid: "old", generation: 1, from: time.Now()}
	deployment := func(uid types.UID, generation int64, available bool) *appsv1.Deployment {
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", UID: uid, Generation: generation}}
		if available {
			d.Status = appsv1.DeploymentStatus{ObservedGeneration: generation, Replicas: 1, UpdatedReplicas: 1, AvailableReplicas: 1}
		}
		return d
	}
	for _, tc := range []struct {
		name       string
		existing   *appsv1.Deployment
		slot       slot
		done, late bool
	}{
		{"in progress", deployment("old", 2, false), started, false, false},
		{"the generation ripple wrote is available", deployment("old", 2, true), started, true, false},
		{"an older generation is available, not ripple's", deployment("old", 1, true), started, false, false},
		{"deleted", nil, started, true, false},
		{"deleted and created again under its name", deployment("new", 1, false), started, true, false},
		{"past the timeout", deployment("old", 2, false), slot{typ: typ, uid: "old", generation: 1, from: time.Now().Add(-2 * time.Minute)}, true, true},
		{"paused, its timeout not started", deployment("old", 2, false), slot{typ: typ, uid: "old", generation: 1, from: time.Now().Add(time.Minute)}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := fake.NewClientBuilder()
			if tc.existing != nil {
				b = b.WithObjects(tc.existing)
			}
			p := newPacer(1, time.Minute, b.Build(), time.Now)
			// A pause of ripple's that holds it now, for a later change,
			// keeps no slot of an earlier wave past its timeout.
			p.types = []pacedType{{Type: typ, pauseLeft: func(client.Object) (time.Duration, bool) { return time.Hour, true }}}
			k := paceKey{kind: "Deployment", NamespacedName: types.NamespacedName{Namespace: "ns", Name: "a"}}
			done, late := p.done(context.Background(), k, tc.slot)
			if done != tc.done || (late != nil) != tc.late {
				t.Errorf("done, late = %t, %v; want %t, late %t", done, late, tc.done, tc.late)
			}
		})
	}
}

// Every workload one edit rolls is in one wave, and two edits are in two:
// also for a bucket of a folded record, which has no version, named by
// the newest of its members, the object edited, whatever else each
// workload tracks in it.
func TestWaveOf_NamesOneWavePerEdit(t *testing.T) {
	cfg := cmRef("cfg")
	var edited, other refs.Ref
	bucket := bucketRef(refs.ConfigMap, "app-config-0")
	for i := 1; other.Name == ""; i++ {
		if r := cmRef(fmt.Sprintf("app-config-%d", i)); bucketRef(refs.ConfigMap, r.Name) == bucket {
			if edited.Name == "" {
				edited = r
			} else {
				other = r
			}
		}
	}
	at := func(versions map[refs.Ref]string) map[refs.Ref]tracked {
		out := map[refs.Ref]tracked{}
		for ref, v := range versions {
			out[ref] = tracked{version: versionSum{version: v}}
		}
		return out
	}
	tests := []struct {
		name   string
		a, b   string
		sameAs bool
	}{
		{"an object at one version", waveOf("ns", []refs.Ref{cfg}, at(map[refs.Ref]string{cfg: "7"})), waveOf("ns", []refs.Ref{cfg}, at(map[refs.Ref]string{cfg: "7"})), true},
		{"an object at two versions", waveOf("ns", []refs.Ref{cfg}, at(map[refs.Ref]string{cfg: "7"})), waveOf("ns", []refs.Ref{cfg}, at(map[refs.Ref]string{cfg: "9"})), false},
		{"one edit of a bucket, for workloads that track other members of it",
			waveOf("ns", []refs.Ref{bucket}, at(map[refs.Ref]string{edited: "90"})),
			waveOf("ns", []refs.Ref{bucket}, at(map[refs.Ref]string{edited: "90", other: "12"})), true},
		{"one edit, for a workload whose record names the object and one whose folded record has it in a bucket",
			waveOf("ns", []refs.Ref{edited}, at(map[refs.Ref]string{edited: "90"})),
			waveOf("ns", []refs.Ref{bucket}, at(map[refs.Ref]string{edited: "90", other: "12"})), true},
		{"two edits of a bucket", waveOf("ns", []refs.Ref{bucket}, at(map[refs.Ref]string{edited: "90", other: "12"})),
			waveOf("ns", []refs.Ref{bucket}, at(map[refs.Ref]string{edited: "90", other: "95"})), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if same := tt.a == tt.b; same != tt.sameAs {
				t.Errorf("%q and %q: same wave %v, want %v", tt.a, tt.b, same, tt.sameAs)
			}
		})
	}
}
