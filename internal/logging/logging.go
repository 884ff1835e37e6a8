// Package logging builds ripple's logr.Logger on zap, in the format and at
// the level the flags ask for.
package logging

import (
	"io"
	"reflect"
	"slices"
	"sync"

	"github.com/go-logr/logr"
	"github.com/go-logr/zapr"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// MaxVerbosity is the most detail ripple ever logs, whatever the flags say:
// client-go logs the bodies of API requests and responses at V(8), and a
// body of a LIST of Secrets (the informer's, whenever it lists instead of
// streaming) holds every Secret's value.
const MaxVerbosity = 7

// New returns a logger writing JSON, or text when format is "text", to w:
// the binary passes stderr, the test suites their own writer. verbosity is
// logr's: 0 logs Info, 1 adds V(1) debug lines, negative keeps warnings and
// errors; it is capped at MaxVerbosity.
func New(w io.Writer, format string, verbosity int) logr.Logger {
	enc := zap.NewProductionEncoderConfig()
	enc.EncodeTime = zapcore.ISO8601TimeEncoder
	var encoder zapcore.Encoder
	if format == "text" {
		enc.EncodeLevel = zapcore.CapitalLevelEncoder
		encoder = zapcore.NewConsoleEncoder(enc)
	} else {
		encoder = zapcore.NewJSONEncoder(enc)
	}
	out := zapcore.Lock(zapcore.AddSync(w))
	level := zapcore.Level(-min(verbosity, MaxVerbosity))
	core := deferredCore{Core: zapcore.NewCore(encoder, out, level)}
	// No caller on the lines: every message is a constant that a search
	// finds, and looking the caller up took a fiftieth of ripple's CPU
	// per rollout in the bench (scenario e).
	return zapr.NewLogger(zap.New(core, zap.ErrorOutput(out)))
}

// deferredCore keeps the fields a logger is given With until it writes a
// line, when none of them can change meanwhile (settled). controller-runtime
// gives every reconcile a few, which zap's own core encodes at once into a
// buffer of their own: over the 10,000 rollouts of the bench's fan-out that
// was a ninth of all ripple allocated, for the one line that a few
// reconciles write.
type deferredCore struct {
	zapcore.Core
	fields []zapcore.Field
}

func (c deferredCore) With(fields []zapcore.Field) zapcore.Core {
	all := append(slices.Clip(c.fields), fields...)
	if !slices.ContainsFunc(fields, unsettled) {
		return deferredCore{Core: c.Core, fields: all}
	}
	return deferredCore{Core: c.Core.With(all)}
}

func (c deferredCore) Check(ent zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(ent.Level) {
		return ce.AddCore(ent, c)
	}
	return ce
}

func (c deferredCore) Write(ent zapcore.Entry, fields []zapcore.Field) error {
	return c.Core.Write(ent, append(slices.Clip(c.fields), fields...))
}

// Level keeps zap from probing each level to find the core's.
func (c deferredCore) Level() zapcore.Level { return zapcore.LevelOf(c.Core) }

// unsettled reports whether a field's value may change after With: bytes,
// errors, marshalers, and any value holding a pointer, map, slice or
// interface, which zap would read only when a line is written.
func unsettled(f zapcore.Field) bool {
	switch f.Type {
	case zapcore.ReflectType, zapcore.StringerType:
		return f.Interface != nil && !valueOnly(reflect.TypeOf(f.Interface))
	case zapcore.BinaryType, zapcore.ByteStringType, zapcore.ErrorType, zapcore.ArrayMarshalerType,
		zapcore.ObjectMarshalerType, zapcore.InlineMarshalerType:
		return true
	}
	return false
}

// valueOnly reports whether a value of type t is all its own: no pointer,
// map, slice, interface, channel or function anywhere in it. A string is
// immutable.
func valueOnly(t reflect.Type) bool {
	if known, ok := valueOnlyTypes.Load(t); ok {
		return known.(bool)
	}
	var ok bool
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128, reflect.String:
		ok = true
	case reflect.Array:
		ok = valueOnly(t.Elem())
	case reflect.Struct:
		ok = true
		for i := range t.NumField() {
			ok = ok && valueOnly(t.Field(i).Type)
		}
	}
	valueOnlyTypes.Store(t, ok)
	return ok
}

// valueOnlyTypes caches valueOnly by type: a few types recur on every line.
var valueOnlyTypes sync.Map
