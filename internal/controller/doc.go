// Package controller is the part of ripple that talks to the API server.
//
// The path of one change: the informer cache holds only the trimmed metadata
// of ConfigMaps and Secrets, so unused objects cost a few hundred bytes and
// no data is ever cached; an update that repeats a resourceVersion stops at a
// predicate; otherwise a field index maps "kind/namespace/name" to the
// workloads that use the object, and each is queued, keyed by workload, after
// the debounce window. Reconcile then compares the digests of everything the
// workload tracks, read once per object version (digests.go), with the record
// on the workload: unchanged means no write (a labels-only edit ends here),
// first sight means record only, a change means one merge patch of the pod
// template's digest annotation.
package controller
