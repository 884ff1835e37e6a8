package logging

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

func TestNew_NeverLogsAPIBodies(t *testing.T) {
	for _, format := range []string{"json", "text"} {
		log, err := New(format, 10)
		if err != nil {
			t.Fatal(err)
		}
		// client-go logs request and response bodies, Secrets' included, at V(8).
		if log.V(8).Enabled() {
			t.Errorf("%s: V(8) is enabled at the most verbose level", format)
		}
		if !log.V(MaxVerbosity).Enabled() {
			t.Errorf("%s: V(%d) is not enabled at the most verbose level", format, MaxVerbosity)
		}
	}
	log, err := New("json", 0)
	if err != nil {
		t.Fatal(err)
	}
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

// logged returns the lines a logger made by New writes to stderr for one
// info line and one debug line.
func logged(t *testing.T, format string, verbosity int) []string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := os.Stderr
	os.Stderr = w
	log, err := New(format, verbosity)
	os.Stderr = stderr
	if err != nil {
		t.Fatal(err)
	}
	log.Info("an info line", "k", "v")
	log.V(1).Info("a debug line")
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var lines []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}
