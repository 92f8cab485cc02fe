# c2cluster worker with the CUDA prover. Build from the repository root:
#   docker build -f deploy/docker/worker-gpu.Dockerfile -t c2cluster/worker-gpu .
#   docker build --build-arg CUDA_ARCH=sm_89 ...   # another GPU generation
# Runs with the NVIDIA container toolkit (docker run --gpus all, or the
# device reservation in docker-compose.yml).
ARG CUDA_VERSION=12.6.3

# 1. The CUDA library, built with nvcc from cuda/.
FROM nvidia/cuda:${CUDA_VERSION}-devel-ubuntu22.04 AS cuda
ARG CUDA_ARCH=sm_90
WORKDIR /src
COPY cuda/ cuda/
RUN CUDA_ARCH=${CUDA_ARCH} OUT_DIR=/out cuda/build.sh

# 2. The worker, with cgo (the binding dlopens the library at run time).
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
# The module and build caches persist between builds (BuildKit and Buildah
# cache mounts), shared by the images that build from these sources.
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=1 go build -trimpath -o /out/worker ./worker

# 3. Runtime: the CUDA runtime libraries, the worker and libc2groth16.so.
FROM nvidia/cuda:${CUDA_VERSION}-runtime-ubuntu22.04
COPY --from=cuda /out/libc2groth16.so /usr/local/lib/libc2groth16.so
COPY --from=build /out/worker /usr/local/bin/worker
# The worker runs as nonroot, uid 65532, like every c2cluster image: the
# parameter files c2-params writes into the "params" volume are readable by
# their owner only, and the official folder's checked markers are then one
# uid's on a host with both workers. /params, the volume's mount point, is
# that user's: whichever image mounts the volume first gives it its owner.
RUN groupadd --gid 65532 nonroot \
 && useradd --uid 65532 --gid 65532 --no-create-home --home-dir /nonexistent nonroot \
 && install -d -m 0755 -o 65532 -g 65532 /params \
 && ldconfig
USER 65532:65532
EXPOSE 9464
ENV C2G_CUDA_LIB=/usr/local/lib/libc2groth16.so C2_METRICS_LISTEN=0.0.0.0:9464 C2_PARAMS_DIR=/params \
    C2_BACKEND=cuda NVIDIA_DRIVER_CAPABILITIES=compute,utility
ENTRYPOINT ["/usr/local/bin/worker"]
