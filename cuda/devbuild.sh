#!/usr/bin/env bash
# Builds library variants on the device machine with its own nvcc, for
# cuda/devcmp.sh and cuda/devncu.sh: the whole library once into
# .devbuild/base/, then each variant as a copy of those objects with UNITS
# (default msm_g1) recompiled under its flags, all variants at once.
#
#   VARIANTS="pf2=-DC2G_AFF_PF=2 pf1=-DC2G_AFF_PF=1" bash cuda/devbuild.sh
#
# A variant is name=flags (flags joined by commas: "x=-DA=1,-DB=2").
# Environment: NVCC_FLAGS (every build, e.g. -lineinfo), UNITS (all: every
# unit, for a switch the scratch plan depends on, e.g. -DC2G_MSM_CHUNK=16),
# OUT (logs), WORK (the object folders, default /tmp/c2g-lb).
set -u
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
out="${OUT:-/tmp/c2g-devbuild-out}"
work="${WORK:-/tmp/c2g-lb}"
mkdir -p "$out" "$work"
t0=$(date +%s)
OUT_DIR="$work/base" JOBS="$(nproc)" bash cuda/build.sh >"$out/build-base.log" 2>&1 || {
  echo "build base: failed"; tail -20 "$out/build-base.log"; exit 1; }
mkdir -p .devbuild/base && cp "$work/base/libc2groth16.so" .devbuild/base/
echo "build base: $(( $(date +%s) - t0 )) s"
units="${UNITS:-msm_g1}"
[[ "$units" == all ]] && units="$(cd cuda/src && ls ./*.cu | sed 's|^\./||; s|\.cu$||' | tr '\n' ' ')"
pids=() names=()
for spec in ${VARIANTS:-}; do
  name="${spec%%=*}" flags="${spec#*=}"
  rm -rf "${work:?}/$name" && cp -r "$work/base" "$work/$name"
  ( OUT_DIR="$work/$name" ONLY="$units" NVCC_FLAGS="${NVCC_FLAGS:-} ${flags//,/ }" bash cuda/build.sh \
      >"$out/build-$name.log" 2>&1 && mkdir -p ".devbuild/$name" && cp "$work/$name/libc2groth16.so" ".devbuild/$name/" ) &
  pids+=($!) names+=("$name")
done
for k in "${!pids[@]}"; do
  if wait "${pids[$k]}"; then echo "build ${names[$k]}: ok"; else echo "build ${names[$k]}: failed"; tail -20 "$out/build-${names[$k]}.log"; fi
done
echo "builds: $(( $(date +%s) - t0 )) s"
