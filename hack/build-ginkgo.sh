#!/usr/bin/env bash
# Builds the Ginkgo CLI into bin/ at the version ripple's go.mod requires, so
# that the CLI and the library the suites link agree. `make test-integration`
# uses it to run test/integration in parallel processes (ginkgo -p).
#
# The build is skipped when the module version recorded in bin/ginkgo is that
# one.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

MODULE=github.com/onsi/ginkgo/v2
VERSION="v$(mod_version "${ROOT}" "${MODULE}")"
BINARY="${BIN}/ginkgo"

if [[ -x "${BINARY}" ]] && go version -m "${BINARY}" | awk -v m="${MODULE}" -v v="${VERSION}" '$1 == "mod" && $2 == m && $3 == v { ok = 1 } END { exit !ok }'; then
	log "ginkgo: ${VERSION} is up to date in ${BINARY}"
	exit 0
fi

log "ginkgo: building ${VERSION} into ${BIN}"
mkdir -p "${BIN}"
cd "${ROOT}"
go build -trimpath -ldflags="-s -w" -o "${BINARY}" "${MODULE}/ginkgo"
log "ginkgo: built ${VERSION}"
