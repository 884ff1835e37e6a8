package digest

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"slices"

	"github.com/ripple-controller/ripple/internal/refs"
)

// Entry is one tracked object and the sum of its data.
type Entry struct {
	refs.Ref
	Sum Sum
}

// Keyed computes the digests that ripple writes to the API server with its
// current key. It also holds the keys it replaced, so that what was recorded
// under one of them can still be compared after a rotation instead of being
// recorded again blindly.
type Keyed struct {
	key      []byte
	previous [][]byte
}

// NewKeyed returns a Keyed that uses key for every HMAC and recognises the
// digests made with any of the previous keys through Lookup.
func NewKeyed(key []byte, previous ...[]byte) Keyed {
	k := Keyed{key: bytes.Clone(key)}
	for _, p := range previous {
		k.previous = append(k.previous, bytes.Clone(p))
	}
	return k
}

// Lookup returns the Keyed, with that one key and no previous ones, whose
// KeyID is keyID: the current key's or a previous key's.
func (k Keyed) Lookup(keyID string) (Keyed, bool) {
	for _, key := range append([][]byte{k.key}, k.previous...) {
		if one := (Keyed{key: key}); one.KeyID() == keyID {
			return one, true
		}
	}
	return Keyed{}, false
}

// Workload returns the digest written on a pod template: an HMAC over the
// encoded entries, in the order of refs.Compare whatever their order here.
func (k Keyed) Workload(entries []Entry) string {
	sorted := slices.SortedFunc(slices.Values(entries), func(a, b Entry) int { return refs.Compare(a.Ref, b.Ref) })
	m := hmac.New(sha256.New, k.key)
	e := encoder{w: m}
	e.uint(uint64(len(sorted)))
	for _, en := range sorted {
		e.string(string(en.Kind))
		e.string(en.Name)
		e.bytes(en.Sum[:])
	}
	return hex.EncodeToString(m.Sum(nil))
}

// shortLen is long enough (64 bits) that two versions of one object never
// collide in practice, and short enough to keep the recorded state small.
const shortLen = 8

// Short returns the per-object digest kept in the recorded state.
func (k Keyed) Short(sum Sum) string {
	m := hmac.New(sha256.New, k.key)
	m.Write([]byte("object"))
	m.Write(sum[:])
	return hex.EncodeToString(m.Sum(nil)[:shortLen])
}

// KeyID identifies the key without revealing it, so that a changed or lost
// key is noticed and digests are re-recorded instead of every workload rolled.
// The "/2" marks digests that bind the namespace: records written before
// that read as of another key, so they are recorded again, not compared.
func (k Keyed) KeyID() string {
	m := hmac.New(sha256.New, k.key)
	m.Write([]byte("key-id/2"))
	return hex.EncodeToString(m.Sum(nil)[:4])
}
