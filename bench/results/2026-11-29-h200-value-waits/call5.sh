#!/bin/bash
# Call 5: GPT-2 124M and the CuPy loop at 2x (mode fast) under the working tree against native:
# programs that issue no stream memory wait are never held (held_by_value_waits 0).
set -uo pipefail
s=$(date +%s)
DEEPUM_BUILD_TARGETS="deepum" scripts/build.sh /tmp/bn -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/bn.log 2>&1 || tail -30 /tmp/bn.log
echo "build $(( $(date +%s)-s ))s"
python3 tests/zoo/model_zoo.py --lib /tmp/bn/lib/libdeepum.so --sweep /tmp/bn/tests/sweep --out $OUT/zoo --modes "fastest 2x" --only gpt2 cupy > $OUT/call5-zoo.txt 2>&1
for f in $OUT/zoo/logs/*.stats.json; do
  python3 -c "import json,sys;e=json.load(open(sys.argv[1]))['engine'];print(sys.argv[1].split('/')[-1], 'held_by_value_waits', e['held_by_value_waits'], 'swapped MiB', e['moves']['swapped_out_bytes']>>20)" $f
done | tee $OUT/call5-held.txt
tar czf $OUT/call5-logs.tar.gz -C $OUT/zoo . && rm -rf $OUT/zoo
tail -8 $OUT/call5-zoo.txt
