#!/usr/bin/env bash
# Builds kube-apiserver, kube-controller-manager and kube-scheduler at the
# version pinned by hack/tools/kube/go.mod into the control-plane assets
# directory (see kube_assets_dir in lib.sh).
#
# If KUBEBUILDER_ASSETS names another directory, nothing is built: those
# binaries are used instead and only their presence is checked.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

BINARIES=(kube-apiserver kube-controller-manager kube-scheduler)
MOD="${ROOT}/hack/tools/kube"
DEST="$(kube_assets_dir)"

if [[ -n "${KUBEBUILDER_ASSETS:-}" && "${KUBEBUILDER_ASSETS}" != "${DEST}" ]]; then
	for b in "${BINARIES[@]}"; do
		[[ -x "${KUBEBUILDER_ASSETS}/${b}" ]] || die "KUBEBUILDER_ASSETS=${KUBEBUILDER_ASSETS} has no executable ${b}"
	done
	log "kube: using binaries from KUBEBUILDER_ASSETS=${KUBEBUILDER_ASSETS}"
	exit 0
fi

VERSION="v$(kube_version)"
STAMP_FILE="${DEST}/.kube.stamp"
STAMP="$(stamp_of "${MOD}/go.mod" "${MOD}/go.sum" "${BASH_SOURCE[0]}")"
if up_to_date "${STAMP_FILE}" "${STAMP}" "${BINARIES[@]/#/${DEST}/}"; then
	log "kube: ${VERSION} is up to date in ${DEST}"
	exit 0
fi

mkdir -p "${DEST}"
rm -f "${STAMP_FILE}"
if restore_from_cache kube "${STAMP}" "${DEST}" "${BINARIES[@]}"; then
	echo "${STAMP}" >"${STAMP_FILE}"
	exit 0
fi

# The same version stamping as Kubernetes' own release builds, so that
# /version and the components' compatibility checks see a real release.
major="${VERSION#v}" && major="${major%%.*}"
minor="${VERSION#v*.}" && minor="${minor%%.*}"
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
	ldflags+=" -X ${pkg}.gitVersion=${VERSION} -X ${pkg}.gitMajor=${major} -X ${pkg}.gitMinor=${minor}"
	ldflags+=" -X ${pkg}.gitTreeState=clean -X ${pkg}.buildDate=1970-01-01T00:00:00Z"
done

log "kube: building ${VERSION} (${BINARIES[*]}) into ${DEST}; a cold build takes several minutes"
cd "${MOD}"
pkgs=()
for b in "${BINARIES[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/${b}"); done
go build -trimpath -ldflags="${ldflags}" -o "${DEST}/" "${pkgs[@]}"
echo "${STAMP}" >"${STAMP_FILE}"
save_to_cache kube "${STAMP}" "${DEST}" "${BINARIES[@]}"
log "kube: built ${VERSION}"
