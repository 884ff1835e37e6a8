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

// wholeKey is where Whole keeps an object's digest. No key of a ConfigMap
// or a Secret can be empty, so it names none of theirs.
const wholeKey = ""

// Whole stands in for KeySums when an object's keys are too many to keep a
// digest of each: it holds only whole, the digest of all the object's data,
// and Subset of it is a digest of whole, so it changes whenever any key of
// the object changes, appears or disappears, read or not. A workload that
// reads some keys of it then rolls as one that reads all of them.
func Whole(whole Sum) map[string]Sum {
	return map[string]Sum{wholeKey: whole}
}

// IsWhole reports whether sums is Whole's: no digest of any key is kept.
func IsWhole(sums map[string]Sum) bool {
	_, ok := sums[wholeKey]
	return ok && len(sums) == 1
}

// Subset returns the digest of the given keys of an object from its
// KeySums: it changes when one of those keys is added, removed or changed,
// and only then. keys must be sorted and without duplicates. From Whole,
// it changes when any key changes, and differs from any Subset of KeySums.
func Subset(sums map[string]Sum, keys []string) Sum {
	h := sha256.New()
	e := encoder{w: h}
	if IsWhole(sums) {
		e.string("whole")
		whole := sums[wholeKey]
		_, _ = h.Write(whole[:])
		var out Sum
		h.Sum(out[:0])
		return out
	}
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
