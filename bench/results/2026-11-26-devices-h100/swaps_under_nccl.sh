#!/bin/bash
# Swaps under NCCL with the drop-after-copies fix: DDP and FSDP2 losses, repeated.
set -uo pipefail
export NCCL_NVLS_ENABLE=0
nvidia-smi --query-gpu=name,memory.free --format=csv
DEEPUM_BUILD_TARGETS="deepum" scripts/build.sh /tmp/bn -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
lib=/tmp/bn/lib/libdeepum.so
tr=(python3 -m torch.distributed.run --standalone --nproc_per_node=2)
R=$OUT/runs; mkdir -p $R
summary() { awk '/^step/ {print $2, $4}' "$1"; }
for kind in ddp fsdp; do
  flag=(); [[ $kind == fsdp ]] && flag=(--fsdp)
  args=(examples/distributed/train_gpt2_distributed.py --preset gpt2-124m --batch 4 --steps 4 "${flag[@]}")
  timeout 200 "${tr[@]}" "${args[@]}" > $R/$kind-native.log 2>&1
  fp=$(awk '/^footprint_bytes/ {print $2}' $R/$kind-native.log)
  echo "$kind native footprint $fp"; grep '^step' $R/$kind-native.log
  for i in 1 2 3; do
    for sw in on; do
      env=(DEEPUM_ALLOC_LIMIT=16GiB DEEPUM_MODE=fast DEEPUM_STATS_FILE=$R/$kind-$sw-$i-%p.json DEEPUM_RESIDENT_LIMIT=$((fp/2))B LD_PRELOAD=$lib)
      [[ $sw == on ]] && env+=(SCRATCH_SWAPS_UNDER_NCCL=1)
      timeout 250 env "${env[@]}" "${tr[@]}" "${args[@]}" > $R/$kind-$sw-$i.log 2>&1; rc=$?
      if diff <(summary $R/$kind-native.log) <(summary $R/$kind-$sw-$i.log) >/dev/null; then v=same; else v=DIFFER; fi
      sw_b=$(python3 -c "import json,glob,sys; print([json.load(open(f))['engine']['moves'].get('swapped_out_bytes') for f in sorted(glob.glob('$R/$kind-$sw-$i-*.json'))])" 2>/dev/null)
      t=$(awk '/^step/ {print $6}' $R/$kind-$sw-$i.log | tail -1)
      echo "RESULT $kind swaps_under_nccl=$sw run $i rc=$rc losses=$v last_step_ms=$t swapped=$sw_b"
      grep -i "swaps and placement\|error\|warn" $R/$kind-$sw-$i.log | sort | uniq -c | head -5
    done
  done
done
tar czf $OUT/nccl-runs.tar.gz -C $OUT runs && rm -rf $R
echo; grep -h RESULT $OUT/*.txt 2>/dev/null
