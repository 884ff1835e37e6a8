package migrate

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

const reloaderImage = "stakater/reloader"

// MaxInput bounds the values file read: Reloader's own is about 10 KiB.
const MaxInput = 1 << 20

// MaxDepth bounds the nesting of maps and lists in the values file: the
// deepest of Reloader's settings, an affinity, nests about ten. Deeper
// input would cost time, memory and output growing with its square.
const MaxDepth = 64

var (
	// ErrUsage is returned for a command line migrate-values cannot run.
	ErrUsage = errors.New("usage: ripple migrate-values FILE (or - for standard input)")
	// ErrUnknownKeys is returned for values that are no setting of
	// Reloader's chart.
	ErrUnknownKeys = errors.New("not settings of stakater/Reloader's chart (a typo, or another chart's values?)")
)

// Result is ripple's values and the comments that go with them.
type Result struct {
	Values map[string]any
	// Notes explain a value that was carried over with a change.
	Notes []string
	// Dropped names each setting that was not carried over, and why.
	Dropped []string
}

// Values reads Reloader's chart values and returns ripple's.
func Values(in []byte) (Result, error) {
	if len(in) > MaxInput {
		return Result{}, fmt.Errorf("the values file is over %d bytes, more than any chart's values", MaxInput)
	}
	var src map[string]any
	if err := yaml.Unmarshal(in, &src); err != nil {
		return Result{}, fmt.Errorf("reading the values as a YAML map: %w", err)
	}
	if tooDeep(src, MaxDepth) {
		return Result{}, fmt.Errorf("the values nest maps or lists more than %d deep, more than any chart's values", MaxDepth)
	}
	if err := unknownKeys(src); err != nil {
		return Result{}, err
	}
	m := &mapper{src: src, used: map[string]bool{}, res: Result{Values: map[string]any{}}}
	m.settings()
	m.dropRest()
	sort.Strings(m.res.Dropped)
	return m.res, nil
}

// Render prints the comments, then ripple's values as YAML.
func (r Result) Render() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("# ripple values carried over from stakater/Reloader's chart values by `ripple migrate-values`.\n")
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "# note: %s\n", n)
	}
	for _, d := range r.Dropped {
		fmt.Fprintf(&b, "# not carried over: %s\n", d)
	}
	if len(r.Values) == 0 {
		b.WriteString("{}\n")
		return b.Bytes(), nil
	}
	out, err := yaml.Marshal(r.Values)
	if err != nil {
		return nil, fmt.Errorf("encoding ripple's values: %w", err)
	}
	b.Write(out)
	return b.Bytes(), nil
}

type mapper struct {
	src map[string]any
	// used holds the paths read, as path.String renders them.
	used map[string]bool
	res  Result
}

// get returns the value at p, whether it is set, and marks it dealt with:
// dropRest does not report it.
func (m *mapper) get(p path) (any, bool) {
	m.used[p.String()] = true
	v := lookup(m.src, p)
	return v, !empty(v)
}

// changed returns the value at p when it is set to other than Reloader's
// default.
func (m *mapper) changed(p path) (any, bool) {
	v, ok := m.get(p)
	if _, hasDefault := reloaderDefaults[p.String()]; hasDefault {
		// false or 0 counts where Reloader's default is true or 1.
		return v, v != nil && !isDefault(p, v)
	}
	return v, ok
}

// set puts v at p in ripple's values.
func (m *mapper) set(p path, v any) {
	cur := m.res.Values
	for _, k := range p[:len(p)-1] {
		next, ok := cur[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			cur[k] = next
		}
		cur = next
	}
	cur[p[len(p)-1]] = v
}

// carry copies a value set to other than Reloader's default from one path
// to the other.
func (m *mapper) carry(from, to path) {
	if v, ok := m.changed(from); ok {
		m.set(to, v)
	}
}

func (m *mapper) note(format string, args ...any) {
	m.res.Notes = append(m.res.Notes, fmt.Sprintf(format, args...))
}

// drop reports a setting as not carried over. why never holds a value
// that may be a secret, such as an environment variable's.
func (m *mapper) drop(p path, why string) {
	m.used[p.String()] = true
	m.res.Dropped = append(m.res.Dropped, p.String()+": "+why)
}

// dropRest reports every set value nothing dealt with.
func (m *mapper) dropRest() {
	for _, p := range leaves(m.src, nil) {
		if m.dealtWith(p) {
			continue
		}
		if v := lookup(m.src, p); empty(v) || isDefault(p, v) || silent(p) {
			continue
		}
		m.drop(p, reasonFor(p))
	}
}

// dealtWith reports whether p or a map holding it was read.
func (m *mapper) dealtWith(p path) bool {
	for q := p; len(q) > 0; q = q[:len(q)-1] {
		if m.used[q.String()] {
			return true
		}
	}
	return false
}

func lookup(v any, p path) any {
	for _, k := range p {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[k]
	}
	return v
}

func isDefault(p path, v any) bool {
	name := p.String()
	if name == "image.name" || name == "image.repository" {
		// Reloader's own image, from any registry.
		s, _ := v.(string)
		return s == reloaderImage || strings.HasSuffix(s, "/"+reloaderImage)
	}
	d, ok := reloaderDefaults[name]
	return ok && reflect.DeepEqual(d, v)
}

func reasonFor(p path) string {
	for q := p; len(q) > 0; q = q[:len(q)-1] {
		if why, ok := reasons[q.String()]; ok {
			return why
		}
	}
	return noSuchSetting
}

// leaves lists the paths, under prefix, of every value in v that is not a
// map, and of empty maps.
func leaves(v any, prefix path) []path {
	mm, ok := v.(map[string]any)
	if !ok || (len(mm) == 0 && len(prefix) > 0) {
		return []path{prefix}
	}
	var out []path
	for k, child := range mm {
		out = append(out, leaves(child, prefix.child(k))...)
	}
	return out
}

// tooDeep reports whether v nests maps or lists more than limit deep. It
// stops at the limit, so that its own cost stays bounded.
func tooDeep(v any, limit int) bool {
	var children []any
	switch t := v.(type) {
	case map[string]any:
		for _, c := range t {
			children = append(children, c)
		}
	case []any:
		children = t
	default:
		return false
	}
	if limit == 0 {
		return true
	}
	for _, c := range children {
		if tooDeep(c, limit-1) {
			return true
		}
	}
	return false
}

// empty is Helm's notion: a value its templates treat as not set.
func empty(v any) bool {
	switch t := v.(type) {
	case nil:
		return true
	case bool:
		return !t
	case string:
		return t == ""
	case float64:
		return t == 0
	case []any:
		return len(t) == 0
	case map[string]any:
		return len(t) == 0
	}
	return false
}
