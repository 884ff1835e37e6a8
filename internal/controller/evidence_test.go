package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ripple-controller/ripple/internal/annotations"
	"github.com/ripple-controller/ripple/internal/digest"
	"github.com/ripple-controller/ripple/internal/options"
	"github.com/ripple-controller/ripple/internal/refs"
	"github.com/ripple-controller/ripple/internal/workload"
)

func TestStamp_RoundTripAndRejects(t *testing.T) {
	st := stamp{keyID: "ab12cd34", at: 1700000000, digest: "00ff"}
	got, ok := decodeStamp(st.encode())
	if !ok || got != st {
		t.Fatalf("decodeStamp(%q) = %+v, %v; want %+v", st.encode(), got, ok, st)
	}
	for _, bad := range []string{"", "00ff", "k:1", "k:x:00ff", ":1:00ff", "k:1:", "k:1:2:3"} {
		if _, ok := decodeStamp(bad); ok {
			t.Errorf("decodeStamp(%q) accepted a value ripple never writes", bad)
		}
	}
}

func TestDecodeEnvStamp_OnlyRipplesForm(t *testing.T) {
	digest := strings.Repeat("0f", 32)
	cases := []struct {
		name, value string
		ours        bool
	}{
		{"STAKATER_CFG_CONFIGMAP", "ab12cd34:1700000000:" + digest, true},
		{"STAKATER_REDIS_ADDR", "redis:6379:0", false},
		{"STAKATER_WINDOW", "12:30:00", false},
		{"STAKATER_CFG_CONFIGMAP", "3b5d5c3712955042212316173ccf37be800c9d3b", false},
		{"STAKATER_CFG_CONFIGMAP", "AB12CD34:1700000000:" + digest, false},
		{"OTHER", "ab12cd34:1700000000:" + digest, false},
	}
	for _, c := range cases {
		if _, ours := decodeEnvStamp(c.name, c.value); ours != c.ours {
			t.Errorf("decodeEnvStamp(%s=%s) reads it as ripple's: %v, want %v", c.name, c.value, ours, c.ours)
		}
	}
}

// A writer that strips the record each time ripple writes it: ripple asks
// for a back-off before each write, waits it out, writes, and loses the
// record a second later.
func TestStrips_BackOffOnlyAfterRepeatedLossAndWarnOnce(t *testing.T) {
	key := types.NamespacedName{Namespace: "ns", Name: "app"}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := newStrips()
	now := t0
	var waits []time.Duration
	warnings := 0
	for range stripsAllowed + 6 {
		wait, warn := s.backoff(key, "u", now)
		if warn {
			warnings++
		}
		waits = append(waits, wait)
		now = now.Add(wait)
		if again, _ := s.backoff(key, "u", now); again != 0 {
			t.Fatalf("still backing off for %v once the back-off of %v is over", again, wait)
		}
		s.written(key, "u", now)
		now = now.Add(time.Second)
	}
	m := time.Minute
	// Fifteen minutes on, the window that began at the first record is over,
	// and the count starts again.
	want := []time.Duration{0, 0, 0, 0, 0, m, 2 * m, 4 * m, 8 * m, 0, 0}
	if !slices.Equal(waits, want) || warnings != 1 {
		t.Fatalf("back-offs %v with %d warnings; want %v with 1", waits, warnings, want)
	}
}

func TestStrips_OnlyWrittenRecordsCount(t *testing.T) {
	key := types.NamespacedName{Namespace: "ns", Name: "app"}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name    string
		written []time.Duration // offsets from t0 of each record written
		want    time.Duration   // the back-off asked for at the end
	}{
		{"attempts after fewer than stripsAllowed records count nothing", []time.Duration{0, time.Second, 2 * time.Second, 3 * time.Second}, 0},
		{"stripsAllowed records written in the window", []time.Duration{0, time.Second, 2 * time.Second, 3 * time.Second, 4 * time.Second}, time.Minute},
		{"records written beyond the window", []time.Duration{0, 11 * time.Minute, 22 * time.Minute, 33 * time.Minute, 44 * time.Minute, 55 * time.Minute}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStrips()
			end := t0
			for _, d := range tc.written {
				end = t0.Add(d)
				s.written(key, "u", end)
			}
			// Attempts refused for a conflict, say: they ask, and write nothing.
			for range 100 {
				s.backoff(key, "u", end)
			}
			if got, _ := s.backoff(key, "u", end); got != tc.want {
				t.Fatalf("backoff = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestStrips_ForgetStartsOver(t *testing.T) {
	key := types.NamespacedName{Namespace: "ns", Name: "app"}
	s := newStrips()
	now := time.Now()
	for range stripsAllowed {
		s.written(key, "u", now)
	}
	s.forget(key)
	if wait, _ := s.backoff(key, "u", now); wait != 0 {
		t.Fatalf("a workload whose record was kept again backs off for %v", wait)
	}
}

// A Job created again under its name (a Helm hook, say) is another
// workload: the records written for the ones before it are no sign of a
// writer stripping its own.
func TestStrips_AWorkloadCreatedAgainStartsOver(t *testing.T) {
	key := types.NamespacedName{Namespace: "ns", Name: "hook"}
	s := newStrips()
	now := time.Now()
	for i := range stripsAllowed + 1 {
		s.written(key, types.UID(fmt.Sprint(i)), now)
	}
	if wait, _ := s.backoff(key, "next", now); wait != 0 {
		t.Fatalf("a workload created again under its name backs off for %v", wait)
	}
}

func TestStrips_AWriterWarnedOfIsWarnedOfOnce(t *testing.T) {
	key := types.NamespacedName{Namespace: "ns", Name: "app"}
	s := newStrips()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	warnings := 0
	// Each hour, the writer strips the record six times in a row.
	for range 3 {
		for range stripsAllowed + 1 {
			wait, warn := s.backoff(key, "u", now)
			if warn {
				warnings++
			}
			now = now.Add(wait)
			s.written(key, "u", now)
			now = now.Add(time.Second)
		}
		now = now.Add(time.Hour)
	}
	if warnings != 1 {
		t.Fatalf("%d warnings, want 1", warnings)
	}
}

func TestStrips_CountsWhoseWindowIsOverAreDropped(t *testing.T) {
	s := newStrips()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 100 {
		s.written(types.NamespacedName{Namespace: "ns", Name: fmt.Sprint(i)}, "u", t0)
	}
	s.written(types.NamespacedName{Namespace: "ns", Name: "late"}, "u", t0.Add(2*stripWindow))
	if len(s.m) != 1 {
		t.Fatalf("%d counts kept, want only the one still in its window", len(s.m))
	}
}

func TestOnceSet_FirstOncePerWorkloadUntilForgotten(t *testing.T) {
	o := newOnceSet()
	a, b := types.NamespacedName{Name: "a"}, types.NamespacedName{Name: "b"}
	if !o.first(a) || o.first(a) || !o.first(b) {
		t.Fatal("first must be true once per workload, then false")
	}
	o.forget(a)
	if o.has(a) || !o.first(a) || !o.has(b) {
		t.Fatal("a forgotten workload must be first again, and only it")
	}
}

// exactReader answers a List with obj, as the API server answers a LIST
// at the exact version a birth was seen at.
type exactReader struct {
	client.Reader
	obj *corev1.ConfigMap
}

func (r exactReader) List(_ context.Context, list client.ObjectList, _ ...client.ListOption) error {
	list.(*corev1.ConfigMapList).Items = []corev1.ConfigMap{*r.obj}
	return nil
}

// TestChangedSinceCreation checks the evidence of a data change since an
// object's creation when ripple saw it first at an older version than
// now: the data at that version, unless that version itself shows a data
// write after the creation, as a relist after a watch gap does.
func TestChangedSinceCreation(t *testing.T) {
	created := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 10, 0, time.UTC))
	later := metav1.NewTime(created.Add(3 * time.Second))
	data := metav1.NewFieldsV1(`{"f:data":{".":{},"f:k":{}}}`)
	tests := []struct {
		name string
		// writtenAt is when the version ripple saw first shows its data
		// written; its data is "1".
		writtenAt metav1.Time
		nowData   string
		want      bool
	}{
		{name: "seen at its creation, only its labels changed since", writtenAt: created, nowData: "1", want: false},
		{name: "seen at its creation, its data changed since", writtenAt: created, nowData: "2", want: true},
		{name: "seen first after a data write, nothing changed since", writtenAt: later, nowData: "1", want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			at7 := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "app", UID: "uid-app", ResourceVersion: "7",
				CreationTimestamp: created, ManagedFields: []metav1.ManagedFieldsEntry{{Time: &tt.writtenAt, FieldsV1: data}}},
				Data: map[string]string{"k": "1"}}
			d := newDigests(exactReader{obj: at7}, time.Now)
			d.born.add(at7, time.Now())
			now := at7.DeepCopy()
			now.ResourceVersion, now.Data = "8", map[string]string{"k": tt.nowData}
			meta := &metav1.PartialObjectMetadata{ObjectMeta: now.ObjectMeta}
			got, err := d.changedSinceCreation(context.Background(), refs.ConfigMap, meta, sumVersion(now))
			if err != nil || got != tt.want {
				t.Fatalf("changedSinceCreation = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

func TestRewrittenByManagedFields(t *testing.T) {
	created := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 10, 0, time.UTC))
	later := metav1.NewTime(created.Add(3 * time.Second))
	data := metav1.NewFieldsV1(`{"f:data":{".":{},"f:k":{}}}`)
	binary := metav1.NewFieldsV1(`{"f:binaryData":{"f:k":{}}}`)
	stringData := metav1.NewFieldsV1(`{"f:stringData":{"f:k":{}}}`)
	labels := metav1.NewFieldsV1(`{"f:metadata":{"f:labels":{"f:a":{}}}}`)
	labelNamedData := metav1.NewFieldsV1(`{"f:metadata":{"f:labels":{"f:data":{}}}}`)
	tests := []struct {
		name   string
		fields []metav1.ManagedFieldsEntry
		want   bool
	}{
		{"only created", []metav1.ManagedFieldsEntry{{Time: &created, FieldsV1: data}}, false},
		{"data written later", []metav1.ManagedFieldsEntry{{Time: &later, FieldsV1: data}}, true},
		{"binary data written later", []metav1.ManagedFieldsEntry{{Time: &later, FieldsV1: binary}}, true},
		{"a Secret's stringData applied later", []metav1.ManagedFieldsEntry{{Time: &later, FieldsV1: stringData}}, true},
		{"labels written later by another manager", []metav1.ManagedFieldsEntry{{Time: &created, FieldsV1: data}, {Time: &later, FieldsV1: labels}}, false},
		{"a label named data written later by another manager", []metav1.ManagedFieldsEntry{{Time: &created, FieldsV1: data}, {Time: &later, FieldsV1: labelNamedData}}, false},
		{"no time", []metav1.ManagedFieldsEntry{{FieldsV1: data}}, false},
		{"no managed fields", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := configObject("ConfigMap")
			obj.CreationTimestamp = created
			obj.ManagedFields = tt.fields
			vs := versionSum{dataWrittenAt: dataWrittenAt(obj)}
			if got := vs.rewritten(obj); got != tt.want {
				t.Fatalf("rewritten = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestBirths_KeptForAWhileThenPruned(t *testing.T) {
	b := births{byUID: map[types.UID]birth{}}
	t0 := time.Now()
	old, fresh := configObject("ConfigMap"), configObject("ConfigMap")
	old.UID, old.ResourceVersion = "old", "5"
	fresh.UID, fresh.ResourceVersion = "fresh", "9"
	b.add(old, t0)
	if v, ok := b.version("old"); !ok || v != "5" {
		t.Fatalf("version(old) = %q, %v", v, ok)
	}
	b.add(fresh, t0.Add(birthsKept+2*time.Minute))
	if _, ok := b.version("old"); ok {
		t.Fatal("a birth older than birthsKept was not pruned")
	}
	if _, ok := b.version("fresh"); !ok {
		t.Fatal("a fresh birth was pruned")
	}
	b.forget("fresh")
	if _, ok := b.version("fresh"); ok {
		t.Fatal("forget kept the birth")
	}
}

func TestWrittenSince_OnlyRewritesAtOrAfterTheRecord(t *testing.T) {
	current := map[refs.Ref]tracked{
		cmRef("rewritten-after"):  {createdAt: 100, version: versionSum{dataWrittenAt: 205}},
		cmRef("rewritten-at"):     {createdAt: 100, version: versionSum{dataWrittenAt: 200}},
		cmRef("rewritten-before"): {createdAt: 100, version: versionSum{dataWrittenAt: 199}},
		cmRef("created-after"):    {createdAt: 300, version: versionSum{dataWrittenAt: 300}},
		cmRef("never-rewritten"):  {createdAt: 50, version: versionSum{dataWrittenAt: 50}},
	}
	got := writtenSince(current, 200)
	want := []refs.Ref{cmRef("rewritten-after"), cmRef("rewritten-at")}
	if !slices.Equal(got, want) {
		t.Fatalf("writtenSince = %v, want %v", got, want)
	}
}

// An object ripple first saw at its current version, as a relist after a
// watch gap adds one created and edited during the gap, counts as changed
// when its managed fields show its data written after its creation.
func TestChangedSinceCreation_FirstSeenAtTheCurrentVersion(t *testing.T) {
	created := metav1.NewTime(time.Unix(100, 0))
	for _, tc := range []struct {
		name          string
		dataWrittenAt int64
		want          bool
	}{
		{"seen at its creation", 100, false},
		{"seen after a data write during a watch gap", 105, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newDigests(nil, time.Now)
			meta := configObject("ConfigMap")
			meta.UID, meta.ResourceVersion, meta.CreationTimestamp = "u", "7", created
			d.born.add(meta, time.Now())
			got, err := d.changedSinceCreation(context.Background(), "ConfigMap", meta,
				versionSum{version: "7", dataWrittenAt: tc.dataWrittenAt})
			if err != nil || got != tc.want {
				t.Fatalf("changedSinceCreation = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

// TestTemplateStamp_TheLaterOfAnnotationAndVariables: a workload rolled
// under one strategy and then the other carries both stamps; the one its
// last rollout wrote, the later, says when it rolled and what its pods run.
func TestTemplateStamp_TheLaterOfAnnotationAndVariables(t *testing.T) {
	t1 := stamp{keyID: "ab12cd34", at: 1700000000, digest: strings.Repeat("a", 64)}
	t2 := stamp{keyID: "ab12cd34", at: 1700000600, digest: strings.Repeat("b", 64)}
	tests := []struct {
		name      string
		strategy  string
		ann, env  *stamp
		reloader  bool // a variable of Reloader's (a SHA-1), not a stamp
		want      stamp
		wantFound bool
	}{
		{name: "none", strategy: workload.StampEnvVars},
		{name: "annotation alone", strategy: workload.StampEnvVars, ann: &t1, want: t1, wantFound: true},
		{name: "variables alone", strategy: workload.StampEnvVars, env: &t1, want: t1, wantFound: true},
		{name: "variables rolled after the annotation", strategy: workload.StampEnvVars, ann: &t1, env: &t2, want: t2, wantFound: true},
		{name: "annotation rolled after the variables", strategy: workload.StampEnvVars, ann: &t2, env: &t1, want: t2, wantFound: true},
		{name: "Reloader's variable is no stamp", strategy: workload.StampEnvVars, ann: &t1, reloader: true, want: t1, wantFound: true},
		{name: "switched back to annotations: the variables of the last rollout still count", strategy: workload.StampAnnotations, ann: &t1, env: &t2, want: t2, wantFound: true},
		{name: "switched back to annotations and rolled since", strategy: workload.StampAnnotations, ann: &t2, env: &t1, want: t2, wantFound: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmpl := &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app"}}}}
			if tt.ann != nil {
				tmpl.Annotations = map[string]string{annotations.ConfigDigest: tt.ann.encode()}
			}
			if tt.env != nil {
				tmpl.Spec.Containers[0].Env = append(tmpl.Spec.Containers[0].Env,
					corev1.EnvVar{Name: "STAKATER_A_CONFIGMAP", Value: tt.env.encode()})
			}
			if tt.reloader {
				tmpl.Spec.Containers[0].Env = append(tmpl.Spec.Containers[0].Env,
					corev1.EnvVar{Name: "STAKATER_B_CONFIGMAP", Value: "da39a3ee5e6b4b0d3255bfef95601890afd80709"})
			}
			v := state{view: &view{reloadStrategy: tt.strategy}, tmpl: tmpl}
			got, found := templateStamp(v)
			if found != tt.wantFound || got != tt.want {
				t.Fatalf("templateStamp = %+v, %v; want %+v, %v", got, found, tt.want, tt.wantFound)
			}
		})
	}
}

// TestPodsStamp_ARefreshAfterTheLastRolloutIsWhatThePodsRun: a refresh
// stamps the workload's metadata, not its template; the later of the two
// says what the pods run.
func TestPodsStamp_ARefreshAfterTheLastRolloutIsWhatThePodsRun(t *testing.T) {
	t1 := stamp{keyID: "ab12cd34", at: 1700000000, digest: strings.Repeat("a", 64)}
	t2 := stamp{keyID: "ab12cd34", at: 1700000600, digest: strings.Repeat("b", 64)}
	tests := []struct {
		name              string
		rolled, refreshed *stamp
		want              stamp
		wantFound         bool
	}{
		{name: "neither"},
		{name: "rolled alone", rolled: &t1, want: t1, wantFound: true},
		{name: "refreshed alone", refreshed: &t1, want: t1, wantFound: true},
		{name: "refreshed after the rollout", rolled: &t1, refreshed: &t2, want: t2, wantFound: true},
		{name: "rolled after the refresh", rolled: &t2, refreshed: &t1, want: t2, wantFound: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := &appsv1.Deployment{}
			tmpl := &corev1.PodTemplateSpec{}
			if tt.rolled != nil {
				tmpl.Annotations = map[string]string{annotations.ConfigDigest: tt.rolled.encode()}
			}
			if tt.refreshed != nil {
				obj.Annotations = map[string]string{annotations.PodsConfigDigest: tt.refreshed.encode()}
			}
			got, found := podsStamp(state{view: &view{}, obj: obj, tmpl: tmpl})
			if found != tt.wantFound || got != tt.want {
				t.Fatalf("podsStamp = %+v, %v; want %+v, %v", got, found, tt.want, tt.wantFound)
			}
		})
	}
}

// TestEnvVars_RecoverySetsOnlyRipplesVariables: a rollout that recovers a
// lost record, or the change since a record copied with the workload, from
// the stamp alone names all the config the workload tracks, not what changed,
// so it sets no variable per object: it gives ripple's variables the new
// stamp, or, with none, sets no variable and so stamps the annotation. A
// rollout with its record sets one for each changed object, as ever.
func TestEnvVars_RecoverySetsOnlyRipplesVariables(t *testing.T) {
	old := stamp{keyID: "ab12cd34", at: 1700000000, digest: strings.Repeat("a", 64)}
	st := stamp{keyID: "ab12cd34", at: 1700000600, digest: strings.Repeat("b", 64)}
	var tracked []refs.Ref
	var envFrom []corev1.EnvFromSource
	for _, name := range []string{"a", "b", "c", "d", "e", "f"} {
		tracked = append(tracked, refs.Ref{Kind: refs.ConfigMap, Name: name})
		envFrom = append(envFrom, corev1.EnvFromSource{ConfigMapRef: &corev1.ConfigMapEnvSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: name}}})
	}
	template := func(env ...corev1.EnvVar) *corev1.PodTemplateSpec {
		return &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "app", EnvFrom: envFrom, Env: env},
			{Name: "side", Env: []corev1.EnvVar{{Name: "STAKATER_B_CONFIGMAP", Value: old.encode()}}},
		}}}
	}
	names := func(vars []workload.EnvVar) []string {
		var out []string
		for _, e := range vars {
			if e.Value != st.encode() {
				t.Errorf("%s set to %q, want the new stamp", e.Name, e.Value)
			}
			out = append(out, e.Container+"/"+e.Name)
		}
		slices.Sort(out)
		return out
	}
	many := make([]refs.Ref, maxChangedVars+1)
	for i := range many {
		many[i] = refs.Ref{Kind: refs.ConfigMap, Name: fmt.Sprintf("x%d", i)}
	}
	r := &Reconciler{}
	ours := corev1.EnvVar{Name: "STAKATER_A_CONFIGMAP", Value: old.encode()}
	reloaders := corev1.EnvVar{Name: "STAKATER_C_CONFIGMAP", Value: "da39a3ee5e6b4b0d3255bfef95601890afd80709"}
	tests := []struct {
		name    string
		view    view
		unknown bool
		tmpl    *corev1.PodTemplateSpec
		changed []refs.Ref
		want    []string
	}{
		{name: "record lost: ripple's variables alone", view: view{}, unknown: true,
			tmpl: template(ours, reloaders), changed: tracked,
			want: []string{"app/STAKATER_A_CONFIGMAP", "side/STAKATER_B_CONFIGMAP"}},
		{name: "record unreadable: ripple's variables alone", view: view{hasRecord: true, recordErr: errors.New("bad")}, unknown: true,
			tmpl: template(ours), changed: tracked,
			want: []string{"app/STAKATER_A_CONFIGMAP", "side/STAKATER_B_CONFIGMAP"}},
		{name: "record copied with the workload: ripple's variables alone", view: view{hasRecord: true}, unknown: true,
			tmpl: template(ours, reloaders), changed: tracked,
			want: []string{"app/STAKATER_A_CONFIGMAP", "side/STAKATER_B_CONFIGMAP"}},
		{name: "record lost, no variable of ripple's: none, the annotation stamps", view: view{}, unknown: true,
			tmpl:    &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", EnvFrom: envFrom, Env: []corev1.EnvVar{reloaders}}}}},
			changed: tracked, want: nil},
		{name: "with its record: one for each changed object, and ripple's", view: view{hasRecord: true},
			tmpl: template(ours, reloaders), changed: tracked[2:4],
			want: []string{"app/STAKATER_A_CONFIGMAP", "app/STAKATER_C_CONFIGMAP", "app/STAKATER_D_CONFIGMAP", "side/STAKATER_B_CONFIGMAP"}},
		{name: "with its record, more changed objects than a rollout gives a variable each: ripple's variables alone", view: view{hasRecord: true},
			tmpl: template(ours, reloaders), changed: many,
			want: []string{"app/STAKATER_A_CONFIGMAP", "side/STAKATER_B_CONFIGMAP"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.view.reloadStrategy = workload.StampEnvVars
			got := names(r.envVars(state{view: &tt.view, tmpl: tt.tmpl, unknownChanges: tt.unknown}, tt.changed, st))
			if !slices.Equal(got, tt.want) {
				t.Fatalf("envVars set %v; want %v", got, tt.want)
			}
		})
	}
}

// A stamp written before the workload's choice of key precision changed
// still names the config its pods run, whichever the choice was: one
// written back with an older record then rolls nothing.
func TestNamesCurrent_UnderEitherChoiceOfPrecision(t *testing.T) {
	keyed := digest.NewKeyed([]byte("0123456789abcdef0123456789abcdef"))
	ref := refs.Ref{Kind: refs.ConfigMap, Name: "cfg"}
	at := func(data map[string]string, precise bool) map[refs.Ref]tracked {
		v := versionSum{sum: digest.Object("ConfigMap", "ns/cfg", data, nil), keys: digest.KeySums("ConfigMap", "ns/cfg", data, nil)}
		return map[refs.Ref]tracked{ref: {version: v, used: []string{"k"}, precise: precise}}
	}
	now := map[string]string{"k": "2", "unused": "1"}
	tests := []struct {
		name        string
		stamped     map[refs.Ref]tracked
		current     map[refs.Ref]tracked
		namesTheNow bool
	}{
		{"the same choice and data", at(now, true), at(now, true), true},
		{"stamped precise, not precise now", at(now, true), at(now, false), true},
		{"stamped whole, precise now", at(now, false), at(now, true), true},
		{"a key the pods read changed since", at(map[string]string{"k": "1", "unused": "1"}, true), at(now, false), false},
		{"whole, a key the pods do not read changed since, precise now", at(map[string]string{"k": "2", "unused": "0"}, false), at(now, true), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := namesCurrent(keyed, tt.current, workloadDigest(keyed, tt.stamped)); got != tt.namesTheNow {
				t.Errorf("namesCurrent = %v, want %v", got, tt.namesTheNow)
			}
		})
	}
}

// compactedReader answers a List at an exact version as the API server does
// once etcd compacted that version away.
type compactedReader struct{ client.Reader }

func (compactedReader) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return apierrors.NewResourceExpired("too old resource version")
}

// TestChangedSinceCreation_ACompactedVersionFallsBackToManagedFields: when
// the version seen at an object's creation is gone from etcd, a data write
// its managed fields show after the creation still counts as a change.
func TestChangedSinceCreation_ACompactedVersionFallsBackToManagedFields(t *testing.T) {
	created, later := metav1.NewTime(time.Unix(100, 0)), metav1.NewTime(time.Unix(400, 0))
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "app", UID: "u", ResourceVersion: "7", CreationTimestamp: created}}
	d := newDigests(compactedReader{}, time.Now)
	d.born.add(cm, time.Now())
	now := cm.DeepCopy()
	now.ResourceVersion = "9"
	now.ManagedFields = []metav1.ManagedFieldsEntry{{Time: &later, FieldsV1: metav1.NewFieldsV1(`{"f:data":{"f:k":{}}}`)}}
	now.Data = map[string]string{"k": "2"}
	got, err := d.changedSinceCreation(context.Background(), refs.ConfigMap, &metav1.PartialObjectMetadata{ObjectMeta: now.ObjectMeta}, sumVersion(now))
	if err != nil || !got {
		t.Fatalf("changedSinceCreation = %v, %v; want true", got, err)
	}
}

// TestMarks_SinceTheLastChangeThatMadeTheWorkloadTrackTheObject: an object
// the workload tracks on its own side since a change of its annotations,
// or since it took --resource-label-selector's label, was left out of the
// record for that, and a data change since rolls; an annotation the
// workload's policy does not read begins nothing, also after one that did.
func TestMarks_SinceTheLastChangeThatMadeTheWorkloadTrackTheObject(t *testing.T) {
	t0 := time.Unix(1000, 0)
	meta := func(version string) client.Object {
		o := configObject("ConfigMap")
		o.Namespace, o.Name, o.UID, o.ResourceVersion = "ns", "cfg", "u", version
		return o
	}
	ignored := map[string]string{annotations.Ignore: "true"}
	matched := map[string]string{annotations.Match: "true"}
	auto := map[string]string{annotations.Auto: "true"}
	search := map[string]string{annotations.Search: "true"}
	later := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	tests := []struct {
		name      string
		workload  map[string]string
		saw       func(b *births)
		since     string
		untracked map[int64]bool
	}{
		{"never marked", auto, func(*births) {}, "", nil},
		{"its ignore annotation removed", auto, func(b *births) { b.marked(meta("6"), ignored, later(3)) }, "6",
			map[int64]bool{1000: true, 1003: false}},
		{"annotated match, under search", search, func(b *births) { b.marked(meta("6"), nil, later(3)) }, "6", nil},
		{"annotated match, under auto that tracked it already", auto, func(b *births) { b.marked(meta("6"), nil, later(3)) }, "", nil},
		{"ignore set to false", auto, func(b *births) { b.marked(meta("6"), map[string]string{annotations.Ignore: "false"}, later(3)) }, "", nil},
		{"ignore removed, then match annotated", auto, func(b *births) {
			b.marked(meta("6"), ignored, later(3))
			b.marked(meta("8"), nil, later(4))
		}, "6", map[int64]bool{1000: true, 1003: false}},
		{"ignore added, then removed", auto, func(b *births) {
			b.marked(meta("6"), nil, later(3))
			b.marked(meta("7"), ignored, later(4))
		}, "7", map[int64]bool{1000: false, 1003: true, 1004: false}},
		{"match removed and annotated again, under search", search, func(b *births) {
			b.marked(meta("6"), matched, later(3))
			b.marked(meta("7"), nil, later(4))
		}, "7", map[int64]bool{1000: false, 1003: true}},
		{"into view by a label", auto, func(b *births) { b.entered(meta("5"), t0) }, "5", nil},
		{"more marks than kept, the first kept", auto, func(b *births) {
			b.marked(meta("6"), ignored, later(1))
			for i := range marksKept {
				b.marked(meta(fmt.Sprint(7+i)), nil, later(2))
			}
		}, "6", map[int64]bool{1000: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := &options.Options{Keys: annotations.DefaultKeys(), ReloadStrategy: workload.StampAnnotations}
			r := &Reconciler{Opts: opts, digests: newDigests(nil, time.Now)}
			tt.saw(&r.digests.born)
			dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", Annotations: tt.workload}}
			dep.Spec.Template.Spec.Volumes = []corev1.Volume{{Name: "cfg", VolumeSource: corev1.VolumeSource{
				ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}}}
			deployments, _ := workload.ByPlural("deployments")
			v := newViews(deployments, opts).of(dep)
			cur := tracked{marks: r.marks(v, candidate{refs.Ref{Kind: refs.ConfigMap, Name: "cfg"}, meta("9")})}
			if since, _ := cur.since(0); since.version != tt.since {
				t.Errorf("since version %q, want %q", since.version, tt.since)
			}
			for at, want := range tt.untracked {
				if got := cur.untrackedAt(at); got != want {
					t.Errorf("untrackedAt(%d) = %v, want %v", at, got, want)
				}
			}
		})
	}
}

// TestMarks_OnlyThoseSinceTheRecordTellWhyAnObjectIsMissingFromIt: a data
// change counts from a mark since the record, not from one long before
// it; an object is left out of the record for its marks when it was not
// tracked from its creation, or not when the record was written; one
// created after the record and tracked from its creation is a creation,
// whatever marks follow.
func TestMarks_OnlyThoseSinceTheRecordTellWhyAnObjectIsMissingFromIt(t *testing.T) {
	const at = 100
	tests := []struct {
		name      string
		createdAt int64
		marks     []mark
		since     string
		leftOut   bool
	}{
		{"began long before the record", 10, []mark{{at: 50, version: "5", began: true}}, "", true},
		{"ignored long before the record, and back", 10, []mark{{at: 40, version: "4"}, {at: 50, version: "5", began: true}}, "", false},
		{"began after the record", 10, []mark{{at: 103, version: "7", began: true}}, "7", true},
		{"created after the record, ignored and back", 102, []mark{{at: 103, version: "6"}, {at: 104, version: "7", began: true}}, "7", false},
		{"ignored and back in the second of the record", 99, []mark{{at: 100, version: "6"}, {at: 100, version: "7", began: true}}, "7", true},
		{"ignored before the record, back after it", 10, []mark{{at: 99, version: "6"}, {at: 105, version: "7", began: true}}, "7", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cur := tracked{createdAt: tt.createdAt, marks: tt.marks}
			if since, _ := cur.since(at); since.version != tt.since {
				t.Errorf("since = %q, want %q", since.version, tt.since)
			}
			if got := cur.leftOut(at); got != tt.leftOut {
				t.Errorf("leftOut = %v, want %v", got, tt.leftOut)
			}
		})
	}
}

// TestChangedSinceTrackable_ALabelIsNoChange: an object that became
// trackable (its ignore annotation removed) and then only gained a label
// did not change.
func TestChangedSinceTrackable_ALabelIsNoChange(t *testing.T) {
	at7 := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "app", UID: "u", ResourceVersion: "7"}, Data: map[string]string{"k": "1"}}
	d := newDigests(exactReader{obj: at7}, time.Now)
	now := at7.DeepCopy()
	now.ResourceVersion, now.Labels = "8", map[string]string{"team": "a"}
	got, err := d.changedSinceTrackable(context.Background(), refs.ConfigMap, &metav1.PartialObjectMetadata{ObjectMeta: now.ObjectMeta}, sumVersion(now),
		mark{at: time.Now().Unix(), version: "7", began: true})
	if err != nil || got {
		t.Fatalf("changedSinceTrackable = %v, %v; want false", got, err)
	}
}

// goneReader answers every GET as the API server does for an object deleted
// since the cache last saw it.
type goneReader struct{ client.Reader }

func (goneReader) Get(_ context.Context, key client.ObjectKey, _ client.Object, _ ...client.GetOption) error {
	return apierrors.NewNotFound(corev1.Resource("secrets"), key.Name)
}

// TestDigests_AnObjectGoneFromTheAPIServerIsAbsent: a GET that finds the
// object deleted, still in the cache, means absent, not a failed reconcile.
func TestDigests_AnObjectGoneFromTheAPIServerIsAbsent(t *testing.T) {
	d := newDigests(goneReader{}, time.Now)
	meta := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "app", UID: "u", ResourceVersion: "7"}}
	if _, found, err := d.of(context.Background(), refs.Secret, meta); err != nil || found {
		t.Fatalf("of = found %v, %v; want absent", found, err)
	}
}
