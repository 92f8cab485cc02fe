#!/usr/bin/env bash
# Compare prebuilt library variants in one device call: the GPU tests against
# each library of TEST_VARIANTS, c2g-bench on each of VARIANTS, and an
# optional MSM window sweep (SWEEP="20 21 22 23") on the first of VARIANTS.
# A variant is a folder .devbuild/<name>/ holding libc2groth16.so (built
# here, e.g. `OUT_DIR=/tmp/x C2G_MUL_CALL=0 cuda/build.sh`); .devbuild/ also
# holds cuda.test and c2g-bench as for devrun.sh. Logs and bench JSON go to
# $OUT. Environment: TEST_RUN, TEST_TIMEOUT, BENCH_ARGS, BENCH_TIMEOUT.
set -u
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
scripts/devpack.sh unpack  # a compressed .devpack/ carried instead of .devbuild/
out="${OUT:-/tmp/c2g-devcmp-out}"
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
for v in ${TEST_VARIANTS:-}; do
  t0=$(date +%s)
  (cd pkg/groth16/cuda && C2G_CUDA_LIB="$root/.devbuild/$v/libc2groth16.so" timeout "${TEST_TIMEOUT:-230}" \
    "$root/.devbuild/cuda.test" -test.v -test.count=1 -test.run "${TEST_RUN:-.}") >"$out/test-$v.log" 2>&1
  echo "tests $v: rc=$? passes=$(grep -c -- '--- PASS' "$out/test-$v.log") fails=$(grep -c -- '--- FAIL' "$out/test-$v.log") ($(( $(date +%s) - t0 )) s)"
  grep -- '--- FAIL' "$out/test-$v.log" | head
done
for v in ${VARIANTS:-}; do
  # shellcheck disable=SC2086
  timeout "${BENCH_TIMEOUT:-200}" .devbuild/c2g-bench -lib "$root/.devbuild/$v/libc2groth16.so" \
    -json "$out/bench-$v.json" ${BENCH_ARGS:-} >"$out/bench-$v.log" 2>&1
  echo "== bench $v: rc=$?"
  sed -n '/^summary/,$p' "$out/bench-$v.log" | tail -n +3
done
first="${VARIANTS:-}"; first="${first%% *}"
for c in ${SWEEP:-}; do
  C2G_MSM_WINDOW_BITS=$c timeout 60 .devbuild/c2g-bench -lib "$root/.devbuild/$first/libc2groth16.so" \
    -g1 26,27 -g2= -ntt= -partition=false -reps 1 >"$out/sweep-$c.log" 2>&1
  echo "window $c ($first): $(grep -E '^msm_g1 ' "$out/sweep-$c.log" | tr -s ' ' | cut -d' ' -f2-4 | tr '\n' ' ')"
done
