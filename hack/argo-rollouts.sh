#!/usr/bin/env bash
# Builds the Argo Rollouts controller, at the version hack/tools/crds pins,
# into bin/argo-rollouts/<version>/, with all of its CRDs under crds/, for
# `make test-e2e-argo`. Not a hack/build-*.sh script on purpose: `make
# tools` would run it, and its cold build (about 5.5 minutes on 2 cores)
# does not fit the cold budget of `make test`.
#
# The module's go.mod has replace directives, which `go install
# module@version` refuses, so it is built inside a copy of its source.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

MOD="${ROOT}/hack/tools/crds"
MODULE=github.com/argoproj/argo-rollouts
VERSION="$(mod_version "${MOD}" "${MODULE}")"
DEST="${BIN}/argo-rollouts/${VERSION}"
STAMP_FILE="${DEST}/.argo-rollouts.stamp"
STAMP="$(stamp_of "${MOD}/go.mod" "${MOD}/go.sum" "${BASH_SOURCE[0]}")"
if up_to_date "${STAMP_FILE}" "${STAMP}" "${DEST}/rollouts-controller"; then
	log "argo-rollouts: v${VERSION} is up to date in ${DEST}"
	echo "${DEST}"
	exit 0
fi

log "argo-rollouts: building v${VERSION} into ${DEST}"
src="$(cd "${MOD}" && go mod download -json "${MODULE}" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
[[ -d "${src}" ]] || die "argo-rollouts: ${MODULE} not found in the module cache"
work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT
cp -r "${src}/." "${work}/"
chmod -R u+w "${work}"
rm -f "${STAMP_FILE}"
mkdir -p "${DEST}/crds"
(cd "${work}" && GOFLAGS=-mod=mod go build -trimpath -ldflags="-s -w" -o "${DEST}/rollouts-controller" ./cmd/rollouts-controller)
install -m 0644 "${work}"/manifests/crds/*-crd.yaml "${DEST}/crds/"
echo "${STAMP}" >"${STAMP_FILE}"
log "argo-rollouts: built v${VERSION}"
echo "${DEST}"
