#!/usr/bin/env bash
# The device tool carries at most 64 MiB of ignored files; a few libraries
# and binaries (11-21 MB each) do not fit uncompressed. gzip shrinks them
# ~2.5-4.5x.
#
#   scripts/devpack.sh pack     # here: .devbuild/<path> -> .devpack/<path>.gz (every file)
#   scripts/devpack.sh unpack   # there: .devpack/<path>.gz -> .devbuild/<path>
#
# Carry [".devpack"]; c2-bench-gpu.sh, cuda/devrun.sh and cuda/devcmp.sh
# unpack it themselves when it is there.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
case "${1:-}" in
pack)
  rm -rf .devpack
  while IFS= read -r -d '' f; do
    rel="${f#.devbuild/}"
    mkdir -p ".devpack/$(dirname "$rel")"
    gzip -9 -c "$f" > ".devpack/$rel.gz"
  done < <(find .devbuild -type f -print0)
  du -sh .devpack
  ;;
unpack)
  [[ -d .devpack ]] || exit 0
  while IFS= read -r -d '' f; do
    rel="${f#.devpack/}"
    rel="${rel%.gz}"
    mkdir -p ".devbuild/$(dirname "$rel")"
    gzip -dc "$f" > ".devbuild/$rel"
    [[ "$rel" == *.so ]] || chmod +x ".devbuild/$rel"
  done < <(find .devpack -type f -name '*.gz' -print0)
  ;;
*)
  echo "usage: $0 pack|unpack" >&2
  exit 2
  ;;
esac
