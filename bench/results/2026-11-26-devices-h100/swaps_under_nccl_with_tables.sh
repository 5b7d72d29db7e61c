#!/bin/bash
# Swaps under NCCL with pointer tables up to 256 KiB scanned: FSDP2 and DDP losses, repeated.
set -uo pipefail
export NCCL_NVLS_ENABLE=0
DEEPUM_BUILD_TARGETS="deepum" scripts/build.sh /tmp/bn -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
lib=/tmp/bn/lib/libdeepum.so
tr=(python3 -m torch.distributed.run --standalone --nproc_per_node=2)
R=$OUT/runs; mkdir -p $R
summary() { awk '/^step/ {print $2, $4}' "$1"; }
for spec in "fsdp 4" "ddp 2"; do
  set -- $spec; kind=$1; n=$2
  flag=(); [[ $kind == fsdp ]] && flag=(--fsdp)
  args=(examples/distributed/train_gpt2_distributed.py --preset gpt2-124m --batch 4 --steps 4 "${flag[@]}")
  timeout 200 "${tr[@]}" "${args[@]}" > $R/$kind-native.log 2>&1
  fp=$(awk '/^footprint_bytes/ {print $2}' $R/$kind-native.log)
  echo "$kind native footprint $fp"; grep '^step' $R/$kind-native.log
  for i in $(seq $n); do
    timeout 250 env DEEPUM_ALLOC_LIMIT=16GiB DEEPUM_MODE=fast DEEPUM_STATS_FILE=$R/$kind-$i-%p.json DEEPUM_RESIDENT_LIMIT=$((fp/2))B LD_PRELOAD=$lib SCRATCH_SWAPS_UNDER_NCCL=1 "${tr[@]}" "${args[@]}" > $R/$kind-$i.log 2>&1; rc=$?
    if diff <(summary $R/$kind-native.log) <(summary $R/$kind-$i.log) >/dev/null; then v=same; else v=DIFFER; fi
    info=$(python3 -c "import json,glob; print([(json.load(open(f))['engine']['moves']['swapped_out_bytes'], json.load(open(f))['tracer']['pointer_tables']) for f in sorted(glob.glob('$R/$kind-$i-*.json'))])" 2>/dev/null)
    t=$(awk '/^step/ {print $6}' $R/$kind-$i.log | tail -1)
    echo "RESULT $kind swaps_under_nccl run $i rc=$rc losses=$v last_step_ms=$t (swapped, pointer_tables)=$info"
  done
done
tar czf $OUT/nccl2-runs.tar.gz -C $OUT runs && rm -rf $R
