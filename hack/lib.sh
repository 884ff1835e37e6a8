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

# Built tools are also kept outside the clone, in one entry per tool and
# stamp, so that a fresh clone copies them instead of linking them again, which
# is most of the time of a build from a warm Go cache. An entry is created
# whole, by a rename, and copied from, never linked to, so that no clone's
# bin/ is the cache; a build replaces it whole. Without a home directory
# (nor RIPPLE_TOOLS_CACHE, nor XDG_CACHE_HOME) there is no cache.
# Made absolute because the scripts change directory before they save.
TOOLS_CACHE="${XDG_CACHE_HOME:-${HOME:+${HOME}/.cache}}"
TOOLS_CACHE="${RIPPLE_TOOLS_CACHE:-${TOOLS_CACHE:+${TOOLS_CACHE}/ripple/tools}}"
[[ -z "${TOOLS_CACHE}" || "${TOOLS_CACHE}" == /* ]] || TOOLS_CACHE="${PWD}/${TOOLS_CACHE}"

# copy_files SRC DEST FILE... copies each FILE, a path relative to both SRC
# and DEST, through a temporary name, so that a binary is never seen
# half-written nor overwritten while it runs. Errors are returned, not fatal:
# the callers run it as a condition, where set -e does not apply.
copy_files() {
	local src="$1" dest="$2" f
	shift 2
	for f in "$@"; do
		if ! { mkdir -p "$(dirname "${dest}/${f}")" &&
			cp "${src}/${f}" "${dest}/${f}.tmp$$" &&
			mv -f "${dest}/${f}.tmp$$" "${dest}/${f}"; }; then
			rm -f "${dest}/${f}.tmp$$"
			return 1
		fi
	done
}

# restore_from_cache NAME STAMP DEST FILE... copies the FILEs (paths relative
# to DEST) of NAME's cache entry for STAMP into DEST. It fails, and the caller
# builds, when the entry is missing or lacks any of them.
restore_from_cache() {
	local name="$1" stamp="$2" dest="$3" f
	shift 3
	[[ -n "${TOOLS_CACHE}" ]] || return 1
	local entry="${TOOLS_CACHE}/${name}/${stamp}"
	for f in "$@"; do
		case "${f}" in
		# Stage definitions and CRDs: data, not programs.
		*.yaml) [[ -f "${entry}/${f}" ]] || return 1 ;;
		*) [[ -f "${entry}/${f}" && -x "${entry}/${f}" ]] || return 1 ;;
		esac
	done
	copy_files "${entry}" "${dest}" "$@" || return 1
	log "${name}: copied from the tools cache, ${entry}"
}

# save_to_cache NAME STAMP SRC FILE... stores the FILEs (paths relative to
# SRC) as NAME's cache entry for STAMP. The cache only saves time, so a cache
# that cannot be written is logged and otherwise ignored.
save_to_cache() {
	local name="$1" stamp="$2" src="$3" tmp=""
	shift 3
	[[ -n "${TOOLS_CACHE}" ]] || return 0
	local entry="${TOOLS_CACHE}/${name}/${stamp}"
	# An entry already there is one restore_from_cache found incomplete, or
	# one a concurrent run of the same inputs just stored: replacing it is
	# right either way.
	if mkdir -p "${TOOLS_CACHE}/${name}" &&
		tmp="$(mktemp -d "${TOOLS_CACHE}/${name}/.tmp.XXXXXX")" &&
		copy_files "${src}" "${tmp}" "$@" &&
		chmod 755 "${tmp}" &&
		{ [[ ! -e "${entry}" ]] || mv -T "${entry}" "${tmp}.old"; } &&
		mv -T "${tmp}" "${entry}"; then
		log "${name}: stored in the tools cache, ${entry}"
	else
		log "${name}: could not store in the tools cache, ${entry}; going on without it"
	fi
	[[ -z "${tmp}" ]] || rm -rf "${tmp}" "${tmp}.old"
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
