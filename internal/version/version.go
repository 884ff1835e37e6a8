// Package version holds ripple's version, stamped at build time through
// -ldflags "-X github.com/ripple-controller/ripple/internal/version.Version=...".
package version

// Version is ripple's release version; "dev" for a build without ldflags.
var Version = "dev"
