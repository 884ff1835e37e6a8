// Package controller is the part of ripple that talks to the API server.
//
// The path of one change, file by file:
//
//   - setup.go wires it. Setup builds one watch of ConfigMaps and one of
//     Secrets (watchConfig), then one controller per workload type the
//     cluster serves; Reconciler.SetupWithManager lists everything that
//     queues a workload.
//   - csi.go: with --enable-csi-integration, one more watch, of the
//     SecretProviderClassPodStatus objects the secrets store CSI driver
//     writes; a SecretProviderClass is tracked through them.
//   - configcache.go: ripple's own informers hold a compact copy of the
//     metadata of ConfigMaps and Secrets, so unused objects cost about 300
//     bytes, the store's index included, and no data is ever cached; cache.go configures
//     controller-runtime's cache, of the workloads.
//   - handler.go: the one handler per informer (fanout) drops an update that
//     repeats a resourceVersion (a resync), looks "kind/namespace/name" up in
//     refIndex (index.go) and queues each workload found, keyed by workload,
//     after the debounce window.
//   - view.go: what ripple needs of one version of a workload (policy,
//     references, record, index values) is computed once and shared by the
//     index, the predicates and Reconcile.
//   - reconcile.go: Reconcile reads the pod template a workload borrows
//     from another (an Argo Rollout's workloadRef, borrowed), the tracked
//     objects (tracked.go) and their digests, one GET per object version
//     (digests.go), compares them with the record (recorded.go, fold.go):
//     unchanged means no write, first sight means record only, a change
//     means one merge patch of the record and the pod template's stamp (or
//     what the type's Roll writes with the record). A lost record or one under an unknown key is
//     handled from the evidence the workload carries (evidence.go); a
//     creation is told from a change by births.go.
package controller
