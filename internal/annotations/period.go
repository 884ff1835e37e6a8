package annotations

import (
	"fmt"
	"time"
)

// MaxPeriod bounds the periods a workload is held for (a pause period, a
// minimum rollout interval): a longer one is a mistake (a missing unit
// reads as nanoseconds, an extra digit as days), and a workload held for
// it would silently miss its config for that long.
const MaxPeriod = 24 * time.Hour

// Period reads a hold period of a workload from its metadata, under key.
// Absent, def applies. A value that is not a Go duration, negative, or
// longer than MaxPeriod is a Problem, and def applies; "0" turns a
// default period off for the workload.
func Period(metadata map[string]string, key string, def time.Duration) (time.Duration, *Problem) {
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
	case d > MaxPeriod:
		reason = fmt.Sprintf("is longer than %s", MaxPeriod)
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
