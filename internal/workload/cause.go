package workload

import "regexp"

// A cause read back from a run's or a recreation's annotation goes into
// logs, alerts, an Event and the new Job's annotations, and anyone who may
// edit the workload can write it. So only a cause of the form ripple
// writes is read back: object names, their changed keys, and plain words
// around them. Any other, a chat mention or a link written by hand say,
// reads as unnamedCause.

// maxCause bounds a cause read back; ripple's own are shorter (the
// controller's describe).
const maxCause = 1024

// unnamedCause stands for a cause ripple did not write.
const unnamedCause = "its config"

var causeForm = func() *regexp.Regexp {
	const (
		kind   = `(?:ConfigMap|Secret|SecretProviderClass)`
		key    = `[-._a-zA-Z0-9]+`
		more   = ` and [0-9]+ more`
		object = `(?:` + kind + `/[a-z0-9][-a-z0-9.]*|a ` + kind + ` of record bucket #[0-9]+)` +
			`(?: \(keys ` + key + `(?:, ` + key + `)*(?:` + more + `)?\))?`
		words = `[a-z' ]+`
	)
	const list = object + `(?:, ` + object + `)*(?:,` + more + `)?`
	return regexp.MustCompile(`^(?:` + words + ` \(` + words + `\): (?:` + list + `|` + words + `)|` + list + `)(?: \(` + words + `\))?$`)
}()

// readCause returns cause if ripple could have written it, else
// unnamedCause.
func readCause(cause string) string {
	if len(cause) > maxCause || !causeForm.MatchString(cause) {
		return unnamedCause
	}
	return cause
}
