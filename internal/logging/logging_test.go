package logging

import "testing"

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
