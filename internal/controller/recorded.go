package controller

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/validate/content"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/ripple-controller/ripple/internal/annotations"
	"github.com/ripple-controller/ripple/internal/digest"
	"github.com/ripple-controller/ripple/internal/refs"
)

// record is what ripple last saw of a workload's tracked config, kept in the
// Recorded annotation as "key=<id>;at=<unix>;[wave=<wave>;]Kind/name=<short>;...".
// at is when it was recorded: an object created after it is new. wave is
// the wave of the paced rollout that wrote it, if any, so that a restart
// of ripple still counts that rollout while it is in progress (pacer.restore).
type record struct {
	keyID   string
	at      int64
	wave    string
	objects map[refs.Ref]string
}

func (r record) encode() string {
	parts := []string{"key=" + r.keyID, "at=" + strconv.FormatInt(r.at, 10)}
	if r.wave != "" {
		parts = append(parts, "wave="+r.wave)
	}
	keys := slices.SortedFunc(maps.Keys(r.objects), refs.Compare)
	for _, ref := range keys {
		parts = append(parts, ref.String()+"="+r.objects[ref])
	}
	return strings.Join(parts, ";")
}

// maxQuotedEntry is the most bytes of a record entry that an error about
// it quotes: the annotation may be as long as the API server allows, and
// the error is logged.
const maxQuotedEntry = 128

// maxRecord is the longest record read: twice what ripple writes, which
// folds past recordBudget. A longer one was written by hand, and reading
// it would cost a map of its entries and, for each entry that names no
// object, a GET from the API server at every reconcile; it is unreadable,
// so ripple records again.
const maxRecord = 2 * recordBudget

// maxKeyID bounds the key id read from a record, which is logged and
// quoted in Events: ripple's are 8 hex digits.
const maxKeyID = 64

// decodeRecord reads a record; its error quotes at most maxQuotedEntry
// bytes of the entry it is about.
func decodeRecord(s string) (record, error) {
	if len(s) > maxRecord {
		return record{}, fmt.Errorf("%d bytes, longer than the %d ripple reads", len(s), maxRecord)
	}
	r := record{objects: map[refs.Ref]string{}}
	for i, part := range strings.Split(s, ";") {
		quoted := annotations.Shorten(part, maxQuotedEntry)
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			return record{}, fmt.Errorf("entry %d %q has no '='", i, quoted)
		}
		switch {
		case i == 0 && k == "key":
			if len(v) > maxKeyID {
				return record{}, fmt.Errorf("key id of %d bytes, longer than any ripple writes", len(v))
			}
			r.keyID = v
		case i == 1 && k == "at":
			at, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				// The error quotes the number, as long as the entry.
				var num *strconv.NumError
				if errors.As(err, &num) {
					err = num.Err
				}
				return record{}, fmt.Errorf("entry %q: %w", quoted, err)
			}
			r.at = at
		case i == 2 && k == "wave":
			r.wave = v
		case i > 1:
			kind, name, ok := strings.Cut(k, "/")
			if !ok || !slices.Contains(refs.AllKinds, refs.Kind(kind)) || !recordableName(name) {
				return record{}, fmt.Errorf("entry %q does not name a ConfigMap, Secret or SecretProviderClass", quoted)
			}
			r.objects[refs.Ref{Kind: refs.Kind(kind), Name: name}] = v
		default:
			return record{}, fmt.Errorf("entry %d %q is out of place", i, quoted)
		}
	}
	if r.keyID == "" {
		return record{}, fmt.Errorf("no key entry")
	}
	if r.at == 0 {
		return record{}, fmt.Errorf("no time entry")
	}
	return r, nil
}

// recordableName reports whether a record entry's name can be an object's
// or a bucket's: ripple reads a recorded object missing from its cache by
// name, and a hand-edited name holding a slash or dots would send that read
// to another path of the API, failing every reconcile of the workload or
// probing objects elsewhere.
func recordableName(name string) bool {
	return name != "" && len(name) <= validation.DNS1123SubdomainMaxLength && len(content.IsPathSegmentName(name)) == 0
}

// change is how one tracked object differs from the record.
type change int

const (
	changedData change = iota + 1
	created
	// createdThenChanged is an object created after the record, or newly
	// tracked after its ignore or match annotation or its label changed,
	// whose data changed since: as in Reloader, the change rolls, the
	// creation or the annotation alone not.
	createdThenChanged
	deleted
	// untracked and newlyTracked follow a change of annotations or of
	// ripple's view, not of config: they are recorded but never roll.
	untracked
	newlyTracked
)

// clockSlack is how far apart, in whole seconds, two times may be and
// still count as the same moment: the API server stamps objects in whole
// seconds, and ripple's estimate of its clock may be half a second off.
const clockSlack = 1

// diff compares the record with the tracked objects now, whose digests
// short turns into the record's form. missing tells why a recorded object
// is not tracked now (see Reconciler.missing); an object it has no answer
// for is left as recorded.
func diff(rec record, now map[refs.Ref]tracked, short func(digest.Sum) string, missing map[refs.Ref]change) map[refs.Ref]change {
	out := map[refs.Ref]change{}
	for ref, recorded := range rec.objects {
		cur, ok := now[ref]
		asRecorded, sameKeys := cur.asRecorded(recorded, short)
		switch {
		case ok && sameKeys && asRecorded != recorded:
			out[ref] = changedData
		case !ok && missing[ref] != 0:
			out[ref] = missing[ref]
		}
	}
	for ref, cur := range now {
		if _, ok := rec.objects[ref]; ok {
			continue
		}
		if cur.isNew(rec.at) {
			out[ref] = created
		} else {
			out[ref] = newlyTracked
		}
	}
	return out
}

// isNew reports whether an object missing from a record written at the API
// server second at was created after it. One created in the seconds around
// the record may not have been in ripple's cache when it was written, nor
// one whose creation ripple saw after it (a watch that lagged or broke).
// One that the workload did not track, by its marks, was left out for
// that, wherever its creation falls: as in Reloader, its data changed
// while it was not tracked rolls nothing, and taking it for a creation
// would compare its data with that at its creation.
func (t tracked) isNew(at int64) bool {
	return !t.leftOut(at) && (t.seenCreated > at+clockSlack || t.createdAt >= at-clockSlack)
}

// stamp is the value of the ConfigDigest annotation on a pod template: the
// key, when the workload was rolled (API server time) and the digest of all
// the config it tracked then. It is what the pods run, so it is the
// evidence left when the record is lost.
type stamp struct {
	keyID  string
	at     int64
	digest string
}

func (s stamp) encode() string {
	return s.keyID + ":" + strconv.FormatInt(s.at, 10) + ":" + s.digest
}

func decodeStamp(v string) (stamp, bool) {
	parts := strings.Split(v, ":")
	if len(parts) != 3 || parts[0] == "" || parts[2] == "" {
		return stamp{}, false
	}
	at, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil {
		return stamp{}, false
	}
	return stamp{keyID: parts[0], at: at, digest: parts[2]}, true
}
