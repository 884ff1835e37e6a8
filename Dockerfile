# syntax=docker/dockerfile:1
#
# ripple's image: a static binary on a distroless-style base that runs as the
# nonroot user (65532), with nothing else in it.
#
#   docker build --build-arg VERSION=v0.1.0 -t ripple .
#
# The final stage starts from BASE_IMAGE, "scratch" by default, and adds
# only the CA bundle and the passwd/group entries of the nonroot user, as a
# distroless static nonroot image has them. To build on the upstream
# distroless image instead, pass its reference (the static variant, tag
# nonroot) as --build-arg BASE_IMAGE=...; the result is the same.
#
# The build flags are those of `make build`: CGO off, -trimpath, and
# -ldflags "-s -w -X .../internal/version.Version=$VERSION".

ARG GO_VERSION=1.26
ARG BASE_IMAGE=scratch

FROM --platform=$BUILDPLATFORM golang:${GO_VERSION} AS build
WORKDIR /src
ENV CGO_ENABLED=0
# Dependencies first, so that a change of ripple's code reuses their layer.
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY cmd/ cmd/
COPY internal/ internal/
ARG TARGETOS
ARG TARGETARCH
ARG VERSION=dev
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    GOOS=${TARGETOS} GOARCH=${TARGETARCH} go build -trimpath \
      -ldflags "-s -w -X github.com/ripple-controller/ripple/internal/version.Version=${VERSION}" \
      -o /out/ripple ./cmd/ripple
# The nonroot user and group of distroless images.
RUN mkdir -p /out/etc \
 && echo 'nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin' >/out/etc/passwd \
 && echo 'nonroot:x:65532:' >/out/etc/group

FROM ${BASE_IMAGE}
ARG VERSION=dev
ARG REVISION=unknown
LABEL org.opencontainers.image.title="ripple" \
      org.opencontainers.image.description="Rolls Deployments, StatefulSets and DaemonSets when the ConfigMaps and Secrets they use change; a drop-in replacement for stakater/Reloader." \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}"
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /out/etc/passwd /etc/passwd
COPY --from=build /out/etc/group /etc/group
COPY --from=build /out/ripple /ripple
USER 65532:65532
# The metrics and health ports of the chart's defaults.
EXPOSE 9090 8081
ENTRYPOINT ["/ripple"]
