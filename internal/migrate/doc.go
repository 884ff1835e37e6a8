// Package migrate turns the values of stakater/Reloader's Helm chart into
// values for ripple's chart (charts/ripple): `ripple migrate-values`.
//
// Each Reloader setting that ripple's chart has is carried over under
// ripple's name for it. Every other setting given a value other than
// Reloader's default gets a comment line saying why it is not carried
// over, so nothing a user set disappears silently.
package migrate
