#!/usr/bin/env bash
# Builds Jaeger (v2, the all-in-one "jaeger" binary) from the separate Go
# module in tools/jaeger, so Jaeger's dependencies never enter c2cluster's
# go.mod. The binary is cached under bin/ (git-ignored) with the version in
# its name and reused; the build takes 6-12 min on 2 cores the first time
# (unoptimized, below).
#
#   scripts/build-jaeger.sh          # prints the binary's path on stdout
#
# Progress goes to stderr (scripts/lib/progress.sh: packages compiled and
# time, on one line on a terminal, else a line every 30 s; no background
# ticker, so the script ends the moment the build does). Exit status 3 means
# the build is impossible here (no Go toolchain, or the module proxy is
# unreachable and the modules are not in the cache); any other failure is a
# real error.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
source "$root/scripts/lib/progress.sh"
version="$(awk '$1 == "github.com/jaegertracing/jaeger" {print $2}' "$root/tools/jaeger/go.mod")"
if [ -z "$version" ]; then
  echo "build-jaeger: tools/jaeger/go.mod does not require github.com/jaegertracing/jaeger" >&2
  exit 1
fi
out="${C2_JAEGER_BIN:-$root/bin/jaeger-$version}"
if [ -x "$out" ]; then
  echo "$out"
  exit 0
fi
if ! command -v go >/dev/null 2>&1; then
  echo "build-jaeger: no Go toolchain on PATH" >&2
  exit 3
fi
mkdir -p "$(dirname "$out")"
# One build at a time: a second caller (scripts/test.sh starts the build
# beside the tests, and the end-to-end test asks for the binary too) waits
# for the first and then takes its binary.
if command -v flock >/dev/null 2>&1; then
  exec 9>"$out.lock"
  if ! flock -n 9; then
    echo "build-jaeger: another build of $out is running; waiting for it" >&2
    flock 9
  fi
  if [ -x "$out" ]; then
    echo "$out"
    exit 0
  fi
fi
cd "$root/tools/jaeger"
echo "build-jaeger: downloading modules of jaeger $version (tools/jaeger)" >&2
if ! go mod download >&2; then
  echo "build-jaeger: cannot download Jaeger's modules (no module proxy reachable?)" >&2
  exit 3
fi
echo "build-jaeger: building jaeger $version -> $out (6-12 min on 2 cores; cached afterwards)" >&2
start=$(date +%s)
tmp="$out.tmp.$$"
trap 'rm -f "$tmp"' EXIT
# Without the compiler's optimizations and inlining (-N -l): this Jaeger
# serves tests and the single-node demo (a few spans), and the build takes
# ~20 % less (347 vs 442 s on 2 cores, docs/operations.md "CI"); linked
# without DWARF or a symbol table (-s -w), which the linker spends less on.
progress_go_build "build-jaeger: building" -trimpath -gcflags='all=-N -l' -ldflags='-s -w' -o "$tmp" github.com/jaegertracing/jaeger/cmd/jaeger
mv "$tmp" "$out"
echo "build-jaeger: built in $(( $(date +%s) - start ))s" >&2
echo "$out"
