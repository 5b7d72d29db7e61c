#!/bin/bash
# The 1B decoder in bf16 autocast with activation checkpointing (batch 8, 1,024 tokens), AdamW
# foreach (PyTorch's default) and fused, each natively then at 2x (mode fast, resident limit half
# that run's native peak reserved), ten steps; the foreach run at 2x again with a trace file. On
# main. From the repository root; results into $OUT.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
s=$(date +%s)
DEEPUM_BUILD_TARGETS="deepum" scripts/build.sh /tmp/bn -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/bn.log 2>&1 || { tail -30 /tmp/bn.log; exit 1; }
echo "build $(( $(date +%s)-s ))s"
python3 bench/pinned_copy_rate.py > $OUT/call2-link.txt 2>&1; tail -1 $OUT/call2-link.txt
mkdir -p $OUT/call2
hf=(python3 examples/zoo/train_hf.py --model llama-1b --batch 8 --seq-len 1024 --vocab 32000 --dtype bf16 --checkpointing --steps 10)
run2x() {  # impl tag extra-env...
  local impl=$1 tag=$2; shift 2
  env DEEPUM_ALLOC_LIMIT=60% DEEPUM_MODE=fast DEEPUM_RESIDENT_LIMIT=$(( F / 2 ))B DEEPUM_STATS_FILE=$OUT/call2/$tag.stats.json "$@" \
    LD_PRELOAD=/tmp/bn/lib/libdeepum.so timeout 150 "${hf[@]}" --adamw $impl > $OUT/call2/$tag.log 2>&1
  echo "$tag exit $? at $(( $(date +%s)-s ))s: $(grep -oE 'time_ms [0-9.]+' $OUT/call2/$tag.log | awk '{printf "%.0f ", $2}')"
}
for impl in foreach fused; do
  timeout 90 "${hf[@]}" --adamw $impl > $OUT/call2/$impl-native.log 2>&1
  F=$(grep -oE 'peak_reserved_bytes [0-9]+' $OUT/call2/$impl-native.log | awk '{print $2}')
  echo "$impl native F=$F at $(( $(date +%s)-s ))s: $(grep -oE 'time_ms [0-9.]+' $OUT/call2/$impl-native.log | awk '{printf "%.0f ", $2}')"
  run2x $impl $impl-2x
done
F=$(grep -oE 'peak_reserved_bytes [0-9]+' $OUT/call2/foreach-native.log | awk '{print $2}')
run2x foreach foreach-2x-traced DEEPUM_TRACE_FILE=/tmp/bf16ckpt
t=/tmp/bf16ckpt.dtrace; ls -la /tmp/bf16ckpt* 2>/dev/null
[ -n "$t" ] && xz -T8 -3 -c "$t" > $OUT/bf16ckpt.dtrace.xz && ls -la $OUT/bf16ckpt.dtrace.xz
for f in $OUT/call2/*.log; do echo "== $f"; grep -E "verdict|loss" $f | tail -2; done > $OUT/call2-tails.txt
tar cf $OUT/call2.tar -C $OUT call2 && rm -rf $OUT/call2
echo "done at $(( $(date +%s)-s ))s"
