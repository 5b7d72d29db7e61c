#!/bin/bash
# Call 1: traces (deepum's defaults, no resident limit) of the workloads the simulator had none of:
# the 1B Llama-style decoder, BERT-large, T5-base and DenseNet-201; then the zoo's 2x rows of the
# two new shapes, for the simulator to be checked against.
set -uo pipefail
nvidia-smi --query-gpu=name,memory.free --format=csv,noheader
s=$(date +%s)
DEEPUM_BUILD_TARGETS="deepum sweep" scripts/build.sh /tmp/bb -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildb.log 2>&1 || { tail -30 /tmp/buildb.log; exit 1; }
echo "build $(( $(date +%s)-s ))s"
free=$(nvidia-smi --query-gpu=memory.free --format=csv,noheader,nounits -i 0)
export DEEPUM_ALLOC_LIMIT="$(( free * 6 / 10 ))MiB"
hf=examples/zoo/train_hf.py
rn=examples/pytorch/train_resnet.py
trace() {  # NAME ARGS...: one traced run
  local name=$1; shift
  LD_PRELOAD=/tmp/bb/lib/libdeepum.so DEEPUM_TRACE_FILE=/tmp/tr-$name timeout 150 python3 "$@" > $OUT/trace-$name.txt 2>&1
  echo "trace $name exit $? at $(( $(date +%s)-s ))s"
  xz -T4 -c /tmp/tr-$name.dtrace > $OUT/$name.dtrace.xz
}
trace llama-1b $hf --model llama-1b --batch 4 --seq-len 512 --vocab 32000 --steps 5
trace bert-large $hf --model bert-large --batch 16 --seq-len 512 --steps 5
trace t5-base $hf --model t5-base --batch 16 --seq-len 512 --steps 5
trace densenet201 $rn --model densenet201 --batch 32 --steps 5 --warmup-steps 1
unset DEEPUM_ALLOC_LIMIT
timeout 240 python3 tests/zoo/model_zoo.py --lib /tmp/bb/lib/libdeepum.so --sweep /tmp/bb/tests/sweep --out $OUT/zoo --modes "fastest 2x" --only t5-base densenet201 > $OUT/zoo.txt 2>&1
echo "zoo exit $? at $(( $(date +%s)-s ))s"
tar czf $OUT/zoo-logs.tar.gz -C $OUT zoo trace-llama-1b.txt trace-bert-large.txt trace-t5-base.txt trace-densenet201.txt && rm -rf $OUT/zoo $OUT/trace-*.txt
ls -la $OUT
tail -8 $OUT/zoo.txt
