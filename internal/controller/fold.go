package controller

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"io"
	"slices"
	"strings"

	"github.com/ripple-controller/ripple/internal/digest"
	"github.com/ripple-controller/ripple/internal/refs"
)

// A record names each tracked object, which keeps changes, creations and
// deletions apart. But a reload list may match thousands of objects, and
// all of a workload's annotations share a 256 KiB limit: past recordBudget
// bytes, the record folds the objects of each kind into foldBuckets
// buckets by name, each kept as one digest of its members' names and
// digests. A change of any member still rolls; a creation is still told
// apart by its creation time; a deletion can no longer be told from a
// change, and rolls.
const (
	recordBudget = 16 << 10
	foldBuckets  = 64
)

// bucketPrefix starts a bucket's name; no object's name contains it.
const bucketPrefix = "#"

func bucketRef(kind refs.Kind, name string) refs.Ref {
	h := fnv.New32a()
	_, _ = io.WriteString(h, name)
	return refs.Ref{Kind: kind, Name: fmt.Sprintf("%s%02d", bucketPrefix, h.Sum32()%foldBuckets)}
}

func isBucket(ref refs.Ref) bool { return strings.HasPrefix(ref.Name, bucketPrefix) }

func isFolded(objects map[refs.Ref]string) bool {
	for ref := range objects {
		if isBucket(ref) {
			return true
		}
	}
	return false
}

// recordSize is the length of the objects' part of an encoded record.
func recordSize(objects map[refs.Ref]string) int {
	n := 0
	for ref, short := range objects {
		n += len(ref.Kind) + len(ref.Name) + len(short) + len("/=;")
	}
	return n
}

// fold returns the buckets of the objects: per bucket, a digest of the
// sorted "name=short" lines of its members. Names cannot hold '=' or a
// newline, so the lines are unambiguous; the shorts are keyed already.
func fold(objects map[refs.Ref]string) map[refs.Ref]string {
	members := map[refs.Ref][]string{}
	for ref, short := range objects {
		b := bucketRef(ref.Kind, ref.Name)
		members[b] = append(members[b], ref.Name+"="+short+"\n")
	}
	out := make(map[refs.Ref]string, len(members))
	for b, lines := range members {
		out[b] = bucketSum(lines)
	}
	return out
}

func bucketSum(lines []string) string {
	slices.Sort(lines)
	h := sha256.New()
	for _, l := range lines {
		_, _ = io.WriteString(h, l)
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// foldedDiff compares a folded record with the tracked objects now. Objects
// created after the record, or whose creation ripple saw after it (a watch
// that lagged or broke), cannot be in it: they are left out of the buckets
// and reported one by one as created, as diff does. Those created within
// clockSlack of the record may or may not be in it: a bucket matches with
// any of them, and those it matches without are created. Objects the
// workload did not track after the record, by the first of their marks
// since (tracked.marks), cannot be in it either; those it began to track
// in the seconds of the record, or since and back and forth, may be: they
// are newly tracked, not created.
func foldedDiff(rec record, now map[refs.Ref]tracked, short func(digest.Sum) string) map[refs.Ref]change {
	out := map[refs.Ref]change{}
	old, borderline := map[refs.Ref][]string{}, map[refs.Ref][]refs.Ref{}
	lines := map[refs.Ref]string{}
	for ref, cur := range now {
		_, began := cur.since(rec.at)
		switch {
		case cur.untrackedAt(rec.at + clockSlack):
			out[ref] = newlyTracked
			continue
		case !cur.leftOut(rec.at) && (cur.createdAt > rec.at+clockSlack || cur.seenCreated > rec.at+clockSlack):
			out[ref] = created
			continue
		}
		b, line := bucketRef(ref.Kind, ref.Name), ref.Name+"="+cur.recordValue(short)+"\n"
		if began || cur.createdAt >= rec.at-clockSlack {
			borderline[b] = append(borderline[b], ref)
			lines[ref] = line
		} else {
			old[b] = append(old[b], line)
		}
	}
	buckets := map[refs.Ref]bool{}
	for b := range rec.objects {
		buckets[b] = true
	}
	for b := range old {
		buckets[b] = true
	}
	for b := range borderline {
		buckets[b] = true
	}
	for b := range buckets {
		in, ok := matchBucket(rec.objects[b], old[b], borderline[b], lines)
		if !ok {
			out[b] = changedData
		}
		for _, ref := range borderline[b] {
			if !in[ref] {
				out[ref] = created
				if now[ref].leftOut(rec.at) {
					out[ref] = newlyTracked
				}
			}
		}
	}
	return out
}

// maxBorderline bounds the members of a bucket created around its record
// whose every subset is tried: a bulk creation then tries all or none.
const maxBorderline = 8

// matchBucket finds which of the borderline members, with the old ones,
// make the recorded digest of a bucket: some may have been in ripple's
// cache when the record was written and others not (created in the same
// seconds during a bulk creation); trying only all or none of them rolled
// the workload for a change no object had.
func matchBucket(recorded string, old []string, borderline []refs.Ref, lines map[refs.Ref]string) (map[refs.Ref]bool, bool) {
	try := func(member func(i int) bool) (map[refs.Ref]bool, bool) {
		in, members := map[refs.Ref]bool{}, slices.Clone(old)
		for i, ref := range borderline {
			if in[ref] = member(i); in[ref] {
				members = append(members, lines[ref])
			}
		}
		sum := ""
		if len(members) > 0 {
			sum = bucketSum(members)
		}
		return in, sum == recorded
	}
	if len(borderline) > maxBorderline {
		for _, all := range []bool{false, true} {
			if in, ok := try(func(int) bool { return all }); ok {
				return in, true
			}
		}
		return nil, false
	}
	for mask := range 1 << len(borderline) {
		if in, ok := try(func(i int) bool { return mask&(1<<i) != 0 }); ok {
			return in, true
		}
	}
	return nil, false
}
