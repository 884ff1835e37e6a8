#!/usr/bin/env bash
# Builds kwok at the version pinned by hack/tools/kwok/go.mod into
# bin/kwok/<version>-<os>-<arch>/, together with the node and pod Stage
# definitions from the same module: the kwok binary simulates nothing
# without them.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

MOD="${ROOT}/hack/tools/kwok"
DEST="$(kwok_assets_dir)"
VERSION="v$(kwok_version)"
# node-initialize makes a node Ready, the lease heartbeat keeps it so, and the
# pod stages run, finish and delete pods: the set kwokctl uses by default.
STAGES=(
	node/fast/node-initialize.yaml
	node/heartbeat-with-lease/node-heartbeat-with-lease.yaml
	pod/fast/pod-ready.yaml
	pod/fast/pod-complete.yaml
	pod/fast/pod-delete.yaml
)

STAMP_FILE="${DEST}/.kwok.stamp"
STAMP="$(stamp_of "${MOD}/go.mod" "${MOD}/go.sum" "${BASH_SOURCE[0]}")"
if up_to_date "${STAMP_FILE}" "${STAMP}" "${DEST}/kwok"; then
	log "kwok: ${VERSION} is up to date in ${DEST}"
	exit 0
fi

log "kwok: building ${VERSION} into ${DEST}"
mkdir -p "${DEST}/stages"
rm -f "${STAMP_FILE}"
cd "${MOD}"
go build -trimpath -ldflags="-s -w" -o "${DEST}/kwok" sigs.k8s.io/kwok/cmd/kwok
src="$(go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)"
for s in "${STAGES[@]}"; do
	install -m 0644 "${src}/kustomize/stage/${s}" "${DEST}/stages/$(basename "${s}")"
done
echo "${STAMP}" >"${STAMP_FILE}"
log "kwok: built ${VERSION}"
