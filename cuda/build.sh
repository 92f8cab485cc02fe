#!/usr/bin/env bash
# Builds libc2groth16.so, the CUDA Groth16 prover, with nvcc.
#
#   cuda/build.sh                 # -> cuda/build/libc2groth16.so
#   CUDA_ARCH=sm_80 cuda/build.sh # another GPU generation
#   cuda/build.sh hostarith       # -> cuda/build/libc2g_hostarith.so (g++, no CUDA)
#   cuda/build.sh emulator        # -> cuda/build/libc2groth16_emu.so (g++, CPU emulator)
#
# Environment: NVCC (default nvcc), CUDA_ARCH (default sm_90), OUT_DIR
# (default cuda/build), JOBS (parallel compiles, default nproc),
# NVCC_FLAGS (extra flags), C2G_MUL_CALL (default 1: the NTT and MSM units
# call one out-of-line field product; 0 inlines every product),
# C2G_NTT_FLAGS (extra flags for the ntt unit only, also in the emulator
# build, e.g. a -D switch of an experiment; objects are not rebuilt when only flags
# change: use a fresh OUT_DIR or ONLY=ntt).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${OUT_DIR:-$here/build}"
mkdir -p "$out"
# One build per OUT_DIR at a time: two at once would write a library mixed
# from both. A second build waits for the first.
if command -v flock >/dev/null 2>&1; then
  exec 9>"$out/.build.lock"
  if ! flock -n 9; then
    echo "build.sh: another build is writing $out; waiting for it" >&2
    flock 9
  fi
fi

# Every .cu file under src/ is one compilation unit of the library.
units=()
for f in "$here"/src/*.cu; do units+=("$(basename "$f" .cu)"); done

if [[ "${1:-}" == "emulator" ]]; then
  # The whole library for the CPU emulator of the CUDA runtime (test/emu):
  # the same sources, compiled by g++; the tests build it themselves.
  pids=()
  for src in "${units[@]}"; do
    unit=()
    # shellcheck disable=SC2206
    [[ "$src" == ntt ]] && unit=(${C2G_NTT_FLAGS:-})
    "${CXX:-g++}" -x c++ -std=c++17 -O3 -fPIC "${unit[@]}" -I "$here/test/emu" -c "$here/src/$src.cu" -o "$out/emu_$src.o" &
    pids+=($!)
  done
  fail=0
  for p in "${pids[@]}"; do wait "$p" || fail=1; done
  (( fail == 0 )) || { echo "build.sh: emulator compilation failed" >&2; exit 1; }
  "${CXX:-g++}" -shared -o "$out/libc2groth16_emu.so" "$out"/emu_*.o
  echo "$out/libc2groth16_emu.so"
  exit 0
fi

if [[ "${1:-}" == "hostarith" ]]; then
  "${CXX:-g++}" -O2 -std=c++17 -shared -fPIC -o "$out/libc2g_hostarith.so" "$here/test/hostarith.cpp"
  echo "$out/libc2g_hostarith.so"
  exit 0
fi

nvcc="${NVCC:-nvcc}"
arch="${CUDA_ARCH:-sm_90}"
jobs="${JOBS:-$(nproc)}"
flags=(-O3 -std=c++17 -arch="$arch" -Xcompiler -fPIC -Xcompiler -fvisibility=hidden --expt-relaxed-constexpr)
# the host's popcount instruction for the upload's density counts (every
# x86-64 CPU since 2008 has it; without the flag g++ counts bits in software)
[[ "$(uname -m)" == x86_64 ]] && flags+=(-Xcompiler -mpopcnt)
# shellcheck disable=SC2206
flags+=(${NVCC_FLAGS:-})
# ONLY="msm_g1 ..." recompiles just those units (the other objects must be in
# OUT_DIR already); otherwise a unit is rebuilt when it or a header is newer
# than its object.
only=" ${ONLY:-} "
objs=()
pids=()
for src in "${units[@]}"; do
  obj="$out/$src.o"
  objs+=("$obj")
  if [[ -n "${ONLY:-}" ]]; then
    [[ "$only" == *" $src "* ]] || continue
  elif [[ -f "$obj" ]]; then
    newer=$(find "$here/src/$src.cu" "$here/src" "$here/include" -newer "$obj" -name '*.cu*' -o -newer "$obj" -name '*.h' | head -1)
    [[ -z "$newer" ]] && continue
  fi
  unit=()
  # The hot units call one out-of-line field product instead of inlining
  # hundreds of them: the fully inlined kernels (9,640 SASS instructions for
  # the G1 accumulation, 7,142 for the NTT pass) outgrow the instruction
  # cache. Their point and Fp2 operations are then inlined (one level of
  # calls), which makes the G1 and G2 MSMs faster on an H200.
  # C2G_MUL_CALL=0 restores the inlined products (point operations then
  # inlined in the G1 unit only).
  if [[ "${C2G_MUL_CALL:-1}" != 0 ]]; then
    case "$src" in
      ntt) unit=(-DC2G_FR_MUL_CALL) ;;
      msm_g1 | msm_g2 | subgroup | dft) unit=(-DC2G_FP_MUL_CALL -DC2G_FP2_INLINE -DC2G_POINT_INLINE) ;;
    esac
  elif [[ "$src" == msm_g1 ]]; then
    unit=(-DC2G_POINT_INLINE)
  fi
  # shellcheck disable=SC2206
  [[ "$src" == ntt ]] && unit+=(${C2G_NTT_FLAGS:-})
  "$nvcc" "${flags[@]}" "${unit[@]}" -c "$here/src/$src.cu" -o "$obj" &
  pids+=($!)
  while (( $(jobs -rp | wc -l) >= jobs )); do sleep 0.2; done
done
fail=0
for p in "${pids[@]}"; do wait "$p" || fail=1; done
(( fail == 0 )) || { echo "build.sh: compilation failed" >&2; exit 1; }
"$nvcc" -arch="$arch" -shared -o "$out/libc2groth16.so" "${objs[@]}"
echo "$out/libc2groth16.so"
