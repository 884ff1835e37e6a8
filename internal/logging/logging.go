// Package logging builds ripple's logr.Logger on zap, in the format and at
// the level the flags ask for.
package logging

import (
	"fmt"

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

// New returns a logger writing JSON or text to stderr. verbosity is logr's:
// 0 logs Info, 1 adds V(1) debug lines, negative keeps warnings and errors;
// it is capped at MaxVerbosity.
func New(format string, verbosity int) (logr.Logger, error) {
	cfg := zap.NewProductionConfig()
	cfg.Sampling = nil
	cfg.DisableStacktrace = true
	cfg.EncoderConfig.EncodeTime = zapcore.ISO8601TimeEncoder
	cfg.Level = zap.NewAtomicLevelAt(zapcore.Level(-min(verbosity, MaxVerbosity)))
	if format == "text" {
		cfg.Encoding = "console"
		cfg.EncoderConfig.EncodeLevel = zapcore.CapitalLevelEncoder
	}
	z, err := cfg.Build()
	if err != nil {
		return logr.Discard(), fmt.Errorf("building the logger: %w", err)
	}
	return zapr.NewLogger(z), nil
}
