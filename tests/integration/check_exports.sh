#!/usr/bin/env bash
# check_exports.sh LIB MAP: the library's dynamic symbol table defines exactly the symbols listed as
# global in the version script, nothing more (no spdlog, fmt or C++ runtime symbols) and nothing less.
set -euo pipefail
lib=$1 map=$2
expected=$(sed -n '/global:/,/local:/p' "$map" | grep -v -e 'global:' -e 'local:' | tr ';' '\n' |
  tr -d ' \t' | grep -v '^$' | sort)
actual=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TtWwDdBbVv]$/ {print $3}' | sed 's/@.*//' | sort)
if [[ "$expected" != "$actual" ]]; then
  echo "FAIL: exported symbols differ from $map"
  diff <(echo "$expected") <(echo "$actual") || true
  exit 1
fi
echo "PASS: $(wc -l <<<"$actual") symbols exported, exactly the interposers"
