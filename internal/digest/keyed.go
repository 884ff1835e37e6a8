package digest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
)

// Entry is one tracked object and the sum of its data.
type Entry struct {
	Kind string
	Name string
	Sum  Sum
}

// Keyed computes the digests that ripple writes to the API server.
type Keyed struct {
	key []byte
}

// NewKeyed returns a Keyed that uses key for every HMAC.
func NewKeyed(key []byte) Keyed { return Keyed{key: append([]byte(nil), key...)} }

// Workload returns the digest written on a pod template: an HMAC over the
// encoded entries, which must be sorted by kind and name.
func (k Keyed) Workload(entries []Entry) string {
	m := hmac.New(sha256.New, k.key)
	e := encoder{w: m}
	e.uint(uint64(len(entries)))
	for _, en := range entries {
		e.string(en.Kind)
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

// Lookup returns the Keyed whose KeyID is keyID, so that digests recorded
// under that key can be compared.
func (k Keyed) Lookup(keyID string) (Keyed, bool) {
	if keyID == k.KeyID() {
		return k, true
	}
	return Keyed{}, false
}
