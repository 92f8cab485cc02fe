#!/usr/bin/env bash
# One-shot GPU run: build libc2groth16.so with the host's nvcc, run the GPU
# tests, run the benchmarks, keep logs under $OUT, print a short table last.
#
# Expects (built on a machine with Go, see docs/cuda.md):
#   .devbuild/cuda.test      go test -c ./pkg/groth16/cuda
#   .devbuild/c2g-bench      go build ./pkg/groth16/cuda/cmd/c2g-bench
#   .devbuild/libc2groth16.so (optional) a prebuilt library, used only when
#                             the local build fails
# Environment: OUT (log folder, default /tmp/c2g-devrun-out), STEPS (default
# "build test bench"; add "variant" for the build with every field product
# inlined (C2G_MUL_CALL=0) and the MSM window sweep), LIB (library to test instead of the one built here),
# TEST_RUN (go test -run pattern), BENCH_ARGS (extra c2g-bench flags),
# TEST_TIMEOUT / BENCH_TIMEOUT (seconds), VARIANT_G1 / VARIANT_G2 / VARIANT_NTT,
# WINDOW_SWEEP.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
scripts/devpack.sh unpack  # a compressed .devpack/ carried instead of .devbuild/
out="${OUT:-/tmp/c2g-devrun-out}"
mkdir -p "$out"
steps="${STEPS:-build test bench}"
lib="${LIB:-$root/cuda/build/libc2groth16.so}"
status=()
# Everything must end inside the device tool's 600 s per call: each step gets
# at most what is left before DEADLINE seconds (default 570).
start_s=$(date +%s)
deadline=$(( start_s + ${DEADLINE:-570} ))
left() { # left WANT: the smaller of WANT and the seconds left (minus a margin)
  local l=$(( deadline - $(date +%s) - 5 ))
  (( l < 1 )) && l=1
  (( $1 < l )) && l=$1
  echo "$l"
}

# (the device tool brings back at most 8 files from $OUT: keep to that)
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv 2>&1
nvcc --version 2>&1 | tail -1

if [[ " $steps " == *" build "* ]]; then
  t0=$(date +%s)
  if JOBS="${JOBS:-16}" cuda/build.sh >"$out/build.log" 2>&1; then
    status+=("build: ok ($(( $(date +%s) - t0 )) s, $(nvcc --version | tail -1))")
  else
    status+=("build: FAILED (see build.log)")
    tail -30 "$out/build.log"
    if [[ -f .devbuild/libc2groth16.so ]]; then
      lib="$root/.devbuild/libc2groth16.so"
      status+=("using the carried prebuilt library")
    fi
  fi
fi
export C2G_CUDA_LIB="$lib"

# Variant: the NTT and MSM units with every field product inlined
# (C2G_MUL_CALL=0; compiled in the background while the tests run,
# benchmarked after the main benchmark).
if [[ " $steps " == *" variant "* ]]; then
  mkdir -p cuda/build/inline
  cp cuda/build/*.o cuda/build/inline/ 2>/dev/null
  (OUT_DIR="$root/cuda/build/inline" ONLY="ntt msm_g1 msm_g2" C2G_MUL_CALL=0 cuda/build.sh \
    >"$out/build-inline.log" 2>&1; echo "rc=$?" >>"$out/build-inline.log") &
  variant_pid=$!
fi

if [[ " $steps " == *" test "* ]]; then
  t0=$(date +%s)
  # from the package folder, as go test would (tests find cuda/ relative to it)
  tt=$(left "${TEST_TIMEOUT:-200}")
  (cd pkg/groth16/cuda && timeout "$tt" "$root/.devbuild/cuda.test" -test.v -test.count=1 \
    -test.timeout "${tt}s" -test.run "${TEST_RUN:-.}") >"$out/test.log" 2>&1
  rc=$?
  grep -E "^(--- |=== RUN|FAIL|ok|PASS)" "$out/test.log" | grep -E "^--- (FAIL|SKIP)" | head -40
  status+=("tests: rc=$rc, $(grep -c '^--- PASS' "$out/test.log") top-level+sub passes, $(grep -c -- '--- FAIL' "$out/test.log") failures ($(( $(date +%s) - t0 )) s)")
  if (( rc != 0 )); then tail -40 "$out/test.log"; fi
fi

if [[ " $steps " == *" bench "* ]]; then
  t0=$(date +%s)
  # shellcheck disable=SC2086
  timeout "$(left "${BENCH_TIMEOUT:-220}")" .devbuild/c2g-bench -lib "$lib" -json "$out/cuda-bench.json" ${BENCH_ARGS:-} \
    >"$out/bench.log" 2>&1
  rc=$?
  status+=("bench: rc=$rc ($(( $(date +%s) - t0 )) s)")
  if (( rc != 0 )); then tail -20 "$out/bench.log"; fi
  sed -n '/^summary/,$p' "$out/bench.log"
fi

if [[ " $steps " == *" variant "* ]]; then
  t0=$(date +%s)
  # the variant build must finish in time, or the variant step is dropped
  while kill -0 "$variant_pid" 2>/dev/null && (( $(left 1000) > 60 )); do sleep 2; done
  kill -0 "$variant_pid" 2>/dev/null && { kill "$variant_pid"; echo "rc=timeout" >>"$out/build-inline.log"; }
  wait "$variant_pid" 2>/dev/null
  if grep -q "rc=0" "$out/build-inline.log"; then
    timeout "$(left 90)" .devbuild/c2g-bench -lib "$root/cuda/build/inline/libc2groth16.so" -g1 "${VARIANT_G1:-24,26}" -g2 "${VARIANT_G2:-22}" \
      -ntt "${VARIANT_NTT:-27}" -partition=false -json "$out/cuda-bench-inline.json" >"$out/bench-inline.log" 2>&1
    status+=("variant (inlined field products): rc=$? (waited+ran $(( $(date +%s) - t0 )) s)")
    sed -n '/^summary/,$p' "$out/bench-inline.log"
    # window sweep of the G1 MSM at 2^26 (both builds), to check the cost model
    for c in ${WINDOW_SWEEP:-18 20 21 22}; do
      for v in build build/inline; do
        echo "== window $c, $v" >>"$out/sweep.log"
        (( $(left 100) > 30 )) || { echo "window sweep stopped: out of time"; break 2; }
        C2G_MSM_WINDOW_BITS=$c timeout "$(left 40)" .devbuild/c2g-bench -lib "$root/cuda/$v/libc2groth16.so" -g1 26 -g2 "" \
          -ntt "" -partition=false -reps 2 >"$out/sweep.tmp" 2>&1
        cat "$out/sweep.tmp" >>"$out/sweep.log"
        echo "window $c $v: $(grep -E '^msm_g1 ' "$out/sweep.tmp" | tr -s ' ' | cut -d' ' -f3-6 | tr '\n' ' ')"
      done
    done
  else
    status+=("variant build failed"); tail -5 "$out/build-inline.log"
  fi
fi

echo
rm -f "$out/sweep.tmp"
printf '%s\n' "${status[@]}"
