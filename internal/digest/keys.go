package digest

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// KeySums returns the digest of each key of an object: its kind, qualified
// name, key and value, in Encode's encoding. They let a workload that uses
// only some keys be digested on those alone (Subset) after the data is
// dropped.
func KeySums(kind, name string, data map[string]string, binaryData map[string][]byte) map[string]Sum {
	out := make(map[string]Sum, len(data)+len(binaryData))
	for k, v := range data {
		out[k] = Object(kind, name, map[string]string{k: v}, nil)
	}
	for k, v := range binaryData {
		out[k] = Object(kind, name, nil, map[string][]byte{k: v})
	}
	return out
}

// Subset returns the digest of the given keys of an object from its
// KeySums: it changes when one of those keys is added, removed or changed,
// and only then. keys must be sorted and without duplicates.
func Subset(sums map[string]Sum, keys []string) Sum {
	h := sha256.New()
	e := encoder{w: h}
	e.string("keys")
	e.uint(uint64(len(keys)))
	for _, k := range keys {
		e.string(k)
		s, ok := sums[k]
		if !ok {
			e.uint(0)
			continue
		}
		e.uint(1)
		_, _ = h.Write(s[:])
	}
	var out Sum
	h.Sum(out[:0])
	return out
}

// ScopeID names a set of keys in a few characters, so that a record can
// say which keys its digest covered without listing them. keys must be
// sorted and without duplicates.
func ScopeID(keys []string) string {
	s := sha256.Sum256([]byte(strings.Join(keys, "\x00")))
	return hex.EncodeToString(s[:4])
}
