#!/usr/bin/env bash
# One-shot c2-bench run on a GPU machine that has nvcc but no Go (a lent
# device machine): build libc2groth16.so there, optionally run the command's
# CUDA test, run c2-bench, keep its log and JSON in $OUT, print the table.
#
# Expects, built on a machine with Go (docs/operations.md, "Benchmarking C2
# on a GPU host"):
#   .devbuild/c2-bench          CGO_ENABLED=1 go build -o .devbuild/c2-bench ./worker/cmd/c2-bench
#   .devbuild/c2-bench.test     (TEST=1) CGO_ENABLED=1 go test -c -o .devbuild/c2-bench.test ./worker/cmd/c2-bench
#   .devbuild/libc2groth16.so   (optional) a prebuilt library (OUT_DIR=.devbuild/cudabuild cuda/build.sh, copied):
#                               used when it loads there (BUILD=auto) or the build there fails
#
# Environment:
#   OUT       folder for logs and JSON (default /tmp/c2-bench-out)
#   BUILD     auto (default): the carried library if it loads (python3 ctypes), else
#             cuda/build.sh there; 1: always build; 0: only the carried library
#   TEST      1: run TestBenchCUDA (test-micro, 2 partitions) before the bench
#   ARGS      c2-bench flags (default: -shape 2KiB -partitions 6 -sweep)
#   NAME      name of the JSON and log files (default c2-bench)
#   PROCS     device indexes, e.g. "0 1": one c2-bench process per device at
#             once (ARGS plus -devices <d>), files <NAME>-dev<d>.*
#   DEADLINE  seconds from the start by which everything must end (default 570:
#             the device tool allows 600 s per command)
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
scripts/devpack.sh unpack  # a compressed .devpack/ carried instead of .devbuild/
out="${OUT:-/tmp/c2-bench-out}"
name="${NAME:-c2-bench}"
mkdir -p "$out"
start_s=$(date +%s)
deadline=$(( start_s + ${DEADLINE:-570} ))
left() { local l=$(( deadline - $(date +%s) - 5 )); (( l < 1 )) && l=1; echo "$l"; }

nvidia-smi --query-gpu=index,name,driver_version,memory.total,memory.used --format=csv 2>&1
echo "cores: $(nproc); $(grep MemTotal /proc/meminfo); cgroup memory.max: $(cat /sys/fs/cgroup/memory.max 2>/dev/null || echo none)"
lscpu 2>/dev/null | grep -E "^(Model name|Thread|Core|Socket|NUMA node\(s\))" | tr -s " " | paste -sd ";" -

lib="$root/.devbuild/libc2groth16.so"
build="${BUILD:-auto}"
if [[ "$build" == auto ]]; then
  build=1
  if [[ -f "$lib" ]] && python3 -c "import ctypes,sys; ctypes.CDLL(sys.argv[1])" "$lib" 2>/tmp/c2-bench-load.log; then
    build=0
    echo "using the carried library $lib"
  fi
fi
if [[ "$build" == 1 ]]; then
  t0=$(date +%s)
  if JOBS="${JOBS:-$(nproc)}" cuda/build.sh >"$out/build.log" 2>&1; then
    lib="$root/cuda/build/libc2groth16.so"
    echo "build: ok in $(( $(date +%s) - t0 )) s ($(nvcc --version | tail -1))"
  else
    echo "build: FAILED (see build.log); falling back to .devbuild/libc2groth16.so"
    tail -20 "$out/build.log"
  fi
fi
[[ -f "$lib" ]] || { echo "no library at $lib"; exit 1; }
export C2G_CUDA_LIB="$lib"

if [[ "${TEST:-0}" == 1 ]]; then
  t0=$(date +%s)
  (cd worker/cmd/c2-bench && timeout "$(left)" "$root/.devbuild/c2-bench.test" -test.v -test.count=1 \
    -test.run 'TestBenchCUDA' -test.timeout "$(left)s") >"$out/$name-test.log" 2>&1
  echo "TestBenchCUDA: rc=$? ($(( $(date +%s) - t0 )) s): $(grep -E '^(--- |ok|FAIL|PASS)' "$out/$name-test.log" | tr '\n' ' ')"
fi

summary() { # the stage lines of a c2-bench log
  grep -E "^\[ *[0-9.]+s\] (input: [^[]|compile: [0-9]|params: (gen|read|wrote|none|not)|prover: |run [0-9]+/[0-9]+: [a-z]+×)" "$1" | tail -40
}
bench() { # bench FILE-BASE ARGS...: one c2-bench run, its table, log and JSON as $out/FILE-BASE.*
  local base="$1"
  shift
  timeout "$(left)" .devbuild/c2-bench -backend cuda -cuda-library "$lib" -json "$out/$base.json" "$@" \
    >"$out/$base.table" 2>"$out/$base.log"
}
if [[ -n "${PROCS:-}" ]]; then
  # One c2-bench process per device in $PROCS (e.g. "0 1"), all at once,
  # each with ARGS plus -devices <its device>: the "several worker
  # processes on one host" configuration. Each prints its own table.
  pids=()
  for d in $PROCS; do
    # shellcheck disable=SC2086
    bench "$name-dev$d" -devices "$d" $ARGS &
    pids+=($!)
  done
  rc=0
  for p in "${pids[@]}"; do wait "$p" || rc=$?; done
  for d in $PROCS; do
    echo "== process on device $d"
    summary "$out/$name-dev$d.log"
    cat "$out/$name-dev$d.table"
  done
  (( rc != 0 )) && echo "c2-bench: rc=$rc (one process at least)"
else
  # shellcheck disable=SC2086
  bench "$name" ${ARGS:--shape 2KiB -partitions 6 -sweep}
  rc=$?
  summary "$out/$name.log"
  if (( rc != 0 )); then echo "c2-bench: rc=$rc"; tail -15 "$out/$name.log"; fi
  cat "$out/$name.table"
fi
echo "total $(( $(date +%s) - start_s )) s"
exit $rc
