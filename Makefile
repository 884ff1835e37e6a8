# ripple's developer entry points; `make` lists them. CI runs `make test`
# (.ci/run). Each phase prints how long it took, so CI logs show where the
# time goes.

SHELL := /usr/bin/env bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help
MAKEFLAGS += --no-print-directory

MODULE  := github.com/ripple-controller/ripple
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
GO      ?= go
BIN     := $(CURDIR)/bin

# The control plane the tests run: what hack/build-{etcd,kube}.sh build,
# unless KUBEBUILDER_ASSETS already names a directory of such binaries.
ifeq ($(origin KUBEBUILDER_ASSETS),undefined)
KUBEBUILDER_ASSETS := $(shell bash hack/assets-dir.sh)
endif
export KUBEBUILDER_ASSETS

# $(call phase,NAME,COMMAND) runs COMMAND and prints how long it took, also
# when it fails. COMMAND must not contain commas.
define phase
(start=$$(date +%s); echo ">>> $(1)"; rc=0; $(2) || rc=$$?; \
 echo "<<< $(1): $$(($$(date +%s) - start))s$$( ((rc == 0)) || echo ", FAILED with exit $$rc")"; exit $$rc)
endef

##@ Development

.PHONY: help
help: ## List the targets
	@awk 'BEGIN { FS = ":.*## " } \
		/^##@/ { printf "\n%s\n", substr($$0, 5) } \
		/^[a-zA-Z0-9_-]+:.*## / { printf "  %-18s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)

.PHONY: build
build: ## Build bin/ripple, stamped with VERSION
	@mkdir -p $(BIN)
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '-s -w -X $(MODULE)/internal/version.Version=$(VERSION)' -o $(BIN)/ripple ./cmd/ripple

.PHONY: kubectl-plugin
kubectl-plugin: build ## Build bin/kubectl-ripple: `kubectl ripple explain ...` once it is on PATH
	cp $(BIN)/ripple $(BIN)/kubectl-ripple

.PHONY: fmt
fmt: ## Format the Go code as `make lint` expects (gofmt, goimports)
	@bash hack/build-golangci-lint.sh
	$(BIN)/golangci-lint fmt ./...

.PHONY: vet
vet: ## Run go vet
	$(GO) vet ./...

.PHONY: lint
lint: ## Run golangci-lint (.golangci.yml)
	@bash hack/build-golangci-lint.sh
	$(BIN)/golangci-lint run --allow-parallel-runners ./...

##@ Tests

# After the tools, `test` runs two lanes side by side: the checks and the
# race-detector suites, which keep the cores busy, and the suites on full
# clusters, which mostly wait. The lanes share two job slots (-j2), so once
# the cluster lane ends, the code lane runs two of its phases at a time: the
# integration specs, the longest phase, go first, and the checks, unit tests
# and fuzz targets beside them once a slot is free. Each lane's output is
# printed when it ends.
.PHONY: test
test: ## Build the tools, then run every test (what CI runs)
	@$(MAKE) tools
	@$(MAKE) -j2 --output-sync=recurse test-lane-code test-lane-clusters

.PHONY: test-lane-code test-lane-clusters
test-lane-code:
	@$(MAKE) test-integration verify test-unit test-fuzz
test-lane-clusters:
	@$(MAKE) test-e2e test-support

.PHONY: verify
verify: ## Check formatting, go vet and golangci-lint: what CI requires to be clean
	@$(call phase,gofmt,unformatted=$$(gofmt -l $$(git ls-files '*.go')); test -z "$$unformatted" || { echo "$$unformatted"; false; })
	@$(call phase,go vet,$(GO) vet ./...)
	@$(call phase,golangci-lint,$(MAKE) lint)
	@$(call phase,actionlint,$(MAKE) lint-workflows)

# Each fuzz target runs briefly on top of its committed seed corpus
# (testdata/fuzz/), so the targets keep working; a long run is
# `go test -fuzz=NAME ./PKG` by hand.
# A count of executions, not a duration: with a duration, Go's fuzzing
# coordinator (before Go 1.27, golang/go#75804) can fail a target with a bare
# "context deadline exceeded" when the time runs out under load, with no
# failing input. 20,000 executions take a few seconds here.
FUZZTIME ?= 20000x
FUZZ_TARGETS := FuzzParse:./internal/annotations FuzzNameList:./internal/annotations FuzzEncodeUnambiguous:./internal/digest

.PHONY: test-fuzz
test-fuzz: ## Run each fuzz target for FUZZTIME (20000 executions)
	@for t in $(FUZZ_TARGETS); do $(call phase,fuzz $${t%%:*},$(GO) test -run=^$$ -fuzz="^$${t%%:*}$$" -fuzztime=$(FUZZTIME) $${t#*:}); done

.PHONY: test-unit
test-unit: ## Run the unit tests, with the race detector
	@$(call phase,unit tests,$(GO) test -race -timeout=20m ./internal/... ./cmd/...)

# test/integration runs in INTEGRATION_PROCS Ginkgo processes, each with its
# own control plane (a cluster-wide ripple in one would act on another's
# namespaces). The specs mostly wait, so more processes than cores pay off.
INTEGRATION_PROCS ?= 8

.PHONY: test-integration
test-integration: ## Run the integration specs in parallel, with the race detector (needs `make tools`)
	@bash hack/build-ginkgo.sh
	@$(call phase,integration tests,$(BIN)/ginkgo -p --procs=$(INTEGRATION_PROCS) -race --timeout=30m $$([[ -t 1 ]] || echo --no-color) ./test/integration)

# The rest of test/ but e2e: the chart tests, the bench harness's smoke run,
# the tests of the test support, and the image build's test (hack/image,
# its own module). They run the ripple code the integration specs already
# run with the race detector, or a binary built without it, so they run
# without.
.PHONY: test-support
test-support: ## Run test/chart, test/bench's TestSmoke and test/cluster (needs `make tools`)
	@$(call phase,chart bench cluster tests,$(GO) test -count=1 -timeout=20m ./test/chart/... ./test/bench/... ./test/cluster/...)
	@$(call phase,image test,cd hack/image && $(GO) test -count=1 -timeout=10m ./...)

# The specs labelled argo-controller need the real Argo Rollouts controller,
# whose cold build does not fit the cold budget of `make test`: they run in
# `make test-e2e-argo`.
.PHONY: test-e2e
test-e2e: ## Run the e2e specs on a full local cluster (needs `make tools`)
	@$(call phase,e2e tests,$(GO) test -count=1 -timeout=30m ./test/e2e/... -ginkgo.label-filter='!argo-controller')

.PHONY: test-e2e-argo
test-e2e-argo: tools ## Build the Argo Rollouts controller (about 5.5 minutes cold), then run the e2e specs that need it
	@$(call phase,argo rollouts controller,bash hack/argo-rollouts.sh >/dev/null)
	@$(call phase,e2e argo tests,ARGO_ROLLOUTS_DIR=$$(bash hack/argo-rollouts.sh 2>/dev/null) $(GO) test -count=1 -timeout=30m ./test/e2e/... -ginkgo.label-filter=argo-controller)

# test/bench's TestSmoke runs the benchmark harness at W=200 and checks
# correctness only, not speed; test-support runs it with the rest of test/.
.PHONY: bench-smoke
bench-smoke: ## Run the benchmark harness at W=200, correctness only (part of test-support)
	@$(call phase,bench smoke,$(GO) test -count=1 -timeout=15m -run TestSmoke ./test/bench/)

BENCH_OUT   ?= /tmp/readme-performance.md
BENCH_FLAGS ?=

.PHONY: bench
bench: build ## Benchmark ripple against a floor on a local control plane, not part of test; writes /tmp/readme-performance.md
	@bash hack/build-etcd.sh && bash hack/build-kube.sh
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '-s -w' -o $(BIN)/bench-memprobe ./test/bench/cmd/memprobe
	@$(call phase,bench,$(GO) run ./test/bench/cmd/bench -ripple $(BIN)/ripple -memprobe $(BIN)/bench-memprobe -out $(BENCH_OUT) $(BENCH_FLAGS))

# Every timestamp in the image is the commit's time, so that the same
# source gives the same digest.
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
PLATFORMS ?= linux/amd64,linux/arm64

.PHONY: image
image: ## Build ripple's image for PLATFORMS without Docker, as an OCI image layout in dist/image; prints its digest
	cd hack/image && $(GO) run . -src $(CURDIR) -o $(CURDIR)/dist/image -version $(VERSION) \
		-revision $$(git rev-parse HEAD 2>/dev/null) -epoch $(SOURCE_DATE_EPOCH) -platforms $(PLATFORMS)

# The release workflow renders dist/install.yaml with the digest of the
# image it pushed.
IMAGE ?= ripple:$(VERSION)

.PHONY: manifests
manifests: ## Render config/default into one dist/install.yaml, with IMAGE as ripple's image
	$(GO) run ./hack/manifests -config config/default -image $(IMAGE) -o dist/install.yaml

.PHONY: lint-workflows
lint-workflows: ## Check .github/workflows with actionlint, built from source (part of verify)
	@bash hack/build-actionlint.sh
	$(BIN)/actionlint

##@ Tools and local cluster

# A tool already built from the same inputs, in any clone, is copied from the
# tools cache outside the clone (hack/lib.sh) instead of being built again.
.PHONY: tools
tools: ## Build every pinned tool of hack/ into bin/, skipping those already current
	@for script in hack/build-*.sh; do $(call phase,$${script},bash $${script}); done

.PHONY: helm
helm: ## Build bin/helm
	@bash hack/build-helm.sh

.PHONY: helm-lint
helm-lint: helm ## Lint charts/ripple (helm lint --strict)
	$(BIN)/helm lint --strict charts/ripple

# Part of test-support too.
.PHONY: chart-test
chart-test: helm ## Test charts/ripple and config/: lint, golden renders, install and apply on kube-apiserver (needs `make tools`)
	@$(call phase,chart tests,$(GO) test -count=1 -timeout=15m ./test/chart/...)

.PHONY: cluster-up
cluster-up: ## Start a full local cluster in the background and print its KUBECONFIG
	@bash hack/local-cluster.sh up

.PHONY: cluster-down
cluster-down: ## Stop the local cluster
	@bash hack/local-cluster.sh down

.PHONY: demo
demo: build ## Show ripple rolling out a Deployment after a ConfigMap edit, on a throwaway cluster
	@bash hack/build-etcd.sh && bash hack/build-kube.sh && bash hack/build-kwok.sh && bash hack/build-crds.sh
	$(GO) run ./hack/demo
