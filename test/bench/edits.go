package bench

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// Edit is the outcome of one ConfigMap edit.
type Edit struct {
	ConfigMap string
	Affected  int
	// At is when the edit request was sent.
	At time.Time
	// First and Last are the times from the edit request until the first and
	// the last affected Deployment was seen rolled.
	First, Last time.Duration
	// Missing are affected Deployments that did not roll, Extra the rolls
	// of Deployments not affected or of an affected one more than once.
	Missing, Extra []string
}

// Editor edits ConfigMaps one at a time and times the rollouts they cause.
type Editor struct {
	CS        kubernetes.Interface
	Tracker   *Tracker
	Namespace string
	Users     map[string][]string
	// Key is the pod template annotation that marks a rollout.
	Key string
	// Timeout bounds the wait for one edit's rollouts.
	Timeout time.Duration
	// Settle is how long the Deployments must stay quiet after an edit's
	// rollouts before the next edit, so that late or extra rolls count
	// against the edit that caused them; Idle, if set, must also hold.
	Settle time.Duration
	Idle   func(context.Context) error

	seq int
}

// EditConfigMap changes cm's data with one merge patch and returns when.
func (e *Editor) EditConfigMap(ctx context.Context, cm string) (time.Time, error) {
	e.seq++
	body := fmt.Sprintf(`{"data":{"value":"%d-%d"}}`, time.Now().UnixNano(), e.seq)
	t0 := time.Now()
	_, err := e.CS.CoreV1().ConfigMaps(e.Namespace).Patch(ctx, cm, types.MergePatchType, []byte(body), metav1.PatchOptions{})
	return t0, err
}

// Run edits each ConfigMap in turn.
func (e *Editor) Run(ctx context.Context, cms []string) ([]Edit, error) {
	out := make([]Edit, 0, len(cms))
	for _, cm := range cms {
		ed, err := e.One(ctx, cm)
		if err != nil {
			return out, err
		}
		out = append(out, ed)
	}
	return out, nil
}

// One edits cm and waits for its rollouts and for quiet.
func (e *Editor) One(ctx context.Context, cm string) (Edit, error) {
	mark := e.Tracker.Mark()
	t0, err := e.EditConfigMap(ctx, cm)
	if err != nil {
		return Edit{}, fmt.Errorf("editing ConfigMap %s: %w", cm, err)
	}
	wctx, cancel := context.WithTimeout(ctx, e.Timeout)
	_, werr := e.Tracker.WaitRolled(wctx, mark, e.Key, e.Users[cm])
	cancel()
	if werr != nil && ctx.Err() != nil {
		return Edit{}, ctx.Err()
	}
	if err := e.settle(ctx); err != nil {
		return Edit{}, err
	}
	return Judge(cm, t0, e.Users[cm], e.Tracker.RollsSince(mark), e.Key), nil
}

func (e *Editor) settle(ctx context.Context) error {
	for {
		quiet, _ := e.Tracker.Quiet()
		if quiet >= e.Settle {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(e.Settle - quiet):
		}
	}
	if e.Idle != nil {
		return e.Idle(ctx)
	}
	return nil
}

// Judge compares the rolls on key seen after an edit at t0 with the
// Deployments the edit should roll exactly once.
func Judge(cm string, t0 time.Time, affected []string, rolls []Roll, key string) Edit {
	ed := Edit{ConfigMap: cm, Affected: len(affected), At: t0}
	want := make(map[string]bool, len(affected))
	for _, n := range affected {
		want[n] = true
	}
	seen := map[string]int{}
	var first, last time.Time
	for _, r := range rolls {
		if r.Key != key {
			continue
		}
		seen[r.Name]++
		if !want[r.Name] || seen[r.Name] > 1 {
			ed.Extra = append(ed.Extra, r.Name)
			continue
		}
		if first.IsZero() || r.At.Before(first) {
			first = r.At
		}
		if r.At.After(last) {
			last = r.At
		}
	}
	for _, n := range affected {
		if seen[n] == 0 {
			ed.Missing = append(ed.Missing, n)
		}
	}
	if !first.IsZero() {
		ed.First, ed.Last = first.Sub(t0), last.Sub(t0)
	}
	sort.Strings(ed.Missing)
	sort.Strings(ed.Extra)
	return ed
}

// Stats summarises a series of durations.
type Stats struct {
	N             int
	P50, P99, Max time.Duration
}

// Summarise computes nearest-rank percentiles.
func Summarise(ds []time.Duration) Stats {
	if len(ds) == 0 {
		return Stats{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := func(p float64) time.Duration {
		i := int(math.Ceil(p*float64(len(s)))) - 1
		return s[max(0, min(i, len(s)-1))]
	}
	return Stats{N: len(s), P50: rank(0.50), P99: rank(0.99), Max: s[len(s)-1]}
}

// Latencies returns the first and last latencies of the complete edits.
func Latencies(edits []Edit) (first, last Stats) {
	var f, l []time.Duration
	for _, e := range edits {
		if len(e.Missing) > 0 {
			continue
		}
		f = append(f, e.First)
		l = append(l, e.Last)
	}
	return Summarise(f), Summarise(l)
}

// Correctness describes what went wrong over the edits, "" when every
// affected Deployment rolled exactly once and nothing else rolled.
func Correctness(edits []Edit) string {
	var missing, extra, incomplete int
	var examples []string
	for _, e := range edits {
		missing += len(e.Missing)
		extra += len(e.Extra)
		if len(e.Missing) > 0 {
			incomplete++
			if len(examples) < 3 {
				examples = append(examples, fmt.Sprintf("%s: %d of %d missing", e.ConfigMap, len(e.Missing), e.Affected))
			}
		}
		if len(e.Extra) > 0 && len(examples) < 3 {
			examples = append(examples, fmt.Sprintf("%s: extra %s", e.ConfigMap, strings.Join(e.Extra[:min(3, len(e.Extra))], ",")))
		}
	}
	if missing == 0 && extra == 0 {
		return ""
	}
	return fmt.Sprintf("%d edits incomplete, %d rolls missing, %d extra (%s)", incomplete, missing, extra, strings.Join(examples, "; "))
}

// Affected counts the Deployments the edits should roll.
func Affected(edits []Edit) int {
	n := 0
	for _, e := range edits {
		n += e.Affected
	}
	return n
}
