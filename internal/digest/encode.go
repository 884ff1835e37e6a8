package digest

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"io"
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// Sum is the SHA-256 of one object's encoding.
type Sum [sha256.Size]byte

// String renders the sum in hex.
func (s Sum) String() string { return hex.EncodeToString(s[:]) }

// ConfigMap returns the digest of a ConfigMap's namespace, name, data and
// binaryData.
func ConfigMap(cm *corev1.ConfigMap) Sum {
	return Object("ConfigMap", Qualified(cm.Namespace, cm.Name), cm.Data, cm.BinaryData)
}

// Secret returns the digest of a Secret's namespace, name and data.
func Secret(s *corev1.Secret) Sum {
	return Object("Secret", Qualified(s.Namespace, s.Name), nil, s.Data)
}

// Qualified binds an object's namespace to its name, so that equal Secrets
// in two namespaces give unrelated digests: whoever can create Secrets in
// one namespace cannot test guesses of a Secret in another by comparing
// what ripple wrote. Neither part may contain '/', so the pair is
// unambiguous.
func Qualified(namespace, name string) string { return namespace + "/" + name }

// Object returns the SHA-256 of Encode's output, streamed so that a large
// object is not copied.
func Object(kind, name string, data map[string]string, binaryData map[string][]byte) Sum {
	h := sha256.New()
	Encode(h, kind, name, data, binaryData)
	var s Sum
	h.Sum(s[:0])
	return s
}

// Encode writes the unambiguous encoding of an object: kind and name, then
// the count of data entries and each key and value, then the same for
// binaryData. Every string is prefixed by its length, and map entries are
// sorted by key.
func Encode(w io.Writer, kind, name string, data map[string]string, binaryData map[string][]byte) {
	e := encoder{w: w}
	e.string(kind)
	e.string(name)
	e.uint(uint64(len(data)))
	for _, k := range sortedKeys(data) {
		e.string(k)
		e.string(data[k])
	}
	e.uint(uint64(len(binaryData)))
	for _, k := range sortedKeys(binaryData) {
		e.string(k)
		e.bytes(binaryData[k])
	}
}

type encoder struct {
	w   io.Writer
	buf [binary.MaxVarintLen64]byte
}

// Writes to a hash.Hash never fail, and a bytes.Buffer only panics on OOM.
func (e *encoder) uint(v uint64) {
	n := binary.PutUvarint(e.buf[:], v)
	_, _ = e.w.Write(e.buf[:n])
}

// string avoids copying a value to []byte where the writer takes strings,
// as SHA-256 does: a ConfigMap's data may be close to 1 MiB.
func (e *encoder) string(s string) {
	e.uint(uint64(len(s)))
	_, _ = io.WriteString(e.w, s)
}

func (e *encoder) bytes(b []byte) {
	e.uint(uint64(len(b)))
	_, _ = e.w.Write(b)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
