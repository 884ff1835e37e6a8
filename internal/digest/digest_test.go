package digest

import (
	"bytes"
	"crypto/sha256"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ripple-controller/ripple/internal/refs"
)

type object struct {
	kind, name string
	data       map[string]string
	binaryData map[string][]byte
}

func (o object) sum() Sum { return Object(o.kind, o.name, o.data, o.binaryData) }

func (o object) encode() []byte {
	var b bytes.Buffer
	Encode(&b, o.kind, o.name, o.data, o.binaryData)
	return b.Bytes()
}

func TestObject_DistinctInputsGiveDistinctSums(t *testing.T) {
	cases := []struct {
		name string
		a, b object
	}{
		{"data vs binaryData with the same content",
			object{"ConfigMap", "c", map[string]string{"k": "v"}, nil},
			object{"ConfigMap", "c", nil, map[string][]byte{"k": []byte("v")}}},
		{"key/value boundary shift",
			object{"ConfigMap", "c", map[string]string{"ab": "c"}, nil},
			object{"ConfigMap", "c", map[string]string{"a": "bc"}, nil}},
		{"binary key/value boundary shift",
			object{"Secret", "s", nil, map[string][]byte{"ab": []byte("c")}},
			object{"Secret", "s", nil, map[string][]byte{"a": []byte("bc")}}},
		{"entry boundary shift",
			object{"ConfigMap", "c", map[string]string{"a": "b", "c": "d"}, nil},
			object{"ConfigMap", "c", map[string]string{"a": "bc", "": "d"}, nil}},
		{"kind/name boundary shift",
			object{"ConfigMap", "x", nil, nil},
			object{"ConfigMa", "px", nil, nil}},
		{"name/data boundary shift",
			object{"ConfigMap", "a", map[string]string{"": ""}, nil},
			object{"ConfigMap", "a\x01\x00\x00", nil, nil}},
		{"kind differs", object{"ConfigMap", "x", nil, nil}, object{"Secret", "x", nil, nil}},
		{"name differs", object{"ConfigMap", "x", nil, nil}, object{"ConfigMap", "y", nil, nil}},
		{"value differs",
			object{"ConfigMap", "c", map[string]string{"k": "v1"}, nil},
			object{"ConfigMap", "c", map[string]string{"k": "v2"}, nil}},
		{"key renamed",
			object{"ConfigMap", "c", map[string]string{"k1": "v"}, nil},
			object{"ConfigMap", "c", map[string]string{"k2": "v"}, nil}},
		{"empty value vs no entry",
			object{"ConfigMap", "c", map[string]string{"k": ""}, nil},
			object{"ConfigMap", "c", map[string]string{}, nil}},
		{"entry moved between data and binaryData",
			object{"ConfigMap", "c", map[string]string{"a": "1"}, map[string][]byte{"b": []byte("2")}},
			object{"ConfigMap", "c", map[string]string{"b": "2"}, map[string][]byte{"a": []byte("1")}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if bytes.Equal(c.a.encode(), c.b.encode()) {
				t.Errorf("encodings are equal: %x", c.a.encode())
			}
			if c.a.sum() == c.b.sum() {
				t.Errorf("sums are equal: %s", c.a.sum())
			}
		})
	}
}

func TestObject_EqualInputsGiveEqualSums(t *testing.T) {
	cases := []struct {
		name string
		a, b object
	}{
		{"nil vs empty maps",
			object{"ConfigMap", "c", nil, nil},
			object{"ConfigMap", "c", map[string]string{}, map[string][]byte{}}},
		{"nil vs empty binary value",
			object{"Secret", "s", nil, map[string][]byte{"k": nil}},
			object{"Secret", "s", nil, map[string][]byte{"k": {}}}},
		{"map order does not matter",
			object{"ConfigMap", "c", map[string]string{"a": "1", "b": "2", "c": "3"}, nil},
			object{"ConfigMap", "c", map[string]string{"c": "3", "a": "1", "b": "2"}, nil}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.a.sum() != c.b.sum() {
				t.Errorf("sums differ: %s vs %s", c.a.sum(), c.b.sum())
			}
		})
	}
}

// The encoding is what every recorded digest was computed from: changing it
// rolls every tracked workload once after an upgrade.
func TestEncode_FormatIsStable(t *testing.T) {
	got := object{"K", "n", map[string]string{"b": "2", "a": "1"}, map[string][]byte{"z": {0xff}}}.encode()
	want := []byte{
		1, 'K', 1, 'n',
		2, 1, 'a', 1, '1', 1, 'b', 1, '2',
		1, 1, 'z', 1, 0xff,
	}
	if !bytes.Equal(got, want) {
		t.Errorf("Encode = %v, want %v", got, want)
	}
	if s := (object{"K", "n", map[string]string{"b": "2", "a": "1"}, map[string][]byte{"z": {0xff}}}).sum(); s != Sum(sha256.Sum256(want)) {
		t.Errorf("Object is not the SHA-256 of Encode")
	}
	long := strings.Repeat("x", 200)
	got = object{"K", long, nil, nil}.encode()
	if !bytes.HasPrefix(got, []byte{1, 'K', 200, 1}) || len(got) != 2+2+200+2 {
		t.Errorf("a 200-byte name is not varint-prefixed: %v", got[:6])
	}
}

func TestConfigMapAndSecretHelpers(t *testing.T) {
	cmObj := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "ns", Labels: map[string]string{"l": "1"}},
		Data:       map[string]string{"k": "v"},
		BinaryData: map[string][]byte{"b": {1, 2}},
	}
	if got, want := ConfigMap(cmObj), Object("ConfigMap", Qualified(cmObj.Namespace, "app"), cmObj.Data, cmObj.BinaryData); got != want {
		t.Errorf("ConfigMap() = %s, want %s", got, want)
	}
	relabelled := cmObj.DeepCopy()
	relabelled.Labels = map[string]string{"l": "2"}
	relabelled.Annotations = map[string]string{"a": "b"}
	if ConfigMap(relabelled) != ConfigMap(cmObj) {
		t.Errorf("a labels-only edit changed the ConfigMap digest")
	}
	edited := cmObj.DeepCopy()
	edited.BinaryData["b"] = []byte{1, 3}
	if ConfigMap(edited) == ConfigMap(cmObj) {
		t.Errorf("a binaryData edit did not change the ConfigMap digest")
	}

	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "ns"},
		Data:       map[string][]byte{"k": []byte("v")},
		Type:       corev1.SecretTypeOpaque,
	}
	if got, want := Secret(sec), Object("Secret", Qualified(sec.Namespace, "app"), nil, sec.Data); got != want {
		t.Errorf("Secret() = %s, want %s", got, want)
	}
	asCM := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app"}, BinaryData: map[string][]byte{"k": []byte("v")}}
	if Secret(sec) == ConfigMap(asCM) {
		t.Errorf("a Secret and a ConfigMap with the same name and data share a digest")
	}
	edited2 := sec.DeepCopy()
	edited2.Data["k"] = []byte("w")
	if Secret(edited2) == Secret(sec) {
		t.Errorf("a data edit did not change the Secret digest")
	}
}

func TestKeyed(t *testing.T) {
	sumA := Object("ConfigMap", "a", map[string]string{"k": "1"}, nil)
	sumB := Object("ConfigMap", "a", map[string]string{"k": "2"}, nil)
	entries := []Entry{{refs.Ref{Kind: "ConfigMap", Name: "a"}, sumA}, {refs.Ref{Kind: "Secret", Name: "b"}, sumB}}

	k1, k1again, k2, empty := NewKeyed([]byte("key-1")), NewKeyed([]byte("key-1")), NewKeyed([]byte("key-2")), NewKeyed(nil)

	if k1.Workload(entries) != k1again.Workload(entries) || k1.Short(sumA) != k1again.Short(sumA) || k1.KeyID() != k1again.KeyID() {
		t.Errorf("the same key and inputs gave different outputs")
	}
	for _, other := range []Keyed{k2, empty} {
		if k1.Workload(entries) == other.Workload(entries) {
			t.Errorf("different keys gave the same Workload digest")
		}
		if k1.Short(sumA) == other.Short(sumA) {
			t.Errorf("different keys gave the same Short digest")
		}
		if k1.KeyID() == other.KeyID() {
			t.Errorf("different keys gave the same KeyID")
		}
	}
	if k1.Short(sumA) == k1.Short(sumB) {
		t.Errorf("different sums gave the same Short digest")
	}

	if k1.Workload([]Entry{entries[1], entries[0]}) != k1.Workload(entries) {
		t.Errorf("the order of the entries changed the Workload digest")
	}
	if got := len(k1.Workload(entries)); got != 64 {
		t.Errorf("Workload digest has %d hex characters, want 64", got)
	}
	if got := len(k1.Short(sumA)); got != 16 {
		t.Errorf("Short digest has %d hex characters, want 16", got)
	}
	if got := len(k1.KeyID()); got != 8 {
		t.Errorf("KeyID has %d hex characters, want 8", got)
	}
	if strings.Contains(k1.KeyID(), "key-1") || strings.Contains(k1.Workload(entries), sumA.String()) {
		t.Errorf("an output reveals its input")
	}

	workloads := map[string]string{}
	for name, e := range map[string][]Entry{
		"both":            entries,
		"none":            nil,
		"first only":      entries[:1],
		"changed sum":     {{refs.Ref{Kind: "ConfigMap", Name: "a"}, sumB}, {refs.Ref{Kind: "Secret", Name: "b"}, sumB}},
		"renamed":         {{refs.Ref{Kind: "ConfigMap", Name: "a2"}, sumA}, {refs.Ref{Kind: "Secret", Name: "b"}, sumB}},
		"kind changed":    {{refs.Ref{Kind: "Secret", Name: "a"}, sumA}, {refs.Ref{Kind: "Secret", Name: "b"}, sumB}},
		"name/kind shift": {{refs.Ref{Kind: "ConfigMa", Name: "pa"}, sumA}, {refs.Ref{Kind: "Secret", Name: "b"}, sumB}},
	} {
		d := k1.Workload(e)
		if prev, dup := workloads[d]; dup {
			t.Errorf("%q and %q give the same Workload digest", prev, name)
		}
		workloads[d] = name
	}
}

func TestNewKeyed_CopiesTheKey(t *testing.T) {
	key := []byte("secret-key")
	k := NewKeyed(key)
	before := k.KeyID()
	key[0] = 'X'
	if k.KeyID() != before {
		t.Errorf("changing the caller's slice changed the Keyed")
	}
}

func TestEqualObjectsInTwoNamespacesGiveUnrelatedDigests(t *testing.T) {
	data := map[string][]byte{"password": []byte("hunter2")}
	a := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "db"}, Data: data}
	b := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "db"}, Data: data}
	k := NewKeyed([]byte("0123456789abcdef"))
	if Secret(a) == Secret(b) || k.Short(Secret(a)) == k.Short(Secret(b)) {
		t.Fatal("equal Secrets in two namespaces share a digest: a reader of one namespace could test guesses of the other's")
	}
	cmA := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "c"}, Data: map[string]string{"k": "v"}}
	cmB := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "c"}, Data: map[string]string{"k": "v"}}
	if ConfigMap(cmA) == ConfigMap(cmB) {
		t.Fatal("equal ConfigMaps in two namespaces share a digest")
	}
}

func TestKeyed_LookupFindsTheKeyThatMadeARecord(t *testing.T) {
	cur, old, older, other := []byte("current-key"), []byte("old-key"), []byte("older-key"), []byte("other-key")
	sum := Object("Secret", "db", map[string]string{"password": "hunter2"}, nil)
	cases := []struct {
		name     string
		keyed    Keyed
		recorded []byte // the key a record was made with
		found    bool
	}{
		{"the current key", NewKeyed(cur, old), cur, true},
		{"the current key, no previous keys", NewKeyed(cur), cur, true},
		{"the previous key", NewKeyed(cur, old), old, true},
		{"the oldest of several previous keys", NewKeyed(cur, old, older), older, true},
		{"a key the Secret no longer holds", NewKeyed(cur, old), other, false},
		{"a previous key after the Secret dropped it", NewKeyed(cur), old, false},
		{"the empty key of an unkeyed ripple", NewKeyed(cur, old), nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			made := NewKeyed(c.recorded)
			got, ok := c.keyed.Lookup(made.KeyID())
			if ok != c.found {
				t.Fatalf("Lookup(%s) found = %v, want %v", made.KeyID(), ok, c.found)
			}
			if !ok {
				return
			}
			if got.KeyID() != made.KeyID() || got.Short(sum) != made.Short(sum) {
				t.Errorf("Lookup returned a Keyed that does not digest as the recorded key does")
			}
			if _, ok := got.Lookup(NewKeyed(other).KeyID()); ok {
				t.Errorf("the Keyed Lookup returned holds more than one key")
			}
		})
	}
}

func TestKeyed_PreviousKeysDoNotChangeWhatIsWritten(t *testing.T) {
	sum := Object("ConfigMap", "a", map[string]string{"k": "1"}, nil)
	entries := []Entry{{refs.Ref{Kind: "ConfigMap", Name: "a"}, sum}}
	plain := NewKeyed([]byte("current-key"))
	cases := []struct {
		name  string
		keyed Keyed
	}{
		{"one previous key", NewKeyed([]byte("current-key"), []byte("old-key"))},
		{"two previous keys", NewKeyed([]byte("current-key"), []byte("old-key"), []byte("older-key"))},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.keyed.KeyID() != plain.KeyID() || c.keyed.Short(sum) != plain.Short(sum) || c.keyed.Workload(entries) != plain.Workload(entries) {
				t.Errorf("KeyID, Short or Workload depend on the previous keys; they must use the current key only")
			}
		})
	}
}

func TestNewKeyed_CopiesThePreviousKeys(t *testing.T) {
	old := []byte("old-key")
	k := NewKeyed([]byte("current-key"), old)
	id := NewKeyed([]byte("old-key")).KeyID()
	old[0] = 'X'
	if _, ok := k.Lookup(id); !ok {
		t.Errorf("changing the caller's slice changed the previous key")
	}
}
