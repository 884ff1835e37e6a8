// Package migrate turns the values of stakater/Reloader's Helm chart into
// values for ripple's chart (charts/ripple): `ripple migrate-values`.
//
// Each Reloader setting that ripple's chart has is carried over under
// ripple's name for it, following what Reloader's templates do with the
// value rather than its name alone: a setting Reloader's chart ignores in
// the given combination is not carried over either. Every other setting
// given a value other than Reloader's default gets a comment line saying
// why it is not carried over, so nothing a user set disappears silently.
// Keys that are no setting of Reloader's chart are refused.
package migrate
