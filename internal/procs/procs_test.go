package procs

import (
	"runtime"
	"testing"
)

func TestLimit(t *testing.T) {
	tests := []struct {
		name string
		env  string
		// running is the GOMAXPROCS the runtime took from env at start.
		running, want int
	}{
		{"runs on one P when the environment sets no GOMAXPROCS", "", 2, Default},
		{"runs on one P when the environment's GOMAXPROCS is malformed, as the runtime ignores it", "many", 2, Default},
		{"leaves a GOMAXPROCS of the environment alone", "3", 3, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
			t.Setenv("GOMAXPROCS", tt.env)
			runtime.GOMAXPROCS(tt.running)
			if got := Limit(); got != tt.want {
				t.Errorf("Limit() = %d, want %d", got, tt.want)
			}
			if got := runtime.GOMAXPROCS(0); got != tt.want {
				t.Errorf("GOMAXPROCS after Limit = %d, want %d", got, tt.want)
			}
		})
	}
}
