#!/bin/bash
# The 1B decoder in bf16 autocast with activation checkpointing at 2x, ten steps, two runs under
# each build taking turns (the working tree with the pause [bn], main without it [bb]): whether a
# run falls into the slow backward of ../2026-12-01-h200-new-shapes (call 2), and the program
# thread's time; then the fp32 decoder once each if time is left. From the repository root.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
s=$(date +%s)
bench/ab_builds.sh bench/results/2026-12-01-h200-peak-pause/peak-pause.patch || exit 1
echo "builds $(( $(date +%s)-s ))s"
python3 bench/pinned_copy_rate.py > $OUT/call2-link.txt 2>&1; tail -1 $OUT/call2-link.txt
mkdir -p $OUT/call2
one() {  # tag lib F cmd...
  local tag=$1 lib=$2 F=$3; shift 3
  env DEEPUM_ALLOC_LIMIT=60% DEEPUM_MODE=fast DEEPUM_RESIDENT_LIMIT=$(( F / 2 ))B DEEPUM_STATS_FILE=$OUT/call2/$tag.stats.json \
    LD_PRELOAD=$lib timeout 150 "$@" > $OUT/call2/$tag.log 2>&1
  echo "$tag exit $? at $(( $(date +%s)-s ))s: $(grep -oE 'time_ms [0-9.]+' $OUT/call2/$tag.log | awk '{printf "%.0f ", $2}')"
  python3 -c "
import json; d=json.load(open('$OUT/call2/$tag.stats.json')); m=d['engine']['moves']; pt=d['program_thread']
print('  skipped', m['spare_victims_skipped_blocks'], 'launch hook s %.2f'%(pt['launch_callback']['total_ns']/1e9), 'of it move calls s %.2f'%(pt['move_calls_ns']['total']/1e9))"
}
ckpt=(python3 examples/zoo/train_hf.py --model llama-1b --batch 8 --seq-len 1024 --vocab 32000 --dtype bf16 --checkpointing --steps 10)
timeout 90 "${ckpt[@]}" > $OUT/call2/ckpt-native.log 2>&1
F=$(grep -oE 'peak_reserved_bytes [0-9]+' $OUT/call2/ckpt-native.log | awk '{print $2}')
echo "ckpt native F=$F: $(grep -oE 'time_ms [0-9.]+' $OUT/call2/ckpt-native.log | awk '{printf "%.0f ", $2}')"
for i in 1 2; do one ckpt-bn-$i /tmp/bn/lib/libdeepum.so $F "${ckpt[@]}"; one ckpt-bb-$i /tmp/bb/lib/libdeepum.so $F "${ckpt[@]}"; done
if [ $(( $(date +%s)-s )) -lt 330 ]; then
  dec=(python3 examples/zoo/train_hf.py --model llama-1b --batch 4 --seq-len 512 --vocab 32000 --steps 8)
  timeout 60 "${dec[@]}" > $OUT/call2/dec-native.log 2>&1
  F=$(grep -oE 'peak_reserved_bytes [0-9]+' $OUT/call2/dec-native.log | awk '{print $2}')
  echo "decoder native F=$F: $(grep -oE 'time_ms [0-9.]+' $OUT/call2/dec-native.log | awk '{printf "%.0f ", $2}')"
  one dec-bb /tmp/bb/lib/libdeepum.so $F "${dec[@]}"
  one dec-bn /tmp/bn/lib/libdeepum.so $F "${dec[@]}"
fi
for f in $OUT/call2/*.log; do echo "== $f"; grep -E "^step [0-9]+ loss" $f | tail -1; done > $OUT/call2-losses.txt
tar czf $OUT/call2.tar.gz -C $OUT call2 && rm -rf $OUT/call2
echo "done at $(( $(date +%s)-s ))s"
