#!/usr/bin/env bash
# Builds the Helm 3 CLI at the version pinned by hack/tools/helm/go.mod into
# bin/helm, with the same version stamping as Helm's own release builds, so
# that `helm version` and the Kubernetes version Helm assumes when rendering
# offline (.Capabilities.KubeVersion) are the real ones.
#
# The build is skipped when bin/helm was built from exactly these inputs, and
# replaced by a copy from the tools cache (lib.sh) when one was built elsewhere.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

MOD="${ROOT}/hack/tools/helm"
BINARY="${BIN}/helm"
STAMP_FILE="${BIN}/.helm.stamp"
VERSION="v$(mod_version "${MOD}" helm.sh/helm/v3)"
STAMP="$(stamp_of "${MOD}/go.mod" "${MOD}/go.sum" "${BASH_SOURCE[0]}")"

if up_to_date "${STAMP_FILE}" "${STAMP}" "${BINARY}"; then
	log "helm: ${VERSION} is up to date in ${BINARY}"
	exit 0
fi

mkdir -p "${BIN}"
rm -f "${STAMP_FILE}"
if restore_from_cache helm "${STAMP}" "${BIN}" helm; then
	echo "${STAMP}" >"${STAMP_FILE}"
	exit 0
fi

# Helm's Makefile derives the Kubernetes version it reports from the
# client-go it is built with: v0.X.Y means Kubernetes 1.X.
k8s="$(mod_version "${MOD}" k8s.io/client-go)"
k8s_major=$((${k8s%%.*} + 1))
k8s_minor="${k8s#*.}" && k8s_minor="${k8s_minor%%.*}"
ldflags="-s -w -X helm.sh/helm/v3/internal/version.version=${VERSION}"
ldflags+=" -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
for pkg in helm.sh/helm/v3/pkg/lint/rules helm.sh/helm/v3/pkg/chartutil; do
	ldflags+=" -X ${pkg}.k8sVersionMajor=${k8s_major} -X ${pkg}.k8sVersionMinor=${k8s_minor}"
done

log "helm: building ${VERSION} into ${BINARY}"
cd "${MOD}"
go build -trimpath -ldflags="${ldflags}" -o "${BINARY}" helm.sh/helm/v3/cmd/helm
echo "${STAMP}" >"${STAMP_FILE}"
save_to_cache helm "${STAMP}" "${BIN}" helm
log "helm: built ${VERSION}"
