#!/usr/bin/env bash
# run_pytorch.sh LIB SCRIPT ARGS...: runs a PyTorch script under libdeepum.so where PyTorch with CUDA
# is installed; skips (77) elsewhere.
set -euo pipefail
lib=$1
shift
source "$(dirname "$0")/pytorch_available.sh"
LD_PRELOAD="$lib" DEEPUM_LOG_LEVEL="${DEEPUM_LOG_LEVEL:-info}" exec "$python" "$@"
