package controller

import (
	"bytes"
	"maps"
	"strings"
	"testing"

	"github.com/ripple-controller/ripple/internal/digest"
	"github.com/ripple-controller/ripple/internal/refs"
)

func cmRef(name string) refs.Ref     { return refs.Ref{Kind: refs.ConfigMap, Name: name} }
func secretRef(name string) refs.Ref { return refs.Ref{Kind: refs.Secret, Name: name} }

func TestRecord_EncodeIsSortedAndStable(t *testing.T) {
	r := record{keyID: "k1", at: 1700000000, objects: map[refs.Ref]string{
		secretRef("db"):  "33",
		cmRef("web"):     "22",
		cmRef("app"):     "11",
		secretRef("api"): "44",
	}}
	want := "key=k1;at=1700000000;ConfigMap/app=11;ConfigMap/web=22;Secret/api=44;Secret/db=33"
	if got := r.encode(); got != want {
		t.Errorf("encode = %q\nwant     %q", got, want)
	}
	if got := (record{keyID: "k1", at: 5}).encode(); got != "key=k1;at=5" {
		t.Errorf("encode of an empty record = %q", got)
	}
}

func TestRecord_RoundTrip(t *testing.T) {
	cases := []record{
		{keyID: "abcd1234", at: 1, objects: map[refs.Ref]string{}},
		{keyID: "abcd1234", at: 1700000000, objects: map[refs.Ref]string{cmRef("a"): "0011223344556677"}},
		{keyID: "k", at: -5, objects: map[refs.Ref]string{
			cmRef("a.b-c"): "x", secretRef("a.b-c"): "y", secretRef("z"): "",
		}},
		// A SecretProviderClass, tracked with --enable-csi-integration.
		{keyID: "k", at: 1, objects: map[refs.Ref]string{{Kind: refs.SecretProviderClass, Name: "vault"}: "x", cmRef("a"): "y"}},
		// A value may itself contain '=': only the first one splits.
		{keyID: "k", at: 1, objects: map[refs.Ref]string{cmRef("a"): "b=c"}},
		// The wave of the paced rollout that wrote it.
		{keyID: "k", at: 1, wave: "ns/ConfigMap/cfg@42", objects: map[refs.Ref]string{cmRef("cfg"): "x"}},
	}
	for _, want := range cases {
		s := want.encode()
		got, err := decodeRecord(s)
		if err != nil {
			t.Errorf("decodeRecord(%q): %v", s, err)
			continue
		}
		if got.keyID != want.keyID || got.at != want.at || got.wave != want.wave || !maps.Equal(got.objects, want.objects) {
			t.Errorf("decodeRecord(%q) = %+v, want %+v", s, got, want)
		}
		if got.encode() != s {
			t.Errorf("re-encoding gave %q, want %q", got.encode(), s)
		}
	}
}

func TestDecodeRecord_RejectsGarbage(t *testing.T) {
	cases := []struct {
		name, in, errPart string
	}{
		{"empty", "", "no '='"},
		{"no equals", "x", "no '='"},
		{"missing key", "at=5;ConfigMap/a=1", "out of place"},
		{"empty key", "key=;at=5", "no key entry"},
		{"key only once", "key=a;key=b", "out of place"},
		{"at not a number", "key=k;at=yesterday", "yesterday"},
		{"at empty", "key=k;at=", "at="},
		{"at overflows", "key=k;at=99999999999999999999", "out of range"},
		{"at out of place", "key=k;ConfigMap/a=1;at=5", "out of place"},
		{"at missing", "key=k;ConfigMap/a=1", "out of place"},
		{"bad kind", "key=k;at=5;Deployment/a=1", "does not name"},
		{"kind is case-sensitive", "key=k;at=5;configmap/a=1", "does not name"},
		{"no slash", "key=k;at=5;ConfigMap=1", "does not name"},
		{"empty name", "key=k;at=5;Secret/=1", "does not name"},
		{"name with a slash, another API path", "key=k;at=5;ConfigMap/cfg/..=1", "does not name"},
		{"name of dots", "key=k;at=5;Secret/..=1", "does not name"},
		{"name longer than an object's", "key=k;at=5;Secret/" + strings.Repeat("a", 254) + "=1", "does not name"},
		{"key id longer than any ripple writes", "key=" + strings.Repeat("k", maxKeyID+1) + ";at=5", "key id"},
		{"entry without equals", "key=k;at=5;Secret/a", "no '='"},
		{"trailing separator", "key=k;at=5;", "no '='"},
		{"longer than ripple writes, valid or not", "key=k;at=5" + strings.Repeat(";ConfigMap/a=1", maxRecord/10), "longer than"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := decodeRecord(c.in)
			if err == nil {
				t.Fatalf("decodeRecord(%q) = %+v, want an error", c.in, r)
			}
			if !strings.Contains(err.Error(), c.errPart) {
				t.Errorf("error %q does not contain %q", err, c.errPart)
			}
			if r.keyID != "" || r.objects != nil {
				t.Errorf("a failed decode returned a partial record %+v", r)
			}
		})
	}
}

func TestDiff(t *testing.T) {
	const at = 1000
	rec := record{keyID: "k", at: at, objects: map[refs.Ref]string{
		cmRef("same"):        "s1",
		cmRef("edited"):      "e1",
		secretRef("deleted"): "d1",
		cmRef("untracked"):   "u1",
	}}
	now := map[refs.Ref]tracked{
		cmRef("same"):                obs("s1", 10),
		cmRef("edited"):              obs("e2", 10),
		secretRef("new"):             obs("n1", at+1),
		secretRef("new-same-second"): obs("n2", at),
		cmRef("old-newly-tracked"):   obs("o1", at-2),
	}
	missing := map[refs.Ref]change{secretRef("deleted"): deleted, cmRef("untracked"): untracked}

	got := diff(rec, now, testShort, missing)
	want := map[refs.Ref]change{
		cmRef("edited"):              changedData,
		secretRef("deleted"):         deleted,
		cmRef("untracked"):           untracked,
		secretRef("new"):             created,
		secretRef("new-same-second"): created,
		cmRef("old-newly-tracked"):   newlyTracked,
	}
	if !maps.Equal(got, want) {
		t.Errorf("diff = %v\nwant   %v", got, want)
	}
}

func TestDiff_Cases(t *testing.T) {
	gone := map[refs.Ref]change{cmRef("a"): deleted}
	left := map[refs.Ref]change{cmRef("a"): untracked}
	var lagging map[refs.Ref]change
	rec := func(objs map[refs.Ref]string) record { return record{keyID: "k", at: 100, objects: objs} }
	cases := []struct {
		name    string
		rec     record
		now     map[refs.Ref]tracked
		missing map[refs.Ref]change
		want    map[refs.Ref]change
	}{
		{"nothing recorded, nothing tracked", rec(nil), nil, nil, map[refs.Ref]change{}},
		{"no change", rec(map[refs.Ref]string{cmRef("a"): "1", secretRef("a"): "2"}),
			map[refs.Ref]tracked{cmRef("a"): obs("1", 0), secretRef("a"): obs("2", 500)}, nil, map[refs.Ref]change{}},
		{"data changed", rec(map[refs.Ref]string{cmRef("a"): "1"}),
			map[refs.Ref]tracked{cmRef("a"): obs("2", 0)}, nil, map[refs.Ref]change{cmRef("a"): changedData}},
		{"gone from the API server and still used is deleted", rec(map[refs.Ref]string{cmRef("a"): "1"}),
			nil, gone, map[refs.Ref]change{cmRef("a"): deleted}},
		{"no longer used, or out of view, is untracked", rec(map[refs.Ref]string{cmRef("a"): "1"}),
			nil, left, map[refs.Ref]change{cmRef("a"): untracked}},
		{"not yet in the cache after a recreate is no change", rec(map[refs.Ref]string{cmRef("a"): "1"}),
			nil, lagging, map[refs.Ref]change{}},
		{"same name, other kind is a different object", rec(map[refs.Ref]string{cmRef("a"): "1"}),
			map[refs.Ref]tracked{secretRef("a"): obs("1", 100)}, gone,
			map[refs.Ref]change{cmRef("a"): deleted, secretRef("a"): created}},
		{"created after the record", rec(nil),
			map[refs.Ref]tracked{cmRef("a"): obs("1", 101)}, nil, map[refs.Ref]change{cmRef("a"): created}},
		{"created in the second of the record", rec(nil),
			map[refs.Ref]tracked{cmRef("a"): obs("1", 100)}, nil, map[refs.Ref]change{cmRef("a"): created}},
		{"created in the second before the record, when the cache may not have had it", rec(nil),
			map[refs.Ref]tracked{cmRef("a"): obs("1", 99)}, nil, map[refs.Ref]change{cmRef("a"): created}},
		{"older object newly tracked", rec(nil),
			map[refs.Ref]tracked{cmRef("a"): obs("1", 98)}, nil, map[refs.Ref]change{cmRef("a"): newlyTracked}},
		{"older object whose creation ripple saw after the record, its watch lagging", rec(nil),
			map[refs.Ref]tracked{cmRef("a"): seen(obs("1", 90), 102)}, nil, map[refs.Ref]change{cmRef("a"): created}},
		{"older object whose creation ripple saw in the seconds of the record", rec(nil),
			map[refs.Ref]tracked{cmRef("a"): seen(obs("1", 90), 101)}, nil, map[refs.Ref]change{cmRef("a"): newlyTracked}},
		// It was left out of the record for its annotation, not for ripple's
		// cache: a change made while it was ignored must not roll.
		{"created in the second of the record, whose ignore annotation ripple saw change since, is newly tracked", rec(nil),
			map[refs.Ref]tracked{cmRef("a"): marked(obs("1", 100), 103)}, nil, map[refs.Ref]change{cmRef("a"): newlyTracked}},
		{"created after the record and tracked, then ignored and back, is created", rec(nil),
			map[refs.Ref]tracked{cmRef("a"): func() tracked {
				t := seen(obs("1", 105), 105)
				t.marks = []mark{{at: 106}, {at: 107, began: true}}
				return t
			}()}, nil, map[refs.Ref]change{cmRef("a"): created}},
		{"created after the record, whose ignore annotation ripple saw change since, is newly tracked", rec(nil),
			map[refs.Ref]tracked{cmRef("a"): marked(seen(obs("1", 105), 105), 107)}, nil, map[refs.Ref]change{cmRef("a"): newlyTracked}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := diff(c.rec, c.now, testShort, c.missing); !maps.Equal(got, c.want) {
				t.Errorf("diff = %v, want %v", got, c.want)
			}
		})
	}
}

// obs is a tracked object whose digest testShort reads back as short.
func obs(short string, createdAt int64) tracked {
	var sum digest.Sum
	copy(sum[:], short)
	return tracked{createdAt: createdAt, version: versionSum{sum: sum}}
}

// seen is t, whose creation ripple saw at the API server second at.
func seen(t tracked, at int64) tracked {
	t.seenCreated = at
	return t
}

// marked is t, which the workload began to track on its own side (its
// ignore annotation removed, say) at the API server second at.
func marked(t tracked, at int64) tracked {
	t.marks = append(t.marks, mark{at: at, began: true})
	return t
}

func testShort(sum digest.Sum) string { return string(bytes.TrimRight(sum[:], "\x00")) }

// A record is an annotation of up to 256 KiB; the error about it is logged,
// so it quotes only a short piece of the entry.
func TestDecodeRecord_ErrorQuotesAtMostAShortPieceOfAHugeEntry(t *testing.T) {
	huge := strings.Repeat("y", recordBudget)
	cases := map[string]string{
		"no equals":           "key=k;at=5;" + huge,
		"at not a number":     "key=k;at=" + huge,
		"at overflows":        "key=k;at=" + strings.Repeat("9", recordBudget),
		"does not name":       "key=k;at=5;Deployment/" + huge + "=1",
		"out of place":        huge + "=1",
		"out of place second": "key=k;" + huge + "=1",
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := decodeRecord(in)
			if err == nil {
				t.Fatal("decodeRecord accepted garbage")
			}
			if n := len(err.Error()); n > 2*maxQuotedEntry+100 {
				t.Errorf("the error is %d bytes, want at most %d: %.200s", n, 2*maxQuotedEntry+100, err)
			}
		})
	}
}
