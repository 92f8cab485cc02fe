#!/usr/bin/env bash
# Validates docker-compose.yml: with `docker compose config` when the Docker
# Compose v2 plugin is installed, else with the Compose Specification's
# validator (compose-go, the loader `docker compose` itself uses) built from
# tools/compose. Also checks that every Dockerfile the file names exists,
# then what the schema cannot (tools/compose/check, with its own tests):
# each service's volumes, paths and user against the image its Dockerfile
# builds (the params volume writable by the user c2-params runs as), the
# folders the binaries are pointed at mounted there, and the Prometheus and
# Grafana services' files mounted where they are read, their scrape targets
# and datasource services listening on those ports.
# Exit 3: no way to validate here (no compose plugin and no Go module proxy).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

for df in $(awk '/dockerfile:/ {print $2}' docker-compose.yml); do
  [ -f "$df" ] || { echo "check-compose: docker-compose.yml names $df, which does not exist" >&2; exit 1; }
done

tools=yes
if ! (cd tools/compose && go mod download >/dev/null 2>&1); then tools=; fi
if docker compose version >/dev/null 2>&1; then
  docker compose config --quiet
  echo "check-compose: docker-compose.yml is valid (docker compose config)"
elif [ -n "$tools" ]; then
  go -C tools/compose tool github.com/compose-spec/compose-go/v2/cmd "$root/docker-compose.yml" >/dev/null
  echo "check-compose: docker-compose.yml is valid (Compose Specification schema, compose-go; no Docker engine here)"
else
  echo "check-compose: no docker compose and no module proxy: cannot validate here" >&2
  exit 3
fi
if [ -z "$tools" ]; then
  echo "check-compose: no module proxy: volumes, users and monitoring files not checked" >&2
  exit 3
fi
go -C tools/compose run ./check "$root/docker-compose.yml"
go -C tools/compose test -count=1 ./check >/dev/null
echo "check-compose: services' volumes, paths and users agree with their Dockerfiles; Prometheus and Grafana find their files (tools/compose/check)"
