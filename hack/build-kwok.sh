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

# What a build leaves in DEST, and so what the tools cache keeps.
FILES=(kwok)
for s in "${STAGES[@]}"; do FILES+=("stages/$(basename "${s}")"); done

STAMP_FILE="${DEST}/.kwok.stamp"
STAMP="$(stamp_of "${MOD}/go.mod" "${MOD}/go.sum" "${BASH_SOURCE[0]}")"
if up_to_date "${STAMP_FILE}" "${STAMP}" "${DEST}/kwok"; then
	log "kwok: ${VERSION} is up to date in ${DEST}"
	exit 0
fi

mkdir -p "${DEST}/stages"
rm -f "${STAMP_FILE}"
if restore_from_cache kwok "${STAMP}" "${DEST}" "${FILES[@]}"; then
	echo "${STAMP}" >"${STAMP_FILE}"
	exit 0
fi

log "kwok: building ${VERSION} into ${DEST}"
cd "${MOD}"
go build -trimpath -ldflags="-s -w" -o "${DEST}/kwok" sigs.k8s.io/kwok/cmd/kwok
src="$(go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)"
for s in "${STAGES[@]}"; do
	install -m 0644 "${src}/kustomize/stage/${s}" "${DEST}/stages/$(basename "${s}")"
done
echo "${STAMP}" >"${STAMP_FILE}"
save_to_cache kwok "${STAMP}" "${DEST}" "${FILES[@]}"
log "kwok: built ${VERSION}"
