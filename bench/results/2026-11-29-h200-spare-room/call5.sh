#!/bin/bash
# Call 5: the GPU tests on ae0b066 (the spare-room change alone). Run from the repository root;
# results into $OUT.
set -uo pipefail
s=$(date +%s)
scripts/build.sh /tmp/bt -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildt.log 2>&1 || { tail -30 /tmp/buildt.log; exit 1; }
echo "build $(( $(date +%s)-s ))s"
(cd /tmp/bt && timeout 190 ctest -L gpu -j4 --output-on-failure > $OUT/call5-ctest-gpu.txt 2>&1)
echo "ctest exit $? at $(( $(date +%s)-s ))s"
tail -4 $OUT/call5-ctest-gpu.txt
