#!/bin/bash
# Issue 24's rows at HEAD: DDP GPT-2 350M on 2 GPUs vs 1 (native, deepum 2x), FSDP2 350M native,
# deepum 2x and CPU offload; link rate of each card in the same call; then the two-GPU tests.
set -uo pipefail
export NCCL_NVLS_ENABLE=0
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
git log -1 --format='commit %h %s'
s=$(date +%s)
[ -f /tmp/bt/lib/libdeepum.so ] || scripts/build.sh /tmp/bt -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
echo "build $(( $(date +%s)-s ))s"
lib=/tmp/bt/lib/libdeepum.so
python3 bench/pinned_copy_rate.py --json $OUT/link-gpu0.json 2>&1 | tail -1
CUDA_VISIBLE_DEVICES=1 python3 bench/pinned_copy_rate.py --json $OUT/link-gpu1.json 2>&1 | tail -1
R=$OUT/runs; mkdir -p $R
row() {  # name log: median of steps 2.., samples/s, losses hash, peaks
  python3 - "$1" "$2" <<'PY'
import sys, re, hashlib, statistics
name, path = sys.argv[1], sys.argv[2]
steps = [l.split() for l in open(path, errors="replace") if l.startswith("step ")]
ms = [float(s[5]) for s in steps if int(s[1]) >= 2]
sps = [float(s[7]) for s in steps if int(s[1]) >= 2]
h = hashlib.sha1(" ".join(s[3] for s in steps).encode()).hexdigest()[:8]
peaks = [l.strip() for l in open(path, errors="replace") if l.startswith("ranks ")]
med = statistics.median(ms) if ms else float("nan")
print(f"{name:24s} steps={len(steps)} median_ms={med:.1f} samples/s={statistics.median(sps) if sps else 0:.2f} losses={h} {peaks[0] if peaks else ''}")
PY
}
tr() { timeout 300 python3 -m torch.distributed.run --standalone --nproc_per_node=$1 examples/distributed/train_gpt2_distributed.py --preset gpt2-350m --batch 4 --steps 6 "${@:2}"; }
dl() { DEEPUM_ALLOC_LIMIT=40GiB DEEPUM_MODE=fast DEEPUM_RESIDENT_LIMIT=$1B DEEPUM_STATS_FILE=$R/$2-%p.json LD_PRELOAD=$lib "${@:3}"; }
tr 2 > $R/ddp-native-2gpu.log 2>&1; row ddp-native-2gpu $R/ddp-native-2gpu.log
fp=$(awk '/^footprint_bytes/ {print $2}' $R/ddp-native-2gpu.log); echo "ddp footprint per rank $fp; limit $((fp/2))"
tr 1 > $R/ddp-native-1gpu.log 2>&1; row ddp-native-1gpu $R/ddp-native-1gpu.log
dl $((fp/2)) ddp2 tr 2 > $R/ddp-deepum-2gpu.log 2>&1; row ddp-deepum-2gpu-2x $R/ddp-deepum-2gpu.log
dl $((fp/2)) ddp1 tr 1 > $R/ddp-deepum-1gpu.log 2>&1; row ddp-deepum-1gpu-2x $R/ddp-deepum-1gpu.log
tr 2 --fsdp > $R/fsdp-native.log 2>&1; row fsdp-native-2gpu $R/fsdp-native.log
ff=$(awk '/^footprint_bytes/ {print $2}' $R/fsdp-native.log); echo "fsdp footprint per rank $ff; limit $((ff/2))"
dl $((ff/2)) fsdp tr 2 --fsdp > $R/fsdp-deepum.log 2>&1; row fsdp-deepum-2gpu-2x $R/fsdp-deepum.log
tr 2 --fsdp --cpu-offload > $R/fsdp-offload.log 2>&1; row fsdp-cpuoffload-2gpu $R/fsdp-offload.log
python3 -c "
import json,glob
for f in sorted(glob.glob('$R/*.json')):
    d=json.load(open(f)); m=d['engine']['moves']
    print(f.split('/')[-1], 'swapped_out', m['swapped_out_bytes'], 'tables', d.get('tracer',{}).get('pointer_tables'), 'move_calls_ns', d['engine']['eviction_thread']['move_calls_ns'])
" > $OUT/stats-summary.txt 2>&1
cd /tmp/bt
s=$(date +%s)
rest='tracer_stress|gpu_ddp_losses|gpu_fsdp2_losses|gpu_two_devices_losses'
CUDA_VISIBLE_DEVICES=0 ctest -L gpu -E "$rest" -I 1,,2 --output-on-failure --output-log $R/ctest-gpu-a.log > $OUT/ctest-gpu-a.txt 2>&1 &
CUDA_VISIBLE_DEVICES=1 ctest -L gpu -E "$rest" -I 2,,2 --output-on-failure --output-log $R/ctest-gpu-b.log > $OUT/ctest-gpu-b.txt 2>&1 &
wait
echo "one-GPU tests $(( $(date +%s)-s ))s"
grep -E "tests passed|Failed" $OUT/ctest-gpu-a.txt $OUT/ctest-gpu-b.txt
cd $OUT && tar czf runs.tar.gz runs && rm -rf runs
cat $OUT/stats-summary.txt
