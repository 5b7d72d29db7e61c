#!/bin/bash
# ab.sh: builds the two libraries compared. B, the working tree (the swap store pinning its own
# huge-page mapping with cuMemHostRegister, ahead of need), into /tmp/bn with the tests and the
# pinning probe, again each call (incrementally); A, the same tree with change.patch taken back
# out (main's head, 7de42c1), into /tmp/bb, once per warm machine; PATCH=FILE takes FILE out
# instead (change2.patch: A is 8d71275). From the repository root.
set -uo pipefail
d=bench/results/2026-12-01-h200-swap-pinning
s=$(date +%s)
if [[ ! -f /tmp/bb/lib/libdeepum.so ]]; then
  rm -rf /tmp/base && cp -a . /tmp/base && (cd /tmp/base && patch -s -R -p1 < $d/${PATCH:-change.patch}) || exit 1
  DEEPUM_BUILD_TARGETS="deepum" /tmp/base/scripts/build.sh /tmp/bb -DDEEPUM_WARNINGS_AS_ERRORS=OFF > /tmp/buildb.log 2>&1 &
fi
DEEPUM_BUILD_TARGETS="${BN_TARGETS-deepum pin_rate_probe}" scripts/build.sh /tmp/bn -DDEEPUM_BUILD_BENCH=ON \
  -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF > /tmp/buildn.log 2>&1 || { tail -30 /tmp/buildn.log; exit 1; }
wait || true
[[ -f /tmp/bb/lib/libdeepum.so ]] || { tail -30 /tmp/buildb.log; exit 1; }
echo "builds $(( $(date +%s)-s ))s"
