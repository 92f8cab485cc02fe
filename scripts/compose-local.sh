#!/usr/bin/env bash
# Runs docker-compose.yml for real on a host where image registries are
# unreachable, under Podman's Docker-compatible API, and proves one
# test-micro job end to end through it:
#
#   1. builds every base image the compose file and deploy/docker/*.Dockerfile
#      name from what the host has (deploy/local-images/: a debootstrap'd
#      Debian bookworm, the host's Go toolchain, Debian's redis and
#      prometheus packages, nats-server built from its Go module, Jaeger
#      from tools/jaeger) and tags them with the exact names the files use,
#      so both run unchanged; images that exist are kept (C2_LOCAL_REBUILD=1
#      builds them again);
#   2. starts `podman system service` when no Docker API answers at
#      $DOCKER_HOST, and a healthcheck driver (Podman schedules healthchecks
#      with systemd timers; without systemd it runs them only when asked);
#   3. `docker compose up -d --build` of the services a CPU job needs (nats,
#      redis, jaeger, params, coordinator, worker-cpu, prometheus: no
#      worker-gpu, no GPU here; no grafana, no local image for it);
#   4. seals a test-micro C1 on the host, proves it through the published
#      API port, verifies the proof with the cluster's verifying key from
#      the params volume, finds the job's trace in Jaeger's query API,
#      fetches the coordinator's /ui/ page and its trace view, and checks
#      that Prometheus scrapes the coordinator and the worker;
#   5. `docker compose down -v`, and stops what it started.
#
#   scripts/compose-local.sh            # all of it; prints one line per check
#   scripts/compose-local.sh images     # only step 1
#   C2_LOCAL_KEEP=1 scripts/compose-local.sh   # leave the stack up (then: docker compose down -v)
#   C2_COMPOSE=podman-compose scripts/compose-local.sh   # Debian's podman-compose instead of Compose v2
#
# Needs root (rootful Podman: its socket at /run/podman/podman.sock),
# podman, debootstrap, the docker CLI with the Compose v2 plugin (when the
# plugin is missing it is built from github.com/docker/compose/v5 through
# the module proxy into ~/.docker/cli-plugins: minutes), Go, and the
# module proxy and a Debian mirror reachable from the host and from
# containers on Podman's default network. Too heavy for CI (image builds,
# Jaeger and compose builds: tens of minutes on 2 cores the first time).
# Exit 0: every check passed; 1: a check failed; 3: a prerequisite is
# missing.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
export DOCKER_HOST="${DOCKER_HOST:-unix:///run/podman/podman.sock}"
work="${C2_LOCAL_WORK:-/var/tmp/c2-compose-local}"
mkdir -p "$work"
services=(nats redis jaeger params coordinator worker-cpu prometheus)
t0=$SECONDS
say() { printf 'compose-local: [%4ds] %s\n' $((SECONDS - t0)) "$*" >&2; }
fail() { say "FAIL: $*"; exit 1; }
need() { command -v "$1" >/dev/null 2>&1 || { say "missing prerequisite: $1 ($2)"; exit 3; }; }
need podman "apt-get install podman"
need debootstrap "apt-get install debootstrap"

need go "the Go toolchain"
need curl "apt-get install curl"
need jq "apt-get install jq"
[ "$(id -u)" = 0 ] || { say "run as root (rootful Podman)"; exit 3; }

# --- the images the files name ---------------------------------------------
# External images of docker-compose.yml and base images of the Dockerfiles
# this script can make (the GPU worker's nvidia/cuda and grafana it cannot).
names="$( (awk '$1 == "image:" {print $2}' docker-compose.yml
          awk 'toupper($1) == "FROM" {print $2}' deploy/docker/coordinator.Dockerfile \
            deploy/docker/worker.Dockerfile deploy/docker/setup.Dockerfile) | sort -u)"
fq() { # Docker's normalization of an image name
  local n="$1" first="${1%%/*}"
  if [[ "$n" != */* ]]; then echo "docker.io/library/$n"
  elif [[ "$first" == *.* || "$first" == *:* || "$first" == localhost ]]; then echo "$n"
  else echo "docker.io/$n"; fi
}
image_of() { # the first name whose repository is $1
  local n; for n in $names; do [ "${n%:*}" = "$1" ] && { echo "$n"; return; }; done
  say "docker-compose.yml and the Dockerfiles name no $1 image"; exit 1
}
have() { [ -z "${C2_LOCAL_REBUILD:-}" ] && podman image exists "$1"; }
build() { # build TAG CONTAINERFILE CONTEXT [ARGS...]
  local tag="$1" file="$2" ctx="$3"; shift 3
  if have "$tag"; then say "image $tag: present"; return; fi
  say "image $tag: building from $file"
  podman build --quiet --network host -t "$tag" -f "$file" "$@" "$ctx" >"$work/build.log" 2>&1 \
    || { tail -n 30 "$work/build.log" >&2; fail "building $tag"; }
}

base=localhost/c2local/debian:bookworm
if ! have "$base"; then
  say "image $base: debootstrap (minbase) from the Debian mirror"
  rm -rf "$work/rootfs"
  debootstrap --variant=minbase --include=ca-certificates,tzdata,busybox-static \
    bookworm "$work/rootfs" http://deb.debian.org/debian >"$work/debootstrap.log" 2>&1 \
    || { tail -n 20 "$work/debootstrap.log" >&2; fail "debootstrap"; }
  # No services start inside image builds.
  rm -f "$work/rootfs/etc/resolv.conf" "$work/rootfs/etc/hostname"
  printf '#!/bin/sh\nexit 101\n' >"$work/rootfs/usr/sbin/policy-rc.d"
  chmod 0755 "$work/rootfs/usr/sbin/policy-rc.d"
  rm -rf "$work/rootfs/var/cache/apt/archives/"*.deb "$work/rootfs/var/lib/apt/lists/"*_Packages
  tar -C "$work/rootfs" -c . | podman import --quiet \
    --change 'CMD ["/bin/bash"]' --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    - "$base" >/dev/null
  rm -rf "$work/rootfs"
fi

golang="$(fq "$(image_of golang)")"
if ! have "$golang"; then
  ctx="$work/golang-ctx"; rm -rf "$ctx"; mkdir -p "$ctx"
  cp -a "$(go env GOROOT)" "$ctx/go"
  cp /etc/ssl/certs/ca-certificates.crt "$ctx/"
  build "$golang" deploy/local-images/golang.Containerfile "$ctx"
  rm -rf "$ctx"
fi
empty="$work/empty-ctx"; mkdir -p "$empty"
build "$(fq "$(image_of gcr.io/distroless/static-debian12)")" deploy/local-images/distroless-static.Containerfile "$empty"
nats_version="$(awk '$1 == "github.com/nats-io/nats-server/v2" {print $2}' go.mod)"
build "$(fq "$(image_of nats)")" deploy/local-images/nats.Containerfile "$empty" --build-arg "NATS_VERSION=$nats_version"
build "$(fq "$(image_of redis)")" deploy/local-images/redis.Containerfile "$empty"
build "$(fq "$(image_of prom/prometheus)")" deploy/local-images/prometheus.Containerfile "$empty"
jaeger="$(fq "$(image_of jaegertracing/jaeger)")"
if ! have "$jaeger"; then
  say "jaeger: scripts/build-jaeger.sh (6-12 min the first time)"
  bin="$(scripts/build-jaeger.sh)" || { say "scripts/build-jaeger.sh failed"; exit 3; }
  ctx="$work/jaeger-ctx"; rm -rf "$ctx"; mkdir -p "$ctx"; cp "$bin" "$ctx/jaeger"
  build "$jaeger" deploy/local-images/jaeger.Containerfile "$ctx"
  rm -rf "$ctx"
fi

if [ "${1:-}" = images ]; then say "images ready"; exit 0; fi

# Podman must be able to start a container before compose can: on hosts
# where crun cannot handle the cgroups or runc cannot raise the hard
# rlimits Podman asks for, /etc/containers/containers.conf needs runtime,
# cgroup_manager and default_ulimits (docs/operations.md).
podman run --rm --network none "$base" true >"$work/smoke.log" 2>&1 \
  || { cat "$work/smoke.log" >&2; say "podman cannot start a container here (see /etc/containers/containers.conf: runtime = \"runc\", cgroup_manager = \"cgroupfs\", default_ulimits)"; exit 3; }

# --- Docker API and compose ------------------------------------------------
started_service=
hc_pid=
cleanup() {
  local rc=$?
  if [ -z "${C2_LOCAL_KEEP:-}" ] && [ -n "${up:-}" ]; then
    say "compose down -v"
    compose down -v >"$work/down.log" 2>&1 || { tail -n 20 "$work/down.log" >&2; rc=1; }
  fi
  [ -n "$hc_pid" ] && kill "$hc_pid" 2>/dev/null || true
  if [ -n "$started_service" ] && [ -z "${C2_LOCAL_KEEP:-}" ]; then
    kill "$started_service" 2>/dev/null || true
    wait "$started_service" 2>/dev/null || true
  fi
  exit $rc
}
trap cleanup EXIT

if [ "${C2_COMPOSE:-docker}" = podman-compose ]; then
  # Fallback: Debian's podman-compose (1.0.x) drives podman directly. It
  # ignores depends_on's conditions (services start in file order, the
  # coordinator and the worker restart until the params volume is filled)
  # and has no `cp`.
  need podman-compose "apt-get install podman-compose"
  compose() { podman-compose -p c2cluster "$@"; }
  say "podman-compose $(podman-compose version 2>/dev/null | awk '/podman-compose/ {print $NF; exit}')"
else
  need docker "the docker CLI"
  compose() { docker compose "$@"; }
  if ! docker version >/dev/null 2>&1; then
    sock="${DOCKER_HOST#unix://}"
    [ "$sock" != "$DOCKER_HOST" ] || { say "no Docker API at $DOCKER_HOST"; exit 3; }
    say "podman system service on $DOCKER_HOST"
    mkdir -p "$(dirname "$sock")"
    podman system service --time=0 "$DOCKER_HOST" >"$work/podman-service.log" 2>&1 &
    started_service=$!
    for _ in $(seq 100); do docker version >/dev/null 2>&1 && break; sleep 0.1; done
    docker version >/dev/null 2>&1 || { tail -n 20 "$work/podman-service.log" >&2; fail "podman system service did not answer"; }
  fi
  if ! docker compose version >/dev/null 2>&1; then
    say "docker compose: building github.com/docker/compose/v5 into ~/.docker/cli-plugins (minutes)"
    v="${C2_COMPOSE_VERSION:-v5.6.0}"
    dir="$(cd "$work" && go mod download -json "github.com/docker/compose/v5@$v" | awk -F'"' '$2 == "Dir" {print $4}')"
    [ -n "$dir" ] || { say "cannot download github.com/docker/compose/v5@$v"; exit 3; }
    rm -rf "$work/compose-src"; cp -r "$dir" "$work/compose-src"; chmod -R u+w "$work/compose-src"
    mkdir -p ~/.docker/cli-plugins
    (cd "$work/compose-src" && nice go build -trimpath -o ~/.docker/cli-plugins/docker-compose ./cmd) \
      || { say "building docker compose failed"; exit 3; }
  fi
  say "$(docker compose version)"
fi

# Healthchecks: Podman runs them from systemd timers; where there is no
# systemd nobody runs them and depends_on's service_healthy never comes.
# This loop runs each running container's healthcheck every 3 s.
(
  while :; do
    for c in $(podman ps --filter label=com.docker.compose.project=c2cluster --format '{{.ID}}' 2>/dev/null); do
      podman healthcheck run "$c" >/dev/null 2>&1 || true
    done
    sleep 3
  done
) &
hc_pid=$!

# Published host ports: docker-compose.yml takes each from a variable
# (default: the service's own port). A port that a host service already
# holds (a host nats-server on 4222, redis-server on 6379) is replaced by the
# next free one; ports set in the environment are used as they are.
taken=" "
port_free() { ! ss -Hltn "sport = :$1" 2>/dev/null | grep -q . && [[ "$taken" != *" $1 "* ]]; }
for spec in C2_NATS_PORT:4222 C2_NATS_HTTP_PORT:8222 C2_REDIS_PORT:6379 C2_JAEGER_PORT:16686 \
            C2_OTLP_PORT:4317 C2_API_PORT:8080 C2_PROMETHEUS_PORT:9090; do
  var="${spec%%:*}" port="${spec#*:}"
  if [ -z "${!var:-}" ]; then
    while ! port_free "$port"; do port=$((port + 1)); done
    export "$var=$port"
  fi
  taken="$taken${!var} "
done
api="http://127.0.0.1:$C2_API_PORT" jaeger_api="http://127.0.0.1:$C2_JAEGER_PORT" prom="http://127.0.0.1:$C2_PROMETHEUS_PORT"
say "published ports: API $C2_API_PORT, NATS $C2_NATS_PORT (monitor $C2_NATS_HTTP_PORT), Redis $C2_REDIS_PORT, Jaeger $C2_JAEGER_PORT (OTLP $C2_OTLP_PORT), Prometheus $C2_PROMETHEUS_PORT"

up=1
# One image at a time: the params, coordinator and worker builds share the
# Go module and build caches (the Dockerfiles' cache mounts), so each one
# after the first compiles only its own packages; three at once on a small
# host would compile everything three times over.
say "compose build (one image at a time): params, coordinator, worker-cpu"
COMPOSE_PARALLEL_LIMIT=1 compose build params coordinator worker-cpu >"$work/compose-build.log" 2>&1 \
  || { tail -n 40 "$work/compose-build.log" >&2; fail "compose build"; }
say "compose up -d --build ${services[*]}"
compose up -d --build "${services[@]}" >"$work/up.log" 2>&1 \
  || { tail -n 40 "$work/up.log" >&2; podman ps -a >&2 || true; fail "compose up"; }

deadline=$((SECONDS + 300))
until curl -fsS -o /dev/null "$api/healthz" 2>/dev/null; do
  [ $SECONDS -lt $deadline ] || { podman ps -a >&2; fail "coordinator /healthz did not answer within 300 s"; }
  sleep 1
done
say "stack up: coordinator /healthz answers"
podman ps -a --filter label=com.docker.compose.project=c2cluster --format '{{.Names}}\t{{.Status}}' >&2 || true

# --- one job end to end ----------------------------------------------------
go build -o "$work/coordinator" ./coordinator
# The cluster's verifying key, from the params volume (through the
# coordinator container, which mounts it): the client checks the proof it
# receives with it, and `coordinator verify` checks it again.
rm -rf "$work/params" "$work/x.c1.json" "$work/proof.bin"; mkdir -p "$work/params"
ctr="$(podman ps -q --filter label=com.docker.compose.project=c2cluster --filter label=com.docker.compose.service=coordinator | head -n1)"
podman cp "$ctr:/params/test-micro.vk" "$work/params/test-micro.vk" || fail "copying test-micro.vk out of the coordinator"
# A plain C1 output does not name its miner and sector: the same ones go to
# seal, prove and verify.
sector=(-miner f01000 -sector 1)
"$work/coordinator" seal -shape test-micro "${sector[@]}" -out "$work/x.c1.json" >/dev/null 2>"$work/seal.log" \
  || { cat "$work/seal.log" >&2; fail "seal"; }
say "sealed test-micro: $work/x.c1.json"
p0=$SECONDS
"$work/coordinator" prove -addr "$api" -c1 "$work/x.c1.json" "${sector[@]}" -params-dir "$work/params" -out "$work/proof.bin" \
  >"$work/prove.out" 2>"$work/prove.log" || { cat "$work/prove.log" >&2; fail "prove"; }
job="$(awk '/^submitted job/ {sub(":", "", $3); print $3; exit}' "$work/prove.log")"
say "proved job $job through $api in $((SECONDS - p0)) s ($(stat -c %s "$work/proof.bin") bytes)"

"$work/coordinator" verify -c1 "$work/x.c1.json" -proof "$work/proof.bin" -shape test-micro "${sector[@]}" \
  -params-dir "$work/params" >"$work/verify.log" 2>&1 || { cat "$work/verify.log" >&2; fail "the proof does not verify"; }
say "proof verifies (coordinator verify, the params volume's test-micro.vk)"

curl -fsS "$api/ui/" -o "$work/ui.html" || fail "GET /ui/"
grep -qi '<html' "$work/ui.html" || fail "/ui/ is not a web page"
curl -fsS "$api/ui/api/jobs/$job" -o "$work/job.json" || fail "GET /ui/api/jobs/$job"
trace="$(jq -r '.. | objects | .trace_id? // empty' "$work/job.json" | head -n1)"
[ -n "$trace" ] || fail "/ui/api/jobs/$job names no trace_id"
say "web page /ui/ answers; job $job has trace $trace"

deadline=$((SECONDS + 60))
until curl -fsS "$jaeger_api/api/traces/$trace" -o "$work/trace.json" 2>/dev/null \
  && [ "$(jq -r '[.data[].processes[].serviceName] | unique | map(select(. == "c2-coordinator" or . == "c2-worker")) | length' "$work/trace.json")" = 2 ]; do
  [ $SECONDS -lt $deadline ] || fail "Jaeger's query API has no trace $trace with c2-coordinator and c2-worker spans"
  sleep 2
done
spans="$(jq '[.data[].spans[]] | length' "$work/trace.json")"
say "Jaeger ($jaeger_api/api/traces/$trace): $spans spans from c2-coordinator and c2-worker"
curl -fsS "$api/ui/api/traces/$trace" -o "$work/ui-trace.json" \
  || fail "the coordinator's trace view (/ui/api/traces/$trace, Jaeger through the compose network)"
say "the coordinator's /ui/api/traces/$trace reads it from jaeger:16686"

deadline=$((SECONDS + 90))
until curl -fsS "$prom/api/v1/targets" -o "$work/targets.json" 2>/dev/null \
  && [ "$(jq -r '[.data.activeTargets[] | select(.health == "up") | .labels.job | select(. == "coordinator" or . == "worker")] | unique | length' "$work/targets.json")" = 2 ]; do
  [ $SECONDS -lt $deadline ] || { cat "$work/targets.json" >&2; fail "Prometheus does not scrape both the coordinator and the worker"; }
  sleep 3
done
say "Prometheus scrapes job=coordinator and job=worker (health up)"
say "PASS: one test-micro job through the compose stack in $((SECONDS - t0)) s"
