package controller

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ripple-controller/ripple/internal/annotations"
	"github.com/ripple-controller/ripple/internal/refs"
)

func TestShorten_FitsTheNoteLimitAtARuneBoundary(t *testing.T) {
	for _, s := range []string{
		"short",
		strings.Repeat("a", noteLimit),
		strings.Repeat("a", noteLimit+1),
		strings.Repeat("é", noteLimit),
		"x" + strings.Repeat("🌊", noteLimit),
	} {
		got := annotations.Shorten(s, noteLimit)
		if len(got) > noteLimit || !utf8.ValidString(got) {
			t.Errorf("Shorten(%d bytes) = %d bytes, valid UTF-8 %v", len(s), len(got), utf8.ValidString(got))
		}
		if len(s) <= noteLimit && got != s {
			t.Errorf("shorten changed a note that fits")
		}
		if len(s) > noteLimit && !strings.HasSuffix(got, "...") {
			t.Errorf("shorten did not mark the cut: %q", got[len(got)-10:])
		}
	}
}

func TestDescribe_LongNamesLeaveRoomForTheCount(t *testing.T) {
	var causes []refs.Ref
	for i := range 6 {
		causes = append(causes, refs.Ref{Kind: refs.ConfigMap, Name: strings.Repeat(string(rune('a'+i)), 253)})
	}
	got := describe(causes, nil)
	if !strings.HasSuffix(got, " more") || len("Rolled because "+got+" changed") > noteLimit {
		t.Errorf("describe = %d bytes ending %q", len(got), got[len(got)-20:])
	}
	if got := describe(causes[:1], nil); got != causes[0].String() {
		t.Errorf("a single long name is cut: %q", got)
	}
	short := []refs.Ref{{Kind: refs.ConfigMap, Name: "a"}, {Kind: refs.Secret, Name: "b"}}
	if got := describe(short, nil); got != "ConfigMap/a, Secret/b" {
		t.Errorf("describe = %q", got)
	}
}

func TestDescribe_ManyLongChangedKeysFitTheNote(t *testing.T) {
	cm := refs.Ref{Kind: refs.ConfigMap, Name: "cfg"}
	var keys []string
	for i := range 1000 {
		keys = append(keys, fmt.Sprintf("%03d", i)+strings.Repeat("k", 250))
	}
	tests := []struct {
		name string
		keys []string
		want string
	}{
		{"a few short keys, all named", []string{"a", "b"}, "ConfigMap/cfg (keys a, b)"},
		{"a thousand keys of 253 bytes", keys, " and 999 more)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := describe([]refs.Ref{cm}, map[refs.Ref][]string{cm: tt.keys})
			if !strings.HasSuffix(got, tt.want) || len("Rolled because "+got+" changed") > noteLimit {
				t.Errorf("describe = %d bytes ending %q, want the end %q within the note", len(got), got[max(0, len(got)-30):], tt.want)
			}
		})
	}
}
