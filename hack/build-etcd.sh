#!/usr/bin/env bash
# Builds etcd at the version pinned by hack/tools/etcd/go.mod into the
# control-plane assets directory, next to kube-apiserver, where envtest looks
# for it.
#
# If KUBEBUILDER_ASSETS names another directory, nothing is built: its etcd is
# used instead and only its presence is checked.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

MOD="${ROOT}/hack/tools/etcd"
DEST="$(kube_assets_dir)"

if [[ -n "${KUBEBUILDER_ASSETS:-}" && "${KUBEBUILDER_ASSETS}" != "${DEST}" ]]; then
	[[ -x "${KUBEBUILDER_ASSETS}/etcd" ]] || die "KUBEBUILDER_ASSETS=${KUBEBUILDER_ASSETS} has no executable etcd"
	log "etcd: using the binary from KUBEBUILDER_ASSETS=${KUBEBUILDER_ASSETS}"
	exit 0
fi

VERSION="v$(etcd_version)"
STAMP_FILE="${DEST}/.etcd.stamp"
STAMP="$(stamp_of "${MOD}/go.mod" "${MOD}/go.sum" "${MOD}/main.go" "${BASH_SOURCE[0]}")"
if up_to_date "${STAMP_FILE}" "${STAMP}" "${DEST}/etcd"; then
	log "etcd: ${VERSION} is up to date in ${DEST}"
	exit 0
fi

mkdir -p "${DEST}"
rm -f "${STAMP_FILE}"
if restore_from_cache etcd "${STAMP}" "${DEST}" etcd; then
	echo "${STAMP}" >"${STAMP_FILE}"
	exit 0
fi

log "etcd: building ${VERSION} into ${DEST}"
cd "${MOD}"
go build -trimpath -ldflags="-s -w" -o "${DEST}/etcd" .
echo "${STAMP}" >"${STAMP_FILE}"
save_to_cache etcd "${STAMP}" "${DEST}" etcd
log "etcd: built ${VERSION}"
