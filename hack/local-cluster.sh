#!/usr/bin/env bash
# Runs a full local cluster (test/cluster) in the background for trying
# ripple by hand:
#
#   hack/local-cluster.sh up     start it (building what it needs) and print
#                                the `export KUBECONFIG=...` line
#   hack/local-cluster.sh down   stop it and remove its data
#
# Its state lives in bin/local-cluster/: the kubeconfig, the pid and the
# program's own log; the components' logs are named in that log.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

STATE="${BIN}/local-cluster"
PIDFILE="${STATE}/pid"
KUBECONFIG_PATH="${STATE}/kubeconfig"
LOG="${STATE}/local-cluster.log"

running() { [[ -f "${PIDFILE}" ]] && kill -0 "$(cat "${PIDFILE}")" 2>/dev/null; }

up() {
	if running; then
		log "local cluster already running (pid $(cat "${PIDFILE}"))"
		echo "export KUBECONFIG=${KUBECONFIG_PATH}"
		return
	fi
	bash "${ROOT}/hack/build-etcd.sh"
	bash "${ROOT}/hack/build-kube.sh"
	bash "${ROOT}/hack/build-kwok.sh"
	bash "${ROOT}/hack/build-crds.sh"
	mkdir -p "${STATE}"
	# Built like the tests are, so the two share the build cache.
	(cd "${ROOT}" && go build -o "${STATE}/local-cluster" ./test/cluster/cmd/local-cluster)

	log "starting the local cluster"
	cd "${ROOT}"
	nohup "${STATE}/local-cluster" --kubeconfig="${KUBECONFIG_PATH}" >"${LOG}" 2>&1 </dev/null &
	echo $! >"${PIDFILE}"
	# StartFull gives each component two minutes; five bounds them all.
	for _ in $(seq 300); do
		if grep -q '^export KUBECONFIG=' "${LOG}"; then
			grep -v '^export KUBECONFIG=' "${LOG}" >&2
			grep '^export KUBECONFIG=' "${LOG}"
			return
		fi
		if ! running; then
			rm -f "${PIDFILE}"
			cat "${LOG}" >&2
			die "the local cluster did not start"
		fi
		sleep 1
	done
	down
	die "the local cluster did not start in time; see ${LOG}"
}

down() {
	if ! running; then
		rm -f "${PIDFILE}"
		log "no local cluster running"
		return
	fi
	local pid
	pid="$(cat "${PIDFILE}")"
	kill -TERM "${pid}"
	# Every component gets a graceful stop of its own before being killed.
	for _ in $(seq 120); do
		if ! kill -0 "${pid}" 2>/dev/null; then
			rm -f "${PIDFILE}"
			log "local cluster stopped"
			return
		fi
		sleep 1
	done
	die "local cluster (pid ${pid}) still running; see ${LOG}"
}

case "${1:-}" in
up) up ;;
down) down ;;
*) die "usage: $0 up|down" ;;
esac
