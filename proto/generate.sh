#!/usr/bin/env bash
# Regenerates the Go code of proto/c2cluster/v1 and proto/cuzk/v1 from their
# .proto files. cuzk/v1 (Curio's proving-engine API, served by the
# coordinator) also gets grpc-go stubs: the tests call it as Curio's grpc-go
# client does.
# Needs protoc (Debian: protobuf-compiler); the plugins are the module's Go
# tools (go.mod `tool` directives), so their versions are pinned by go.mod.
set -euo pipefail
cd "$(dirname "$0")"
command -v protoc >/dev/null || { echo "generate.sh: protoc not found on PATH (apt-get install protobuf-compiler)" >&2; exit 1; }
bin="$(mktemp -d)"
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/protoc-gen-go" google.golang.org/protobuf/cmd/protoc-gen-go
go build -o "$bin/protoc-gen-connect-go" connectrpc.com/connect/cmd/protoc-gen-connect-go
go build -o "$bin/protoc-gen-go-grpc" google.golang.org/grpc/cmd/protoc-gen-go-grpc
# OUT (default: this folder) lets the freshness test generate elsewhere.
out="${OUT:-.}"
PATH="$bin:$PATH" protoc -I . \
  --go_out="$out" --go_opt=paths=source_relative \
  --connect-go_out="$out" --connect-go_opt=paths=source_relative \
  c2cluster/v1/api.proto c2cluster/v1/task.proto
PATH="$bin:$PATH" protoc -I . \
  --go_out="$out" --go_opt=paths=source_relative \
  --connect-go_out="$out" --connect-go_opt=paths=source_relative \
  --go-grpc_out="$out" --go-grpc_opt=paths=source_relative \
  cuzk/v1/proving.proto
