// Package logging builds ripple's logr.Logger on zap, in the format and at
// the level the flags ask for.
package logging

import (
	"io"

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
	return zapr.NewLogger(zap.New(zapcore.NewCore(encoder, out, level), zap.AddCaller(), zap.ErrorOutput(out)))
}
