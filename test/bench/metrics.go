package bench

import (
	"bufio"
	"bytes"
	"io"
	"sort"
	"strconv"
	"strings"
)

// Sample is one line of the Prometheus text format.
type Sample struct {
	Name   string
	Labels map[string]string
	Value  float64
}

// Samples are the samples of one scrape.
type Samples []Sample

// ParseSamples reads the Prometheus text exposition format, enough of it for
// counters and gauges.
func ParseSamples(r io.Reader) (Samples, error) {
	var out Samples
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		s := Sample{Labels: map[string]string{}}
		var rest string
		if i := strings.IndexByte(line, '{'); i >= 0 {
			s.Name = line[:i]
			j := strings.LastIndexByte(line, '}')
			if j < i {
				continue
			}
			parseLabels(line[i+1:j], s.Labels)
			rest = strings.TrimSpace(line[j+1:])
		} else {
			name, v, _ := strings.Cut(line, " ")
			s.Name, rest = name, strings.TrimSpace(v)
		}
		if f := strings.Fields(rest); len(f) > 0 {
			v, err := strconv.ParseFloat(f[0], 64)
			if err != nil {
				continue
			}
			s.Value = v
			out = append(out, s)
		}
	}
	return out, sc.Err()
}

func parseLabels(s string, into map[string]string) {
	for len(s) > 0 {
		eq := strings.IndexByte(s, '=')
		if eq < 0 || eq+1 >= len(s) || s[eq+1] != '"' {
			return
		}
		key := strings.TrimSpace(strings.TrimPrefix(s[:eq], ","))
		var val strings.Builder
		i := eq + 2
		for ; i < len(s) && s[i] != '"'; i++ {
			if s[i] == '\\' && i+1 < len(s) {
				i++
				switch s[i] {
				case 'n':
					val.WriteByte('\n')
				default:
					val.WriteByte(s[i])
				}
				continue
			}
			val.WriteByte(s[i])
		}
		into[key] = val.String()
		s = s[min(i+1, len(s)):]
		s = strings.TrimPrefix(s, ",")
	}
}

// Sum adds the values of the samples named name whose labels include match.
func (ss Samples) Sum(name string, match map[string]string) float64 {
	var total float64
	for _, s := range ss {
		if s.Name == name && matches(s.Labels, match) {
			total += s.Value
		}
	}
	return total
}

func matches(labels, match map[string]string) bool {
	for k, v := range match {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// Counts sums the samples named name by the values of the given labels,
// joined with a space, e.g. "PATCH deployments".
func (ss Samples) Counts(name string, by ...string) map[string]float64 {
	out := map[string]float64{}
	for _, s := range ss {
		if s.Name != name {
			continue
		}
		parts := make([]string, len(by))
		for i, l := range by {
			parts[i] = s.Labels[l]
		}
		out[strings.Join(parts, " ")] += s.Value
	}
	return out
}

// Heap is what ripple's Go runtime reports of its heap work so far: bytes
// allocated and collections. Unlike CPU time, neither moves with the
// machine's speed, so they show a change of ripple's that CPU figures
// within their noise would not.
type Heap struct{ Allocated, Collections float64 }

// HeapOf reads Heap from ripple's metrics.
func HeapOf(ss Samples) Heap {
	return Heap{Allocated: ss.Sum("go_memstats_alloc_bytes_total", nil), Collections: ss.Sum("go_gc_duration_seconds_count", nil)}
}

// PerEdit is the heap work from h to after, divided by n edits: KiB
// allocated and collections.
func (h Heap) PerEdit(after Heap, n int) (kib, collections float64) {
	d := float64(max(n, 1))
	return (after.Allocated - h.Allocated) / 1024 / d, (after.Collections - h.Collections) / d
}

// Diff returns after minus before for every key that moved.
func Diff(before, after map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range after {
		if d := v - before[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}

// FormatCounts renders counts as "k=v, ..." sorted by key.
func FormatCounts(m map[string]float64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + strconv.FormatFloat(m[k], 'f', -1, 64)
	}
	return strings.Join(parts, ", ")
}

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }
