#!/bin/bash
# direct2x.sh LIB TAG WORKLOAD...: each workload at 2x under LIB, run directly with the zoo's
# command and the resident limit the zoo set for it on 2026-12-01 (half its native footprint),
# allocation limit 60%; per-step times and the swap store's pinning from the statistics.
# From the repository root; results into $OUT/$TAG-NAME.{log,stats.json}; the store's pinning from
# swap_store_pin_ns, the time deepum's worker spent pinning.
set -uo pipefail
lib=$1 tag=$2; shift 2
PY=/opt/torch/.venv/bin/python3; HF=examples/zoo/train_hf.py
for n in "$@"; do
  case $n in
    gpt2-350m) limit=11345592320; cmd=($PY examples/pytorch/train_gpt2.py --preset gpt2-350m --batch 8 --steps 5 --warmup-steps 1) ;;
    llama-1b) limit=9783214080; cmd=($PY $HF --model llama-1b --batch 4 --seq-len 512 --vocab 32000 --steps 5) ;;
    bert-large) limit=10482614272; cmd=($PY $HF --model bert-large --batch 16 --seq-len 512 --steps 5) ;;
    t5-base) limit=6568280064; cmd=($PY $HF --model t5-base --batch 16 --seq-len 512 --steps 5) ;;
    *) echo "unknown $n"; continue ;;
  esac
  s=$(date +%s)
  env DEEPUM_MODE=fast DEEPUM_RESIDENT_LIMIT=${limit}B DEEPUM_ALLOC_LIMIT=60% DEEPUM_STATS_FILE=$OUT/$tag-$n.stats.json \
    LD_PRELOAD=$lib timeout 150 "${cmd[@]}" > $OUT/$tag-$n.log 2>&1
  rc=$?
  pin=$(python3 -c "import json;e=json.load(open('$OUT/$tag-$n.stats.json'))['engine'];print('%.2f GiB pinned in %.2f s' % (e['swap_store_pinned_bytes']/2**30, e['swap_store_pin_ns']/1e9))" 2>/dev/null)
  echo "$tag $n exit $rc $(( $(date +%s)-s ))s steps: $(grep '^step' $OUT/$tag-$n.log | awk '{printf "%s ", $6}')| $pin"
done
