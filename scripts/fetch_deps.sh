#!/usr/bin/env bash
# Unpacks the header-only dependencies (spdlog, fmt, nlohmann_json, CLI11, doctest) from Debian's
# packages into .deps/ so that one build works both here and on machines with no package
# manager (the GPU machine): carry .deps there. Idempotent.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
deps="$root/.deps"
pkgs=(libspdlog-dev libfmt-dev nlohmann-json3-dev libcli11-dev doctest-dev)
if [[ -f "$deps/include/nlohmann/json.hpp" && -f "$deps/include/spdlog/spdlog.h" &&
      -f "$deps/include/fmt/format.h" && -f "$deps/include/CLI/CLI.hpp" &&
      -f "$deps/include/doctest/doctest.h" ]]; then
  echo "fetch_deps: .deps/ already holds the headers"
  exit 0
fi
command -v apt-get >/dev/null || { echo "fetch_deps: apt-get not found; copy .deps/ from a Debian machine" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if ! (cd "$work" && apt-get download "${pkgs[@]}" >/dev/null 2>&1); then
  apt-get update -qq
  (cd "$work" && apt-get download "${pkgs[@]}")
fi
mkdir -p "$work/x" "$deps"
for deb in "$work"/*.deb; do dpkg -x "$deb" "$work/x"; done
rm -rf "$deps/include"
cp -r "$work/x/usr/include" "$deps/include"
echo "fetch_deps: headers in $deps/include"
