#!/bin/bash
# Copies back ahead issued by the eviction thread (working tree) against the program's thread (the
# tree with .scratch/thread.patch reversed): zoo at 2x, ABBA; then GPU tests that swap, with the new one.
set -uo pipefail
nvidia-smi --query-gpu=name,memory.free --format=csv,noheader
rm -rf /tmp/old && mkdir -p /tmp/old && cp -r $(ls -A | grep -v '^\.scratch$') /tmp/old/ && (cd /tmp/old && patch -s -R -p1 < $OLDPWD/.scratch/thread.patch) || { echo "patch -R failed"; exit 1; }
(cd /tmp/old && DEEPUM_BUILD_TARGETS="deepum" scripts/build.sh /tmp/bo -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/build-old.log 2>&1) &
scripts/build.sh /tmp/bt -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
wait; [ -f /tmp/bo/lib/libdeepum.so ] || { tail -30 /tmp/build-old.log; exit 1; }
python3 bench/pinned_copy_rate.py --json $OUT/link.json 2>&1 | tail -1
n=0
for lib in old new new old; do
  n=$((n+1)); L=/tmp/bt/lib/libdeepum.so; [ $lib = old ] && L=/tmp/bo/lib/libdeepum.so
  timeout 300 python3 tests/zoo/model_zoo.py --lib $L --sweep /tmp/bt/tests/sweep --out $OUT/zoo-$n-$lib --modes "fastest 2x" --only cuda-sweep cupy gpt2 > $OUT/zoo-$n-$lib.txt 2>&1
  echo "== run $n $lib"; grep -E "fastest" $OUT/zoo-$n-$lib.txt
done
for d in $OUT/zoo-*-*/; do python3 - "$d" <<'PY'
import json, sys, glob, os
for f in sorted(glob.glob(sys.argv[1] + "logs/*.stats.json")):
    d = json.load(open(f)); pt = d["program_thread"]; m = d["engine"]["moves"]
    print(os.path.basename(os.path.dirname(sys.argv[1].rstrip("/"))) , sys.argv[1].rstrip("/").split("/")[-1], os.path.basename(f).split(".")[0],
          "prog_move_ms", {k: v // 1000000 for k, v in pt["move_calls_ns"].items()},
          "launch_p50_us", pt["launch_callback"]["p50_ns"] // 1000, "p99_us", pt["launch_callback"]["p99_ns"] // 1000,
          "thread_ms", d["engine"]["eviction_thread"]["move_calls_ns"] // 1000000, "ahead_GiB", round(m["restored_ahead_bytes"] / 2**30, 2))
PY
done > $OUT/program-thread.txt
cd /tmp/bt
s=$(date +%s)
ctest -R "gpu_pytorch_swap_losses|gpu_pytorch_eviction_thread_losses|gpu_pytorch_unnamed_writes_swap|gpu_sweep_frees_under_moves|gpu_pytorch_graphs|gpu_pytorch_lifecycle|gpu_device_reset|gpu_jax_losses_fastest|gpu_pytorch_place_fresh_losses" --output-on-failure > $OUT/ctest.txt 2>&1
echo "tests $(( $(date +%s)-s ))s"; grep -E "Test +#|tests passed" $OUT/ctest.txt
cd $OUT && tar czf zoo-logs.tar.gz zoo-*/ && rm -rf zoo-*/
cat $OUT/program-thread.txt | awk '{print $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20}' | cut -c1-250
