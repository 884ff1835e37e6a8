package logging

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
)

func TestNew_NeverLogsAPIBodies(t *testing.T) {
	for _, format := range []string{"json", "text"} {
		log := New(io.Discard, format, 10)
		// client-go logs request and response bodies, Secrets' included, at V(8).
		if log.V(8).Enabled() {
			t.Errorf("%s: V(8) is enabled at the most verbose level", format)
		}
		if !log.V(MaxVerbosity).Enabled() {
			t.Errorf("%s: V(%d) is not enabled at the most verbose level", format, MaxVerbosity)
		}
	}
	log := New(io.Discard, "json", 0)
	if log.V(1).Enabled() || !log.V(0).Enabled() {
		t.Error("verbosity 0 does not log exactly Info")
	}
}

func TestNew_WritesTheFormatAndLevelAsked(t *testing.T) {
	tests := []struct {
		format    string
		verbosity int
		isJSON    bool
		debug     bool
	}{
		{"json", 0, true, false},
		{"json", 1, true, true},
		{"text", 0, false, false},
		{"text", 1, false, true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s at %d", tt.format, tt.verbosity), func(t *testing.T) {
			lines := logged(t, tt.format, tt.verbosity)
			if !slices.ContainsFunc(lines, contains("an info line")) {
				t.Fatalf("the info line is missing: %q", lines)
			}
			if got := slices.ContainsFunc(lines, contains("a debug line")); got != tt.debug {
				t.Errorf("debug line logged: %v, want %v (%q)", got, tt.debug, lines)
			}
			for _, l := range lines {
				if json.Valid([]byte(l)) != tt.isJSON {
					t.Errorf("%q is JSON: %v, want %v", l, !tt.isJSON, tt.isJSON)
				}
			}
		})
	}
}

func contains(sub string) func(string) bool {
	return func(s string) bool { return strings.Contains(s, sub) }
}

// logged returns the lines a logger made by New writes for one info line
// and one debug line.
func logged(t *testing.T, format string, verbosity int) []string {
	t.Helper()
	var out strings.Builder
	log := New(&out, format, verbosity)
	log.Info("an info line", "k", "v")
	log.V(1).Info("a debug line")
	return strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
}

func TestNew_WritesTheValuesALoggerWasGivenOnEachOfItsLinesFirst(t *testing.T) {
	var out strings.Builder
	base := New(&out, "json", 1)
	log := base.WithValues("controller", "deployment").WithName("sub").WithValues("reconcileID", "r1")
	log.Info("first", "k", "v")
	log.V(1).Info("second")
	base.Info("third")

	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("got %d lines, want 3: %q", len(lines), lines)
	}
	for i, want := range []string{`"controller":"deployment","reconcileID":"r1","k":"v"}`, `"controller":"deployment","reconcileID":"r1"}`} {
		if !strings.HasSuffix(lines[i], want) || !strings.Contains(lines[i], `"logger":"sub"`) {
			t.Errorf("line %d = %s, want the logger's name and to end %s", i, lines[i], want)
		}
	}
	if strings.Contains(lines[2], "controller") {
		t.Errorf("the base logger wrote a value given to a logger made from it: %s", lines[2])
	}
}

func TestNew_KeepsTheValuesOfSiblingLoggersApart(t *testing.T) {
	var out strings.Builder
	parent := New(&out, "json", 0).WithValues("a", "1").WithValues("b", "2").WithValues("c", "3")
	one, two := parent.WithValues("child", "one"), parent.WithValues("child", "two")
	one.Info("first")
	two.Info("second")

	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	for i, want := range []string{`"a":"1","b":"2","c":"3","child":"one"}`, `"a":"1","b":"2","c":"3","child":"two"}`} {
		if i >= len(lines) || !strings.HasSuffix(lines[i], want) {
			t.Errorf("line %d = %q, want it to end %s", i, lines, want)
		}
	}
}

func TestNew_WritesAValueThatMayChangeAsItWasGiven(t *testing.T) {
	var out strings.Builder
	held := map[string]string{"k": "before"}
	log := New(&out, "json", 0).WithValues("held", held)
	held["k"] = "after"
	log.Info("line")
	if !strings.Contains(out.String(), `"held":{"k":"before"}`) {
		t.Errorf("the line shows the map as changed after it was given: %s", out.String())
	}
}
