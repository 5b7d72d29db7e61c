#!/bin/bash
# ab.sh: builds the two libraries compared. B, the working tree (HEAD: placements after their
# blocks' earlier users, 75d1eef, and the wait shared with discards, 64be694), into /tmp/bn, again
# each call (incrementally), with BN_TARGETS (default: the library and the sweep; empty: every
# target); A, the same tree with change.patch (2555b12..HEAD in cuda/, core/, sim/) taken back out,
# into /tmp/bb, once per warm machine. From the repository root.
set -uo pipefail
d=bench/results/2026-12-02-h200-drop-overlap
s=$(date +%s)
if [[ ! -f /tmp/bb/lib/libdeepum.so ]]; then
  rm -rf /tmp/base && cp -a . /tmp/base && (cd /tmp/base && patch -s -R -p1 < $d/change.patch) || exit 1
  DEEPUM_BUILD_TARGETS="deepum" /tmp/base/scripts/build.sh /tmp/bb -DDEEPUM_WARNINGS_AS_ERRORS=OFF > /tmp/buildb.log 2>&1 &
fi
DEEPUM_BUILD_TARGETS="${BN_TARGETS-deepum sweep}" scripts/build.sh /tmp/bn -DDEEPUM_BUILD_BENCH=ON \
  -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF > /tmp/buildn.log 2>&1 || { tail -30 /tmp/buildn.log; exit 1; }
wait || true
[[ -f /tmp/bb/lib/libdeepum.so ]] || { tail -30 /tmp/buildb.log; exit 1; }
echo "builds $(( $(date +%s)-s ))s"
