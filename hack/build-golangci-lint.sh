#!/usr/bin/env bash
# Installs golangci-lint at GOLANGCI_LINT_VERSION into bin/. Its own go.mod is
# used as is (go install pkg@version), as its authors support; the module
# version recorded in the binary tells whether it is current.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

GOLANGCI_LINT_VERSION="${GOLANGCI_LINT_VERSION:-v2.15.0}"
MODULE=github.com/golangci/golangci-lint/v2
BINARY="${BIN}/golangci-lint"
# go install pkg@version builds from the module's own go.mod: the version is
# all the input there is, besides this script and Go.
STAMP="$(stamp_of "${BASH_SOURCE[0]}" <(echo "${MODULE}@${GOLANGCI_LINT_VERSION}"))"

if [[ -x "${BINARY}" ]] && go version -m "${BINARY}" | awk -v m="${MODULE}" -v v="${GOLANGCI_LINT_VERSION}" '$1 == "mod" && $2 == m && $3 == v { ok = 1 } END { exit !ok }'; then
	log "golangci-lint: ${GOLANGCI_LINT_VERSION} is up to date in ${BINARY}"
	exit 0
fi

mkdir -p "${BIN}"
if restore_from_cache golangci-lint "${STAMP}" "${BIN}" golangci-lint; then
	exit 0
fi

log "golangci-lint: installing ${GOLANGCI_LINT_VERSION} into ${BIN}"
GOBIN="${BIN}" go install -trimpath -ldflags="-s -w" "${MODULE}/cmd/golangci-lint@${GOLANGCI_LINT_VERSION}"
save_to_cache golangci-lint "${STAMP}" "${BIN}" golangci-lint
log "golangci-lint: installed ${GOLANGCI_LINT_VERSION}"
