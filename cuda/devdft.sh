#!/usr/bin/env bash
# One-shot device check of the G1 group DFT (c2g_dft_g1) on a GPU machine
# with nvcc but no Go: builds libc2groth16.so there, runs the DFT tests
# against gnark-crypto on the GPU (with the subgroup and arithmetic tests,
# which share its sources), times the DFT as the ceremony H conversion runs
# it (inverse, the input scaled on the device) at 2^20 (the window and
# table variants), 2^24 and 2^27 (32 GiB's domain) — or, when 2^27 would
# not end in the time left, at 2^26 or 2^25, extrapolated to 2^27 by the
# number of scalar multiplications and marked so — and prints a table.
# Logs and JSON go to $OUT (5 files).
#
# Expects, built on a machine with Go (15 MB, carried as .devbuild/dft):
#   mkdir -p .devbuild/dft
#   CGO_ENABLED=1 go test -c -o .devbuild/dft/cuda.test ./pkg/groth16/cuda/
#   CGO_ENABLED=1 go build -o .devbuild/dft/c2g-bench ./pkg/groth16/cuda/cmd/c2g-bench
#
# Environment: OUT (default /tmp/c2g-devdft-out); DEADLINE (seconds from
# the start by which everything ends, default 450); BIN (default
# .devbuild/dft); LIB (a library to use instead of building one); SIZES
# (default "24 27": the timed sizes after the variants); VARIANT_LOG
# (default 20: the variants' size).
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
out="${OUT:-/tmp/c2g-devdft-out}"
bin="$root/${BIN:-.devbuild/dft}"
mkdir -p "$out"
tmp="$(mktemp -d)"
start_s=$(date +%s)
deadline=$(( start_s + ${DEADLINE:-450} ))
left() { local l=$(( deadline - $(date +%s) - 5 )); (( l < 1 )) && l=1; echo "$l"; }
status=()

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv 2>&1
nvcc --version 2>&1 | tail -1
for f in cuda.test c2g-bench; do
  [[ -x "$bin/$f" ]] || { echo "missing $bin/$f (see this script's header)"; exit 1; }
done

lib="${LIB:-}"
if [[ -z "$lib" ]]; then
  t0=$(date +%s)
  if JOBS="${JOBS:-$(nproc)}" timeout "$(left)" cuda/build.sh >"$out/build.log" 2>&1; then
    lib="$root/cuda/build/libc2groth16.so"
    status+=("build: ok ($(( $(date +%s) - t0 )) s, $(nvcc --version | tail -1))")
  else
    echo "build: FAILED"
    tail -30 "$out/build.log"
    exit 1
  fi
fi
export C2G_CUDA_LIB="$lib"

t0=$(date +%s)
tt=$(left)
(cd pkg/groth16/cuda && timeout "$tt" "$bin/cuda.test" -test.v -test.count=1 -test.timeout "${tt}s" \
  -test.run 'TestDFTG1|TestSubgroupCheck|TestDeviceArithmetic') >"$out/test.log" 2>&1
rc=$?
grep -E -- "--- (FAIL|SKIP)" "$out/test.log" | head -20
grep -E "dft_test.go:[0-9]+: 2\^" "$out/test.log"
status+=("tests: rc=$rc, $(grep -c -- '--- PASS' "$out/test.log") passes (tests and subtests), $(grep -c -- '--- FAIL' "$out/test.log") failures ($(( $(date +%s) - t0 )) s)")
(( rc == 0 )) || tail -40 "$out/test.log"

bench() { # bench NAME LOG [ENV...]: one c2g-bench -dft run into $tmp/NAME.json, log appended to bench.log
  local name="$1" lg="$2"
  shift 2
  echo "== $name: $* c2g-bench -dft $lg" >>"$out/bench.log"
  env "$@" timeout "$(left)" "$bin/c2g-bench" -lib "$lib" -g1= -g2= -ntt= -partition=false -dft "$lg" \
    -json "$tmp/$name.json" >>"$out/bench.log" 2>&1
  local r=$?
  (( r == 0 )) || { echo "bench $name: rc=$r"; tail -5 "$out/bench.log"; }
  return $r
}
# device ms of the run NAME (its only result)
devms() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["results"][0]["device_ms"])' "$tmp/$1.json"; }
# scalar multiplications of a scaled 2^L transform: (L - 2) 2^(L-1) + 1 twiddles, 2^L scale
muls() { echo $(( ($1 - 2) * (1 << ($1 - 1)) + 1 + (1 << $1) )); }

vlog="${VARIANT_LOG:-20}"
for w in 4 5; do
  for a in on off; do
    bench "v$vlog-w$w-$a" "$vlog" C2G_DFT_WINDOW=$w C2G_DFT_AFFINE=$a
  done
done

extrapolated=""
prev=""  # the last size timed and its device ms
for lg in ${SIZES:-24 27}; do
  if [[ -n "$prev" ]]; then
    read -r pl pms <<<"$prev"
    want="$lg"
    # time this size would take (device), plus 60 s for drawing the points and the host copies
    est=$(python3 -c "print(int($pms / 1000 * $(muls "$lg") / $(muls "$pl")) + 60)")
    while (( est > $(left) && lg > pl + 1 )); do
      echo "2^$lg estimated at ${est} s with $(left) s left: trying 2^$(( lg - 1 ))"
      extrapolated="$want"
      lg=$(( lg - 1 ))
      est=$(python3 -c "print(int($pms / 1000 * $(muls "$lg") / $(muls "$pl")) + 60)")
    done
    if (( est > $(left) )); then
      echo "2^$lg estimated at ${est} s with $(left) s left: skipped"
      extrapolated="$want"
      continue
    fi
  fi
  t0=$(date +%s)
  if bench "n$lg" "$lg"; then
    status+=("dft 2^$lg: $(( $(date +%s) - t0 )) s in all")
    prev="$lg $(devms "n$lg")"
  fi
done

python3 - "$tmp" "$out" "$extrapolated" <<'EOF' | tee "$out/summary.txt"
import glob, json, os, sys
tmp, out, extra = sys.argv[1], sys.argv[2], sys.argv[3]
runs = {}
for f in sorted(glob.glob(os.path.join(tmp, "*.json"))):
    runs[os.path.basename(f)[:-5]] = json.load(open(f))
json.dump(runs, open(os.path.join(out, "dft-bench.json"), "w"), indent=1)
muls = lambda l: (l - 2) * 2 ** (l - 1) + 1 + 2 ** l
print("\ngroup DFT, inverse, input scaled, G1 (device: the scale and the butterfly stages; wall: the call with host copies)")
print(f"{'run':<14} {'size':>5} {'window':>6} {'affine':>6} {'device s':>10} {'wall s':>9} {'ns/mul':>8}")
big = None
for name, rep in runs.items():
    for r in rep["results"]:
        aff = "on" if "affine table true" in r.get("note", "") else "off"
        ns = r["device_ms"] * 1e6 / muls(r["log_n"])
        print(f"{name:<14} 2^{r['log_n']:<3} {r['window_bits']:>6} {aff:>6} {r['device_ms']/1e3:>10.2f} {r['wall_ms']/1e3:>9.2f} {ns:>8.1f}")
        if name.startswith("n") and (big is None or r["log_n"] > big["log_n"]):
            big = r
if big is not None and big["log_n"] < 27:
    f = muls(27) / muls(big["log_n"])
    print(f"2^27 EXTRAPOLATED from 2^{big['log_n']} (x{f:.2f} scalar multiplications): device {big['device_ms']*f/1e3:.1f} s, "
          f"wall about {big['wall_ms']*f/1e3:.1f} s per DFT; a ceremony H query takes two")
elif big is not None:
    print(f"2^27 measured: device {big['device_ms']/1e3:.1f} s, wall {big['wall_ms']/1e3:.1f} s per DFT; a ceremony H query takes two")
if extra:
    print(f"(2^{extra} would not have ended in the time left; the largest size timed is above)")
EOF
rm -rf "$tmp"
echo
printf '%s\n' "${status[@]}"
echo "total $(( $(date +%s) - start_s )) s"
