# c2cluster coordinator. Build from the repository root:
#   docker build -f deploy/docker/coordinator.Dockerfile -t c2cluster/coordinator .
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# Pure Go: the CUDA binding's cgo part is not needed by the coordinator.
RUN CGO_ENABLED=0 go build -trimpath -o /out/coordinator ./coordinator

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/coordinator /usr/local/bin/coordinator
# API (gRPC + HTTP/JSON), /metrics, /healthz
EXPOSE 8080
ENV C2_LISTEN=0.0.0.0:8080 C2_PARAMS_DIR=/params
ENTRYPOINT ["/usr/local/bin/coordinator"]
CMD ["serve"]
