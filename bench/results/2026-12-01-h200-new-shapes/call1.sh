#!/bin/bash
# Shapes and settings the zoo lacked, on main: a vision transformer (ViT-B/16), ConvNeXt-Base, the
# 1B decoder in bf16 autocast with activation checkpointing, and GPT-2 under torch.compile, each
# natively and at 2x. From the repository root; results into $OUT.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
s=$(date +%s)
DEEPUM_BUILD_TARGETS="deepum sweep" scripts/build.sh /tmp/bn -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF > /tmp/buildn.log 2>&1 || { tail -30 /tmp/buildn.log; exit 1; }
echo "build $(( $(date +%s)-s ))s"
timeout $(( 585 - ($(date +%s)-s) )) python3 tests/zoo/model_zoo.py --lib /tmp/bn/lib/libdeepum.so --sweep /tmp/bn/tests/sweep \
  --modes "fastest 2x" --steps 5 --out $OUT/zoo --only vit-b16 convnext llama-bf16-ckpt gpt2-compiled > $OUT/zoo.txt 2>&1
echo "zoo exit $? at $(( $(date +%s)-s ))s"
tar czf $OUT/logs.tar.gz -C $OUT zoo 2>/dev/null && rm -rf $OUT/zoo
tail -14 $OUT/zoo.txt
