#!/usr/bin/env bash
# The README's run command (`make run`): c2cluster on this machine, end to
# end. It makes sure what the single node starts is available — a Redis
# (the one on 127.0.0.1:6379 if it answers, else redis-server, installed from
# Debian if missing) and Jaeger (built once from tools/jaeger, cached under
# bin/) — then runs `coordinator run`, which starts NATS, the coordinator and
# a CPU worker in one process, seals a test sector, proves it, verifies it,
# and prints the proof and its trace. Extra arguments go to `coordinator run`
# (e.g. `make run ARGS="-shape test-mini -keep"`).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v go >/dev/null 2>&1; then
  echo "run.sh: Go is not installed (c2cluster needs Go 1.26: https://go.dev/dl/)" >&2
  exit 1
fi

if ! command -v redis-server >/dev/null 2>&1 && ! (exec 3<>/dev/tcp/127.0.0.1/6379) 2>/dev/null; then
  echo "run.sh: no Redis on 127.0.0.1:6379 and no redis-server; installing it (Debian package redis-server)"
  if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq redis-server >/dev/null
  else sudo apt-get update -qq && sudo apt-get install -y -qq redis-server >/dev/null; fi
fi

jaeger=()
if bin="$(scripts/build-jaeger.sh)"; then
  jaeger=(-jaeger-bin "$bin")
else
  rc=$?
  if [ "$rc" = 3 ]; then
    echo "run.sh: Jaeger cannot be built here; running without trace export" >&2
    jaeger=(-no-jaeger)
  else
    exit "$rc"
  fi
fi

echo "run.sh: building and starting the single node (go run ./coordinator run)"
exec go run ./coordinator run "${jaeger[@]}" "$@"
