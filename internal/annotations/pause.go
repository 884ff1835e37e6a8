package annotations

import (
	"fmt"
	"time"
)

// MaxPausePeriod bounds a pause period: a longer one is a mistake (a
// missing unit reads as nanoseconds, an extra digit as days), and a
// workload paused for it would silently miss its config for that long.
const MaxPausePeriod = 24 * time.Hour

// Pause reads the pause period of a workload from its metadata, under key.
// Absent, def applies. A value that is not a Go duration, negative, or
// longer than MaxPausePeriod is a Problem, and def applies; "0" turns a
// default pause off for the workload.
func Pause(metadata map[string]string, key string, def time.Duration) (time.Duration, *Problem) {
	v, ok := metadata[key]
	if !ok || key == "" {
		return def, nil
	}
	d, err := time.ParseDuration(v)
	reason := ""
	switch {
	case err != nil:
		reason = "is not a duration such as 30s or 5m"
	case d < 0:
		reason = "is negative"
	case d > MaxPausePeriod:
		reason = fmt.Sprintf("is longer than %s", MaxPausePeriod)
	default:
		return d, nil
	}
	return def, &Problem{Annotation: key, Value: Shorten(v, maxQuoted),
		Reason: fmt.Sprintf("%s; %s applies", reason, def)}
}

// PausedSince reads when ripple paused a workload, from its metadata under
// key. ok is false without the annotation; err says it is unreadable, and
// then the pause is over.
func PausedSince(metadata map[string]string, key string) (at time.Time, ok bool, err error) {
	v, ok := metadata[key]
	if !ok || key == "" {
		return time.Time{}, false, nil
	}
	at, err = time.Parse(time.RFC3339, v)
	if err != nil {
		return time.Time{}, true, fmt.Errorf("%s %q is not an RFC 3339 time", key, Shorten(v, maxQuoted))
	}
	return at, true, nil
}
