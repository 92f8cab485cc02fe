#!/usr/bin/env bash
# The project's test command (README "Test", `make test`, .ci/run). Works on
# a bare machine: it makes sure the programs the tests start are there —
# redis-server and chromium (Debian packages) and Jaeger (built once from
# tools/jaeger and cached under bin/, ~6.5 min on 2 cores the first time,
# beside the other packages' tests) — then vets and runs every Go test.
# Tests start their own Redis, embedded NATS, Jaeger and browser. GPU tests
# skip without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)

if ! command -v redis-server >/dev/null 2>&1; then
  echo "test.sh: redis-server not found; installing it (Debian package redis-server)"
  if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq redis-server >/dev/null
  else sudo apt-get update -qq && sudo apt-get install -y -qq redis-server >/dev/null; fi
fi

# Chromium for the browser check of the coordinator's web page
# (coordinator/e2e): about 10 s on 2 cores with the package lists, 150 MB.
# When it cannot be installed, that check skips and says why.
if ! command -v chromium >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
  echo "test.sh: chromium not found; installing it (Debian package chromium) for the web page's browser test"
  sudo=(); if [ "$(id -u)" != 0 ]; then sudo=(sudo); fi
  if ! { "${sudo[@]}" apt-get update -qq && DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends chromium >/dev/null; }; then
    echo "test.sh: chromium could not be installed; the web page's browser test will skip"
  fi
fi

# docker-compose.yml against the Compose schema, then its volumes, users
# and monitoring files against the Dockerfiles (exit 3: cannot check here).
scripts/check-compose.sh || {
  rc=$?
  if [ "$rc" != 3 ]; then exit "$rc"; fi
}

# Prometheus config, alert rules and their promtool unit tests (promtool
# taken from Debian's prometheus package into bin/ when missing, ~2 s;
# exit 3: no promtool and no apt-get here).
scripts/check-prometheus.sh || {
  rc=$?
  if [ "$rc" != 3 ]; then exit "$rc"; fi
  echo "test.sh: promtool unavailable; alert rules not unit-tested"
}

# Jaeger for the end-to-end trace test (coordinator/e2e) builds beside vet
# and the other packages' tests: its compile and link leave cores idle
# that the tests fill, and the other way round. Exit status 3: impossible
# here (no module proxy); that test then skips and says why.
jlog="$(mktemp)"
trap 'rm -f "$jlog"' EXIT
( C2_PROGRESS=lines scripts/build-jaeger.sh >"$jlog" ) &  # progress as lines: it prints beside the tests
jaeger=$!

go vet ./...
# go test's own vet pass (a subset of the analyzers above) is off, and the
# test binaries are linked without DWARF or a symbol table (-s -w: about a
# third less link time; panics still name files and lines).
gotest=(go test -count=1 -vet=off -ldflags='-s -w')
e2e=github.com/c2cluster/c2cluster/coordinator/e2e
"${gotest[@]}" -timeout 20m $(go list ./... | grep -vx "$e2e")
echo "test.sh: tests other than $e2e passed ($(( $(date +%s) - start ))s)"

# deploy/k8s: rendered with kustomize, validated strictly by kubeconform
# against Kubernetes' own schemas, and checked for what schemas cannot see
# (tools/k8s, a module of its own; after the tests above, whose standard
# library and shared packages it reuses: ~20 s of CPU).
if (cd tools/k8s && go mod download >/dev/null 2>&1); then
  go -C tools/k8s test -count=1 -vet=off ./...
else
  echo "test.sh: no module proxy: deploy/k8s cannot be validated here"
fi

if wait "$jaeger"; then
  echo "test.sh: jaeger ready: $(cat "$jlog") ($(( $(date +%s) - start ))s)"
else
  rc=$?
  if [ "$rc" != 3 ]; then exit "$rc"; fi
  echo "test.sh: Jaeger cannot be built here; the Jaeger end-to-end test will skip"
fi
"${gotest[@]}" -timeout 20m "$e2e"
echo "test.sh: all tests passed in $(( $(date +%s) - start ))s"
