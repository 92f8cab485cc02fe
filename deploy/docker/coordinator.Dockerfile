# c2cluster coordinator. Build from the repository root:
#   docker build -f deploy/docker/coordinator.Dockerfile -t c2cluster/coordinator .
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
# The module and build caches persist between builds (BuildKit and Buildah
# cache mounts), shared by the images that build from these sources.
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
# Pure Go: the CUDA binding's cgo part is not needed by the coordinator.
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 go build -trimpath -o /out/coordinator ./coordinator
# /params, the mount point of the "params" volume, owned by nonroot as in
# setup.Dockerfile: whichever image mounts the volume first gives it its
# owner, and c2-params (nonroot) must be able to write to it.
RUN mkdir -p /out/rootfs/params && chmod 0755 /out/rootfs/params

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/coordinator /usr/local/bin/coordinator
COPY --from=build --chown=65532:65532 /out/rootfs/ /
# distroless's nonroot user (uid 65532), as the base image sets it.
USER 65532:65532
# API (gRPC + HTTP/JSON), /metrics, /healthz
EXPOSE 8080
ENV C2_LISTEN=0.0.0.0:8080 C2_PARAMS_DIR=/params
ENTRYPOINT ["/usr/local/bin/coordinator"]
CMD ["serve"]
