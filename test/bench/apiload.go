package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
)

// AuditOffset is a position in the audit log.
type AuditOffset int64

// AuditMark returns the current end of the audit log.
func (c *Cluster) AuditMark() AuditOffset {
	fi, err := os.Stat(c.AuditLog)
	if err != nil {
		return 0
	}
	return AuditOffset(fi.Size())
}

type auditEvent struct {
	Stage string `json:"stage"`
	Verb  string `json:"verb"`
	User  struct {
		Username string `json:"username"`
	} `json:"user"`
	UserAgent string `json:"userAgent"`
	// Received is when the API server received the request, StageAt when
	// it reached Stage.
	Received  time.Time `json:"requestReceivedTimestamp"`
	StageAt   time.Time `json:"stageTimestamp"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
}

// AuditCounts counts ripple's requests logged since from by "verb resource",
// e.g. "patch deployments", as the API server saw them. A watch counts when
// it starts, every other request when it completes.
func (c *Cluster) AuditCounts(from AuditOffset) (map[string]float64, error) {
	out := map[string]float64{}
	err := c.eachAuditEvent(from, func(ev auditEvent) {
		// A watch counts when it starts, anything else when it completes.
		counted := (ev.Stage == "ResponseComplete" && ev.Verb != "watch") || (ev.Stage == "ResponseStarted" && ev.Verb == "watch")
		if ev.User.Username != RippleUser || !counted {
			return
		}
		res := "-"
		if ev.ObjectRef != nil {
			res = ev.ObjectRef.Resource
			if ev.ObjectRef.Subresource != "" {
				res += "/" + ev.ObjectRef.Subresource
			}
		}
		out[ev.Verb+" "+res]++
	})
	return out, err
}

// eachAuditEvent calls fn with each event logged since from; a line that
// is not an event is skipped.
func (c *Cluster) eachAuditEvent(from AuditOffset, fn func(auditEvent)) error {
	f, err := os.Open(c.AuditLog)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.Seek(int64(from), io.SeekStart); err != nil {
		return err
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var ev auditEvent
		if json.Unmarshal(sc.Bytes(), &ev) == nil {
			fn(ev)
		}
	}
	return sc.Err()
}

// FirstPatches times, for each edit, the first successful PATCH of a
// Deployment by a client of RippleUser that the API server received after
// the edit and before the next one, read from the audit log since from: how
// long after the edit it was received, and how long the API server took to
// answer it. floor picks the floor's patches, else ripple's. The two tell
// the controller's part of a first-workload latency from the API server's.
// An edit with no such patch is left out of the Stats' N.
func (c *Cluster) FirstPatches(from AuditOffset, floor bool, edits []Edit) (received, answered Stats, err error) {
	var patches []auditEvent
	err = c.eachAuditEvent(from, func(ev auditEvent) {
		if firstPatchCandidate(ev, floor) {
			patches = append(patches, ev)
		}
	})
	if err != nil {
		return Stats{}, Stats{}, err
	}
	sort.Slice(patches, func(i, j int) bool { return patches[i].Received.Before(patches[j].Received) })
	var recv, answer []time.Duration
	for i, ed := range edits {
		j := sort.Search(len(patches), func(k int) bool { return !patches[k].Received.Before(ed.At) })
		if j == len(patches) || (i+1 < len(edits) && !patches[j].Received.Before(edits[i+1].At)) {
			continue
		}
		recv = append(recv, patches[j].Received.Sub(ed.At))
		answer = append(answer, patches[j].StageAt.Sub(patches[j].Received))
	}
	return Summarise(recv), Summarise(answer), nil
}

// firstPatchCandidate reports whether ev is a completed patch of a
// Deployment's spec by the chosen client that the API server applied: a
// refused one (a conflict on ripple's resourceVersion) changed nothing.
func firstPatchCandidate(ev auditEvent, floor bool) bool {
	return ev.User.Username == RippleUser && ev.Stage == "ResponseComplete" && ev.Verb == "patch" &&
		ev.ObjectRef != nil && ev.ObjectRef.Resource == "deployments" && ev.ObjectRef.Subresource == "" &&
		ev.ResponseStatus != nil && ev.ResponseStatus.Code/100 == 2 && (ev.UserAgent == FloorAgent) == floor
}

// reviews are created but stored nowhere: a question to the API server,
// such as ripple's check of its rights at start, not a write.
var reviews = []string{"selfsubjectaccessreviews", "selfsubjectrulesreviews", "subjectaccessreviews"}

// Writes counts the mutating requests among counts.
func Writes(counts map[string]float64) float64 {
	var n float64
	for k, v := range counts {
		if slices.Contains(reviews, resourceOf(k)) {
			continue
		}
		switch verbOf(k) {
		case "create", "update", "patch", "delete", "deletecollection":
			n += v
		}
	}
	return n
}

// resourceOf is the resource of a count's key, "verb resource".
func resourceOf(key string) string {
	_, resource, _ := strings.Cut(key, " ")
	return resource
}

func verbOf(key string) string {
	for i := 0; i < len(key); i++ {
		if key[i] == ' ' {
			return key[:i]
		}
	}
	return key
}

// APIServerRequests scrapes apiserver_request_total by "VERB resource".
func APIServerRequests(ctx context.Context, cs kubernetes.Interface) (map[string]float64, error) {
	raw, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, err
	}
	ss, err := ParseSamples(bytesReader(raw))
	if err != nil {
		return nil, err
	}
	return ss.Counts("apiserver_request_total", "verb", "resource"), nil
}
