#!/usr/bin/env bash
# The project's test command (README "Test"). Works on a bare machine: it
# makes sure the programs the tests start (redis-server) are installed, then
# runs every Go test. Tests start their own Redis and embedded NATS servers.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v redis-server >/dev/null 2>&1; then
  echo "test.sh: redis-server not found; installing it (Debian package redis-server)"
  if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq redis-server >/dev/null
  else sudo apt-get update -qq && sudo apt-get install -y -qq redis-server >/dev/null; fi
fi

start=$(date +%s)
go vet ./...
go test -count=1 -timeout 20m ./...
echo "test.sh: all tests passed in $(( $(date +%s) - start ))s"
