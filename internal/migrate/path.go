package migrate

import (
	"slices"
	"strconv"
	"strings"
)

// path is where a value sits in a values file, one map key a segment: the
// keys of labels and annotations hold dots (sidecar.istio.io/inject), so a
// dotted string cannot say where one key ends.
type path []string

// at is the path of a setting this package names, Reloader's or ripple's,
// whose keys hold no dot; a key read from the values goes in with child.
func at(dotted string) path {
	return strings.Split(dotted, ".")
}

// child is the path of keys under p. It shares no memory with p, so two
// children of one path never overwrite each other.
func (p path) child(keys ...string) path {
	return slices.Concat(p, keys)
}

// String renders p for people, and as the key of this package's tables:
// the segments are joined with dots, and one holding anything but letters,
// digits, '_', '-' and '/' is quoted, so no two paths render the same and
// a table's dotted name never matches a key holding dots.
func (p path) String() string {
	segments := make([]string, len(p))
	for i, s := range p {
		segments[i] = s
		if !plain(s) {
			segments[i] = strconv.Quote(s)
		}
	}
	return strings.Join(segments, ".")
}

func plain(segment string) bool {
	if segment == "" {
		return false
	}
	for _, r := range segment {
		isAlnum := 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
		if !isAlnum && r != '_' && r != '-' && r != '/' {
			return false
		}
	}
	return true
}
