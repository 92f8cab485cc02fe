# c2-params: the one-shot "params" service of docker-compose.yml. It writes
# Groth16 parameters for test shapes into /params when absent (fresh toxic
# waste). Official shapes use Filecoin's published parameter files instead
# (docs/operations.md).
#   docker build -f deploy/docker/setup.Dockerfile -t c2cluster/params .
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -o /out/c2-params ./worker/cmd/c2-params

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/c2-params /usr/local/bin/c2-params
ENV C2_PARAMS_DIR=/params
ENTRYPOINT ["/usr/local/bin/c2-params"]
