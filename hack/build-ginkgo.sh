#!/usr/bin/env bash
# Builds the Ginkgo CLI into bin/ at the version ripple's go.mod requires, so
# that the CLI and the library the suites link agree. `make test-integration`
# uses it to run test/integration in parallel processes (ginkgo -p).
#
# The build is skipped when the module version recorded in bin/ginkgo is that
# one. The tools cache (lib.sh) is keyed by all of ripple's go.mod and go.sum
# instead, which also pin the versions of the CLI's other dependencies.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

MODULE=github.com/onsi/ginkgo/v2
VERSION="v$(mod_version "${ROOT}" "${MODULE}")"
BINARY="${BIN}/ginkgo"
STAMP="$(stamp_of "${ROOT}/go.mod" "${ROOT}/go.sum" "${BASH_SOURCE[0]}")"

if [[ -x "${BINARY}" ]] && go version -m "${BINARY}" | awk -v m="${MODULE}" -v v="${VERSION}" '$1 == "mod" && $2 == m && $3 == v { ok = 1 } END { exit !ok }'; then
	log "ginkgo: ${VERSION} is up to date in ${BINARY}"
	exit 0
fi

mkdir -p "${BIN}"
if restore_from_cache ginkgo "${STAMP}" "${BIN}" ginkgo; then
	exit 0
fi

log "ginkgo: building ${VERSION} into ${BIN}"
cd "${ROOT}"
go build -trimpath -ldflags="-s -w" -o "${BINARY}" "${MODULE}/ginkgo"
save_to_cache ginkgo "${STAMP}" "${BIN}" ginkgo
log "ginkgo: built ${VERSION}"
