package procs

import (
	"os"
	"runtime"
	"testing"
)

func TestLimit(t *testing.T) {
	tests := []struct {
		name string
		env  string // "" unsets GOMAXPROCS
		want int
	}{
		{"runs on one P when the environment sets no GOMAXPROCS", "", Default},
		{"leaves a GOMAXPROCS of the environment alone", "3", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
			t.Setenv("GOMAXPROCS", tt.env)
			if tt.env == "" {
				if err := os.Unsetenv("GOMAXPROCS"); err != nil {
					t.Fatal(err)
				}
			} else {
				// The runtime reads the environment at start only.
				runtime.GOMAXPROCS(tt.want)
			}
			if got := Limit(); got != tt.want {
				t.Errorf("Limit() = %d, want %d", got, tt.want)
			}
			if got := runtime.GOMAXPROCS(0); got != tt.want {
				t.Errorf("GOMAXPROCS after Limit = %d, want %d", got, tt.want)
			}
		})
	}
}
