#!/usr/bin/env bash
# Hardware counters of the MSM accumulation kernels on the device machine
# (ncu; docs/cuda.md, "Benchmarks and profiling"): for each library variant
# of VARIANTS (folders .devbuild/<name>/ as for devcmp.sh), one G1 MSM of
# 2^G1 points and one G2 MSM of 2^G2 points under ncu, profiling KERNELS
# (a regex, default the accumulation) for COUNT launches each, and with
# NTT=<log2 size> the NTT passes (NTT_KERNELS): issue activity, the FMA
# (IMAD) and ALU pipes' use, warps per scheduler, stall reasons. Logs in
# $OUT/ncu-<variant>-<g1|g2|ntt>-<set>.log; a short table after each.
# With SASS=1 instead: one launch of KERNELS in the G1 MSM (after
# LAUNCH_SKIP, default 1: the top window is short) under the warp
# stall sampler (ncu's SourceCounters), the per-instruction table as CSV in
# $OUT/sass-<variant>.csv, the most sampled instructions printed.
set -u
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
scripts/devpack.sh unpack
out="${OUT:-/tmp/c2g-devncu-out}"
mkdir -p "$out"
kernels="${KERNELS:-k_accumulate}"
metrics=(
  sm__throughput.avg.pct_of_peak_sustained_elapsed
  smsp__issue_active.avg.pct_of_peak_sustained_active
  sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active
  sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active
  sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active
  sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active
  smsp__warps_active.avg.per_cycle_active
  smsp__warps_eligible.avg.per_cycle_active
  smsp__average_warp_latency_issue_stalled_short_scoreboard.ratio
  smsp__average_warp_latency_issue_stalled_long_scoreboard.ratio
  smsp__average_warp_latency_issue_stalled_math_pipe_throttle.ratio
  smsp__average_warp_latency_issue_stalled_wait.ratio
  smsp__average_warp_latency_issue_stalled_no_instruction.ratio
  smsp__average_warp_latency_issue_stalled_not_selected.ratio
  smsp__average_warp_latency_issue_stalled_lg_throttle.ratio
  dram__throughput.avg.pct_of_peak_sustained_elapsed
  l1tex__throughput.avg.pct_of_peak_sustained_active
  gpu__time_duration.sum
)
# the FMA pipe's heavy half (where IMAD executes), asked separately: a name
# the profiler does not know fails only its own run
heavy=(
  sm__pipe_fmaheavy_cycles_active.avg.pct_of_peak_sustained_active
  sm__inst_executed_pipe_fmaheavy.avg.pct_of_peak_sustained_active
  sm__pipe_fmalite_cycles_active.avg.pct_of_peak_sustained_active
)
# prof <log name> <kernel regex> <c2g-bench args...>
prof() {
  local name=$1 re=$2
  shift 2
  local set
  for set in main heavy; do
    local m
    if [[ $set == main ]]; then m=$(IFS=,; echo "${metrics[*]}"); else m=$(IFS=,; echo "${heavy[*]}"); fi
    timeout "${NCU_TIMEOUT:-150}" ncu --clock-control none -k "regex:$re" -c "${COUNT:-2}" --metrics "$m" \
      .devbuild/c2g-bench -lib "$lib" "$@" -partition=false -reps 1 >"$out/ncu-$name-$set.log" 2>&1
    echo "== ncu $name ($set): rc=$?"
    grep -E "^\s+(sm|smsp|gpu)__" "$out/ncu-$name-$set.log" |
      awk '{k=$1; sub(/\.avg|\.sum|\.ratio/, "", k); a[k]=a[k] " " $NF} END{for (k in a) print "  " k a[k]}' | sort
  done
}
# sass <variant>: the stall sampler's per-instruction table of one launch
sass() {
  local v=$1 rep="$out/sass-$1"
  timeout "${NCU_TIMEOUT:-200}" ncu --clock-control none -k "regex:$kernels" -s "${LAUNCH_SKIP:-1}" -c 1 --section SourceCounters \
    --section WarpStateStats -f -o "$rep" \
    .devbuild/c2g-bench -lib "$lib" -g1 "${G1:-24}" -g2= -ntt= -partition=false -reps 1 >"$out/sass-$v.log" 2>&1
  echo "== ncu sass $v: rc=$?"
  ncu -i "$rep.ncu-rep" --page source --csv --print-source sass >"$out/sass-$v.csv" 2>>"$out/sass-$v.log"
  ncu -i "$rep.ncu-rep" --page details >"$out/sass-$v-details.log" 2>&1
  python3 "$root/cuda/tools/stall_top.py" "$out/sass-$v.csv" 40 || head -5 "$out/sass-$v.csv"
}
for v in ${VARIANTS:-base}; do
  lib="$root/.devbuild/$v/libc2groth16.so"
  if [[ "${SASS:-0}" == 1 ]]; then
    sass "$v"
    continue
  fi
  prof "$v-g1" "$kernels" -g1 "${G1:-24}" -g2= -ntt=
  prof "$v-g2" "$kernels" -g1= -g2 "${G2:-22}" -ntt=
  [[ -n "${NTT:-}" ]] && prof "$v-ntt" "${NTT_KERNELS:-k_ntt_pass}" -g1= -g2= -ntt "$NTT"
done
