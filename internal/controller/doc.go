// Package controller is the part of ripple that talks to the API server.
//
// The path of one change: the informer cache reduces each ConfigMap's and
// Secret's data to a digest on the way in; an update whose digest and
// relevant annotations did not move stops at a predicate; otherwise a field
// index maps "kind/namespace/name" to the workloads that use the object, and
// each is queued, keyed by workload, after the debounce window. Reconcile then
// compares the digests of everything the workload tracks with the record on
// the workload: unchanged means no write, first sight means record only, a
// change means one merge patch of the pod template's digest annotation.
package controller
