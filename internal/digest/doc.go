// Package digest turns config objects into digests.
//
// An object's data is hashed (SHA-256) over an encoding in which every field
// is length-prefixed and every map is counted and sorted, so no two different
// objects encode alike. Digests that leave ripple, on pod templates and in
// the recorded state, are HMACs under a per-installation key: whoever can
// read a Deployment cannot test guesses of a Secret's value against them.
// A Keyed also holds the keys it replaced: a record made under one of them
// is found by its key ID and compared, so rotating the key loses no change.
package digest
