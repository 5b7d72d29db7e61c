#!/bin/bash
# BERT-large with AdamW fused (one in-place pass over parameters, gradients and both moments)
# against foreach (PyTorch's default on CUDA), on main (883dfb0): each
# natively, then at 2x (mode fast, the resident limit half that run's native peak reserved), eight
# steps. From the repository root; results into $OUT.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
s=$(date +%s)
DEEPUM_BUILD_TARGETS="deepum" scripts/build.sh /tmp/bn -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/bn.log 2>&1 || { tail -30 /tmp/bn.log; exit 1; }
echo "build $(( $(date +%s)-s ))s"
python3 bench/pinned_copy_rate.py > $OUT/call3-link.txt 2>&1; tail -1 $OUT/call3-link.txt
mkdir -p $OUT/call3
hf=(python3 examples/zoo/train_hf.py --model bert-large --batch 16 --seq-len 512 --steps 8)
for impl in fused foreach; do
  timeout 60 "${hf[@]}" --adamw $impl > $OUT/call3/$impl-native.log 2>&1
  F=$(grep -oE 'peak_reserved_bytes [0-9]+' $OUT/call3/$impl-native.log | awk '{print $2}')
  echo "$impl native exit $? F=$F at $(( $(date +%s)-s ))s: $(grep -oE 'time_ms [0-9.]+' $OUT/call3/$impl-native.log | awk '{printf "%.0f ", $2}')"
  env DEEPUM_ALLOC_LIMIT=60% DEEPUM_MODE=fast DEEPUM_RESIDENT_LIMIT=$(( F / 2 ))B DEEPUM_STATS_FILE=$OUT/call3/$impl-2x.stats.json \
    LD_PRELOAD=/tmp/bn/lib/libdeepum.so timeout 75 "${hf[@]}" --adamw $impl > $OUT/call3/$impl-2x.log 2>&1
  echo "$impl 2x exit $? at $(( $(date +%s)-s ))s: $(grep -oE 'time_ms [0-9.]+' $OUT/call3/$impl-2x.log | awk '{printf "%.0f ", $2}')"
  grep -E "summary|verdict" $OUT/call3/$impl-2x.log | tail -3
done
tar cf $OUT/call3.tar -C $OUT call3 && rm -rf $OUT/call3
echo "done at $(( $(date +%s)-s ))s"
