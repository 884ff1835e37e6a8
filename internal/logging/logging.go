// Package logging builds ripple's logr.Logger on zap, in the format and at
// the level the flags ask for.
package logging

import (
	"io"
	"slices"

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
	return zapr.NewLogger(zap.New(core, zap.AddCaller(), zap.ErrorOutput(out)))
}

// deferredCore keeps the fields a logger is given With until it writes a
// line. controller-runtime gives one to every reconcile, and zap's own
// core encodes them at once into a buffer of their own: over 10,000
// rollouts that was a ninth of all ripple allocated, for the one line in
// a few reconciles write. A field's value is read when a line is written.
type deferredCore struct {
	zapcore.Core
	fields []zapcore.Field
}

func (c deferredCore) With(fields []zapcore.Field) zapcore.Core {
	return deferredCore{Core: c.Core, fields: append(slices.Clip(c.fields), fields...)}
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
