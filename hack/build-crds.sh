#!/usr/bin/env bash
# Copies the third-party CRDs the tests install into bin/crds/, each from its
# project's Go module at the version hack/tools/crds/go.mod pins (checked
# against hack/tools/crds/go.sum): the Argo Rollouts Rollout and the CSI
# secrets store's SecretProviderClass and SecretProviderClassPodStatus.
# Nothing is built: the modules are only downloaded.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

MOD="${ROOT}/hack/tools/crds"
DEST="${BIN}/crds"
# module, path in the module, file name in bin/crds (the CRD's name).
CRDS=(
	"github.com/argoproj/argo-rollouts manifests/crds/rollout-crd.yaml rollouts.argoproj.io.yaml"
	"sigs.k8s.io/secrets-store-csi-driver config/crd/bases/secrets-store.csi.x-k8s.io_secretproviderclasses.yaml secretproviderclasses.secrets-store.csi.x-k8s.io.yaml"
	"sigs.k8s.io/secrets-store-csi-driver config/crd/bases/secrets-store.csi.x-k8s.io_secretproviderclasspodstatuses.yaml secretproviderclasspodstatuses.secrets-store.csi.x-k8s.io.yaml"
)

STAMP_FILE="${DEST}/.crds.stamp"
STAMP="$(stamp_of "${MOD}/go.mod" "${MOD}/go.sum" "${BASH_SOURCE[0]}")"
files=()
for c in "${CRDS[@]}"; do
	read -r _ _ name <<<"${c}"
	files+=("${name}")
done
if [[ -f "${STAMP_FILE}" && "$(cat "${STAMP_FILE}")" == "${STAMP}" ]] && ls "${files[@]/#/${DEST}/}" >/dev/null 2>&1; then
	log "crds: up to date in ${DEST}"
	exit 0
fi

mkdir -p "${DEST}"
rm -f "${STAMP_FILE}"
if restore_from_cache crds "${STAMP}" "${DEST}" "${files[@]}"; then
	echo "${STAMP}" >"${STAMP_FILE}"
	exit 0
fi

log "crds: copying into ${DEST}"
cd "${MOD}"
for c in "${CRDS[@]}"; do
	read -r module path name <<<"${c}"
	dir="$(go mod download -json "${module}" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
	[[ -n "${dir}" && -f "${dir}/${path}" ]] || die "crds: ${path} not found in ${module}"
	install -m 0644 "${dir}/${path}" "${DEST}/${name}"
done
echo "${STAMP}" >"${STAMP_FILE}"
save_to_cache crds "${STAMP}" "${DEST}" "${files[@]}"
log "crds: copied ${#CRDS[@]} CRDs"
