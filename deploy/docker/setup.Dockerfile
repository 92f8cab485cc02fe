# c2-params: the one-shot "params" service of docker-compose.yml. It runs the
# Groth16 setup of the test shapes it is given (C2_SHAPES, or -shapes) into
# /params when their files are absent. It refuses the official shapes: those
# are proved with Filecoin's own parameter files, fetched with
# `lotus fetch-params` (docs/parameters.md).
#   docker build -f deploy/docker/setup.Dockerfile -t c2cluster/params .
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
# The module and build caches persist between builds (BuildKit and Buildah
# cache mounts), shared by the images that build from these sources.
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 go build -trimpath -o /out/c2-params ./worker/cmd/c2-params
# /params, the mount point of the "params" volume, made here because the
# runtime image has no shell: Docker and Podman give a new named volume the
# owner and mode of the image's directory at its mount point, and without one
# the volume would be root's and c2-params (nonroot) could not write to it.
RUN mkdir -p /out/rootfs/params && chmod 0755 /out/rootfs/params

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/c2-params /usr/local/bin/c2-params
COPY --from=build --chown=65532:65532 /out/rootfs/ /
# distroless's nonroot user (uid 65532), as the base image sets it.
USER 65532:65532
ENV C2_PARAMS_DIR=/params
ENTRYPOINT ["/usr/local/bin/c2-params"]
