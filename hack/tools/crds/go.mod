// Module crds pins the third-party CRDs the tests install: the Argo Rollouts
// Rollout and the CSI secrets store's SecretProviderClass and
// SecretProviderClassPodStatus, each from its project's own Go module.
// hack/build-crds.sh copies them into bin/crds/; nothing is built or imported.
module github.com/ripple-controller/ripple/hack/tools/crds

go 1.26.0

require (
	github.com/argoproj/argo-rollouts v1.10.1
	sigs.k8s.io/secrets-store-csi-driver v1.5.3
)
