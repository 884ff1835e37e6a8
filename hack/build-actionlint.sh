#!/usr/bin/env bash
# Builds actionlint at the version pinned by hack/tools/actionlint/go.mod into
# bin/actionlint. `make verify` runs it over .github/workflows, whose
# workflows cannot run here.
#
# The build is skipped when bin/actionlint was built from exactly these inputs,
# and replaced by a copy from the tools cache (lib.sh) when one was built
# elsewhere.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

MOD="${ROOT}/hack/tools/actionlint"
BINARY="${BIN}/actionlint"
STAMP_FILE="${BIN}/.actionlint.stamp"
VERSION="v$(mod_version "${MOD}" github.com/rhysd/actionlint)"
STAMP="$(stamp_of "${MOD}/go.mod" "${MOD}/go.sum" "${BASH_SOURCE[0]}")"

if up_to_date "${STAMP_FILE}" "${STAMP}" "${BINARY}"; then
	log "actionlint: ${VERSION} is up to date in ${BINARY}"
	exit 0
fi

mkdir -p "${BIN}"
rm -f "${STAMP_FILE}"
if restore_from_cache actionlint "${STAMP}" "${BIN}" actionlint; then
	echo "${STAMP}" >"${STAMP_FILE}"
	exit 0
fi

log "actionlint: building ${VERSION} into ${BINARY}"
cd "${MOD}"
go build -trimpath -ldflags="-s -w -X github.com/rhysd/actionlint.version=${VERSION}" -o "${BINARY}" github.com/rhysd/actionlint/cmd/actionlint
echo "${STAMP}" >"${STAMP_FILE}"
save_to_cache actionlint "${STAMP}" "${BIN}" actionlint
log "actionlint: built ${VERSION}"
