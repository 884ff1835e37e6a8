package digest

import (
	"bytes"
	"encoding/binary"
	"maps"
	"testing"
)

// build makes an object from fuzz inputs. mask picks which of the two data
// and two binaryData entries exist (bits 0-3) and whether an empty map is
// nil or allocated (bit 4); a repeated key keeps the second value.
func build(kind, name, dk1, dv1, dk2, dv2, bk1 string, bv1 []byte, bk2 string, bv2 []byte, mask uint8) object {
	o := object{kind: kind, name: name}
	if mask&0x10 != 0 {
		o.data, o.binaryData = map[string]string{}, map[string][]byte{}
	}
	put := func(k, v string) {
		if o.data == nil {
			o.data = map[string]string{}
		}
		o.data[k] = v
	}
	putB := func(k string, v []byte) {
		if o.binaryData == nil {
			o.binaryData = map[string][]byte{}
		}
		o.binaryData[k] = v
	}
	if mask&1 != 0 {
		put(dk1, dv1)
	}
	if mask&2 != 0 {
		put(dk2, dv2)
	}
	if mask&4 != 0 {
		putB(bk1, bv1)
	}
	if mask&8 != 0 {
		putB(bk2, bv2)
	}
	return o
}

// same compares objects as the API server would: a nil map is an empty one,
// a nil value an empty one.
func same(a, b object) bool {
	return a.kind == b.kind && a.name == b.name &&
		maps.Equal(a.data, b.data) &&
		maps.EqualFunc(a.binaryData, b.binaryData, bytes.Equal)
}

// decode is an independent reader of Encode's format. That it recovers every
// input proves the encoding injective, not just for the pairs tried.
func decode(t *testing.T, b []byte) object {
	t.Helper()
	readUint := func() uint64 {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			t.Fatalf("bad varint at %x", b)
		}
		b = b[n:]
		return v
	}
	str := func() []byte {
		n := readUint()
		if n > uint64(len(b)) {
			t.Fatalf("length %d overruns %d remaining bytes", n, len(b))
		}
		s := b[:n]
		b = b[n:]
		return s
	}
	var o object
	o.kind, o.name = string(str()), string(str())
	prev := ""
	for i, n := 0, readUint(); i < int(n); i++ {
		k, v := string(str()), string(str())
		if i > 0 && k <= prev {
			t.Fatalf("data keys not strictly sorted: %q after %q", k, prev)
		}
		prev = k
		if o.data == nil {
			o.data = map[string]string{}
		}
		o.data[k] = v
	}
	for i, n := 0, readUint(); i < int(n); i++ {
		k, v := string(str()), str()
		if i > 0 && k <= prev {
			t.Fatalf("binaryData keys not strictly sorted: %q after %q", k, prev)
		}
		prev = k
		if o.binaryData == nil {
			o.binaryData = map[string][]byte{}
		}
		o.binaryData[k] = v
	}
	if len(b) != 0 {
		t.Fatalf("%d trailing bytes", len(b))
	}
	return o
}

func FuzzEncodeUnambiguous(f *testing.F) {
	bv := []byte("v")
	// data vs binaryData with the same content.
	f.Add("ConfigMap", "c", "k", "v", "", "", "", []byte(nil), "", []byte(nil), uint8(1),
		"ConfigMap", "c", "", "", "", "", "k", bv, "", []byte(nil), uint8(4))
	// key/value boundary shift.
	f.Add("ConfigMap", "c", "ab", "c", "", "", "", []byte(nil), "", []byte(nil), uint8(1),
		"ConfigMap", "c", "a", "bc", "", "", "", []byte(nil), "", []byte(nil), uint8(1))
	// kind/name boundary shift.
	f.Add("ConfigMap", "x", "", "", "", "", "", []byte(nil), "", []byte(nil), uint8(0),
		"ConfigMa", "px", "", "", "", "", "", []byte(nil), "", []byte(nil), uint8(0))
	// nil vs empty maps: equal.
	f.Add("Secret", "s", "", "", "", "", "", []byte(nil), "", []byte(nil), uint8(0),
		"Secret", "s", "", "", "", "", "", []byte(nil), "", []byte(nil), uint8(0x10))
	// the same entries in another order: equal.
	f.Add("ConfigMap", "c", "a", "1", "b", "2", "x", bv, "y", []byte{}, uint8(15),
		"ConfigMap", "c", "b", "2", "a", "1", "y", []byte(nil), "x", bv, uint8(15))
	// a repeated key.
	f.Add("ConfigMap", "c", "k", "1", "k", "2", "", []byte(nil), "", []byte(nil), uint8(3),
		"ConfigMap", "c", "k", "2", "", "", "", []byte(nil), "", []byte(nil), uint8(1))

	f.Fuzz(func(t *testing.T,
		kindA, nameA, dk1A, dv1A, dk2A, dv2A, bk1A string, bv1A []byte, bk2A string, bv2A []byte, maskA uint8,
		kindB, nameB, dk1B, dv1B, dk2B, dv2B, bk1B string, bv1B []byte, bk2B string, bv2B []byte, maskB uint8,
	) {
		a := build(kindA, nameA, dk1A, dv1A, dk2A, dv2A, bk1A, bv1A, bk2A, bv2A, maskA)
		b := build(kindB, nameB, dk1B, dv1B, dk2B, dv2B, bk1B, bv1B, bk2B, bv2B, maskB)
		encA, encB := a.encode(), b.encode()

		if equal := bytes.Equal(encA, encB); equal != same(a, b) {
			t.Fatalf("encodings equal: %v, inputs equal: %v\na=%+v\nb=%+v", equal, same(a, b), a, b)
		}
		if (a.sum() == b.sum()) != bytes.Equal(encA, encB) {
			t.Fatalf("Object sums equal: %v, encodings equal: %v", a.sum() == b.sum(), bytes.Equal(encA, encB))
		}
		if got := decode(t, encA); !same(got, a) {
			t.Fatalf("decoding the encoding gave %+v, want %+v", got, a)
		}
	})
}
