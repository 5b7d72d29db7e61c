#!/bin/bash
# Call 1: the benchmark suite's shapes the simulator had no trace of (GPT-2 350M batch 8, BERT-base
# batch 32, ResNet-50 batch 64): a trace of each under deepum's defaults (no resident limit, five
# steps), then the zoo at 2x and 3x (mode fast, eight steps), for deepum-sim to be checked against.
# Run from the repository root; results into $OUT.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
s=$(date +%s)
DEEPUM_BUILD_TARGETS="deepum sweep" scripts/build.sh /tmp/bn -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
echo "build $(( $(date +%s)-s ))s"
free=$(nvidia-smi --query-gpu=memory.free --format=csv,noheader,nounits -i 0)
export DEEPUM_ALLOC_LIMIT="$(( free * 6 / 10 ))MiB"
trace() {  # NAME ARGS...: one traced run, no resident limit
  local name=$1; shift
  LD_PRELOAD=/tmp/bn/lib/libdeepum.so DEEPUM_TRACE_FILE=/tmp/tr-$name timeout 150 python3 "$@" > $OUT/trace-$name.txt 2>&1
  echo "trace $name exit $? at $(( $(date +%s)-s ))s"
  xz -T8 -c /tmp/tr-$name.dtrace > $OUT/$name.dtrace.xz
}
trace gpt2-350m examples/pytorch/train_gpt2.py --preset gpt2-350m --batch 8 --steps 5 --warmup-steps 1
trace bert-base examples/pytorch/train_bert.py --preset bert-base --batch 32 --steps 5 --warmup-steps 1
trace resnet50 examples/pytorch/train_resnet.py --model resnet50 --batch 64 --steps 5 --warmup-steps 1
unset DEEPUM_ALLOC_LIMIT
timeout 400 python3 tests/zoo/model_zoo.py --lib /tmp/bn/lib/libdeepum.so --sweep /tmp/bn/tests/sweep --out $OUT/zoo \
  --modes "fastest 2x" "fastest 3x" --steps 8 --only gpt2-350m bert-base resnet50 > $OUT/zoo.txt 2>&1
echo "zoo exit $? at $(( $(date +%s)-s ))s"
mv $OUT/zoo/zoo.json $OUT/zoo.json
tar czf $OUT/logs.tar.gz -C $OUT zoo trace-gpt2-350m.txt trace-bert-base.txt trace-resnet50.txt && rm -rf $OUT/zoo $OUT/trace-*.txt
ls -la $OUT
tail -9 $OUT/zoo.txt
