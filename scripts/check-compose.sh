#!/usr/bin/env bash
# Validates docker-compose.yml: with `docker compose config` when the Docker
# compose plugin is installed, else with the Compose Specification's
# validator (compose-go, the loader `docker compose` itself uses) built from
# tools/compose. Also checks that every Dockerfile the file names exists.
# Exit 3: no way to validate here (no compose plugin and no Go module proxy).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

for df in $(awk '/dockerfile:/ {print $2}' docker-compose.yml); do
  [ -f "$df" ] || { echo "check-compose: docker-compose.yml names $df, which does not exist" >&2; exit 1; }
done

if docker compose version >/dev/null 2>&1; then
  docker compose config --quiet
  echo "check-compose: docker-compose.yml is valid (docker compose config)"
  exit 0
fi
if ! (cd tools/compose && go mod download >/dev/null 2>&1); then
  echo "check-compose: no docker compose and no module proxy: cannot validate here" >&2
  exit 3
fi
go -C tools/compose tool github.com/compose-spec/compose-go/v2/cmd "$root/docker-compose.yml" >/dev/null
echo "check-compose: docker-compose.yml is valid (Compose Specification schema, compose-go; no Docker engine here)"
