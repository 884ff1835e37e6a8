package digest

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"slices"
	"sync"

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
//
// Every reconcile asks for the key's ID and a few HMACs, so the ID is
// computed once and the HMAC states are reused: in a profile of 10,000
// rollouts (the bench's fan-out), building them anew was a twentieth of
// all ripple allocated. Make one with NewKeyed: the zero Keyed has no ID.
type Keyed struct {
	key []byte
	id  string
	// macs holds HMAC states keyed with key, to Reset before use.
	macs     *sync.Pool
	previous []Keyed
}

// NewKeyed returns a Keyed that uses key for every HMAC and recognises the
// digests made with any of the previous keys through Lookup.
func NewKeyed(key []byte, previous ...[]byte) Keyed {
	k := one(key)
	for _, p := range previous {
		k.previous = append(k.previous, one(p))
	}
	return k
}

func one(key []byte) Keyed {
	key = bytes.Clone(key)
	k := Keyed{key: key, macs: &sync.Pool{New: func() any { return hmac.New(sha256.New, key) }}}
	m := k.mac()
	defer k.done(m)
	m.Write([]byte("key-id/2"))
	k.id = hex.EncodeToString(m.Sum(nil)[:4])
	return k
}

// mac returns an HMAC state keyed with k's key, to hand back to done.
func (k Keyed) mac() hash.Hash {
	if k.macs == nil {
		return hmac.New(sha256.New, k.key)
	}
	m := k.macs.Get().(hash.Hash)
	m.Reset()
	return m
}

func (k Keyed) done(m hash.Hash) {
	if k.macs != nil {
		k.macs.Put(m)
	}
}

// Lookup returns the Keyed, with that one key and no previous ones, whose
// KeyID is keyID: the current key's or a previous key's.
func (k Keyed) Lookup(keyID string) (Keyed, bool) {
	if k.id == keyID {
		k.previous = nil
		return k, true
	}
	for _, p := range k.previous {
		if p.id == keyID {
			return p, true
		}
	}
	return Keyed{}, false
}

// Workload returns the digest written on a pod template: an HMAC over the
// encoded entries, in the order of refs.Compare whatever their order here.
func (k Keyed) Workload(entries []Entry) string {
	sorted := slices.SortedFunc(slices.Values(entries), func(a, b Entry) int { return refs.Compare(a.Ref, b.Ref) })
	m := k.mac()
	defer k.done(m)
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
	m := k.mac()
	defer k.done(m)
	m.Write([]byte("object"))
	m.Write(sum[:])
	return hex.EncodeToString(m.Sum(nil)[:shortLen])
}

// KeyID identifies the key without revealing it, so that a changed or lost
// key is noticed and digests are re-recorded instead of every workload rolled.
// The "/2" marks digests that bind the namespace: records written before
// that read as of another key, so they are recorded again, not compared.
func (k Keyed) KeyID() string { return k.id }
