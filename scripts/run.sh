#!/usr/bin/env bash
# The README's run command (`make run`): c2cluster on this machine, end to
# end. It makes sure what the single node starts is available — a Redis
# (the one on 127.0.0.1:6379 if it answers, else redis-server, installed from
# Debian if missing) and Jaeger (built once from tools/jaeger, cached under
# bin/; not with -no-jaeger) — builds bin/coordinator (with progress: the
# first build compiles c2cluster and its dependencies) and runs
# `bin/coordinator run`, which starts NATS, the coordinator and a CPU worker
# in one process, seals a test sector, proves it, verifies it, and prints
# the proof and its trace, then keeps serving — the web page with the job
# and its trace, the API, NATS and Redis — until Ctrl-C (`-keep`). Extra
# arguments go to `coordinator run` and come after that `-keep`, so
# `make run ARGS=-keep=false` exits once the proof is verified (e.g.
# `make run ARGS="-shape test-mini"`).
#
# The coordinator replaces this script (exec), so make sees its exit status:
# 0 after a run, and 0 after Ctrl-C or SIGTERM once everything is stopped.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/progress.sh

if ! command -v go >/dev/null 2>&1; then
  echo "run.sh: Go is not installed (c2cluster needs Go 1.26: https://go.dev/dl/)" >&2
  exit 1
fi

if ! command -v redis-server >/dev/null 2>&1 && ! (exec 3<>/dev/tcp/127.0.0.1/6379) 2>/dev/null; then
  echo "run.sh: no Redis on 127.0.0.1:6379 and no redis-server; installing it (Debian package redis-server)"
  if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq redis-server >/dev/null
  else sudo apt-get update -qq && sudo apt-get install -y -qq redis-server >/dev/null; fi
fi

echo "run.sh: building bin/coordinator (the first build compiles c2cluster and its dependencies: a few minutes on 2 cores; later builds take seconds)"
SECONDS=0
progress_go_build "run.sh: building bin/coordinator" -o bin/coordinator ./coordinator
echo "run.sh: bin/coordinator built in ${SECONDS}s"

jaeger=()
no_jaeger=0
for a in "$@"; do
  case $a in -no-jaeger | --no-jaeger | -no-jaeger=true | --no-jaeger=true) no_jaeger=1 ;; esac
done
if [ "$no_jaeger" = 0 ]; then
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
fi

exec bin/coordinator run -keep "${jaeger[@]}" "$@"
