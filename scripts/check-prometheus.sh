#!/usr/bin/env bash
# Checks the monitoring files with promtool: deploy/prometheus/prometheus.yml
# and the rules it loads (`check config`), rules.yml (`check rules`) and the
# alerts' unit tests, rules_test.yml (`test rules`: each alert fires and
# stays quiet on synthetic series). pkg/telemetry's TestMonitoringNamesExist
# checks that the metrics they name exist.
#
# promtool comes from Debian's prometheus package. When it is not on PATH,
# only promtool is taken out of the package (apt-get download, dpkg-deb:
# about 2 s with the package lists, a 19 MB download) and kept as
# bin/promtool; installing the package would bring the Prometheus server,
# its web assets and an init script that starts it wherever no policy-rc.d
# forbids it. Exit 3: no promtool and no Debian package manager here.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

promtool="$(command -v promtool || true)"
if [ -z "$promtool" ]; then
  promtool="$root/bin/promtool"
  if [ ! -x "$promtool" ]; then
    if ! command -v apt-get >/dev/null 2>&1 || ! command -v dpkg-deb >/dev/null 2>&1; then
      echo "check-prometheus: no promtool and no apt-get/dpkg-deb to take it from Debian's prometheus package" >&2
      exit 3
    fi
    tmp="$(mktemp -d)"
    trap 'rm -rf "$tmp"' EXIT
    echo "check-prometheus: promtool not found; taking it from Debian's prometheus package (bin/promtool)"
    if ! (cd "$tmp" && apt-get download -qq prometheus >/dev/null 2>&1); then
      # No package lists yet, or stale ones: update them once.
      sudo=(); if [ "$(id -u)" != 0 ]; then sudo=(sudo); fi
      "${sudo[@]}" apt-get update -qq
      (cd "$tmp" && apt-get download -qq prometheus >/dev/null)
    fi
    dpkg-deb --fsys-tarfile "$tmp"/prometheus_*.deb | tar -x -C "$tmp" ./usr/bin/promtool
    mkdir -p bin
    mv "$tmp/usr/bin/promtool" bin/promtool
  fi
fi
echo "check-prometheus: $("$promtool" --version 2>&1 | head -1)"
"$promtool" check config deploy/prometheus/prometheus.yml
"$promtool" check rules deploy/prometheus/rules.yml
(cd deploy/prometheus && "$promtool" test rules rules_test.yml)
echo "check-prometheus: prometheus.yml, rules.yml and their unit tests pass (promtool)"
