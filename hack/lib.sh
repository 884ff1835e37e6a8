# shellcheck shell=bash
# Shared helpers of the hack/ scripts. Sourced, never run.
#
# Every tool is built from a wrapper module under hack/tools/<name>/, whose
# go.mod and go.sum pin the exact version; the output directory is named after
# that version and carries a stamp (a hash of the inputs), so a build is
# skipped when nothing changed and redone when anything did.

set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="${ROOT}/bin"
GOOS="$(go env GOOS)"
GOARCH="$(go env GOARCH)"
export CGO_ENABLED=0

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# mod_version DIR MODULE prints the version of MODULE required by DIR/go.mod,
# without the leading v. Reading go.mod directly keeps this instant, so the
# Makefile can call it on every run.
mod_version() {
	local v
	v="$(awk -v m="$2" '
		($1 == "require" && $2 == m) { print $3; exit }
		($1 == m && $2 ~ /^v/) { print $2; exit }
	' "$1/go.mod")"
	[[ -n "$v" ]] || die "$1/go.mod does not require $2"
	echo "${v#v}"
}

kube_version() { mod_version "${ROOT}/hack/tools/kube" k8s.io/kubernetes; }
etcd_version() { mod_version "${ROOT}/hack/tools/etcd" go.etcd.io/etcd/server/v3; }
kwok_version() { mod_version "${ROOT}/hack/tools/kwok" sigs.k8s.io/kwok; }

# The control plane lives in one directory in the layout setup-envtest uses,
# so it can be handed to envtest as KUBEBUILDER_ASSETS.
kube_assets_dir() { echo "${BIN}/k8s/$(kube_version)-${GOOS}-${GOARCH}"; }
kwok_assets_dir() { echo "${BIN}/kwok/$(kwok_version)-${GOOS}-${GOARCH}"; }

# stamp_of FILE... prints a hash of the given build inputs plus the Go
# version, which together decide what a build produces.
stamp_of() {
	{ go version; cat "$@"; } | sha256sum | cut -d' ' -f1
}

# up_to_date STAMPFILE STAMP BINARY... succeeds when every binary exists and
# was built from exactly these inputs.
up_to_date() {
	local file="$1" want="$2"
	shift 2
	[[ -f "$file" && "$(cat "$file")" == "$want" ]] || return 1
	local b
	for b in "$@"; do [[ -x "$b" ]] || return 1; done
}

# timed NAME CMD... runs CMD and logs how long it took, so CI logs show where
# the time of a cold run goes.
timed() {
	local name="$1" start rc=0
	shift
	start=$(date +%s)
	"$@" || rc=$?
	log "${name} took $(($(date +%s) - start))s (exit ${rc})"
	return "$rc"
}
