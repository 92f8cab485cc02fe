# c2cluster worker, CPU backend only. Build from the repository root:
#   docker build -f deploy/docker/worker.Dockerfile -t c2cluster/worker-cpu .
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
# The module and build caches persist between builds (BuildKit and Buildah
# cache mounts), shared by the images that build from these sources.
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 go build -trimpath -o /out/worker ./worker
# /params, the mount point of the "params" volume, owned by nonroot as in
# setup.Dockerfile: whichever image mounts the volume first gives it its
# owner, and c2-params (nonroot) must be able to write to it.
RUN mkdir -p /out/rootfs/params && chmod 0755 /out/rootfs/params

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/worker /usr/local/bin/worker
COPY --from=build --chown=65532:65532 /out/rootfs/ /
# distroless's nonroot user (uid 65532), as the base image sets it.
USER 65532:65532
# /metrics and /healthz
EXPOSE 9464
ENV C2_METRICS_LISTEN=0.0.0.0:9464 C2_PARAMS_DIR=/params C2_BACKEND=cpu
ENTRYPOINT ["/usr/local/bin/worker"]
