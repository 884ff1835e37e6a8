#!/usr/bin/env bash
# Prints the directory hack/build-etcd.sh and hack/build-kube.sh build the
# control plane into, for use as KUBEBUILDER_ASSETS.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
kube_assets_dir
