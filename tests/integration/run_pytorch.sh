#!/usr/bin/env bash
# run_pytorch.sh LIB SCRIPT ARGS...: runs a PyTorch script under libdeepum.so where PyTorch with CUDA
# is installed; skips (77) elsewhere.
set -euo pipefail
lib=$1
shift
source "$(dirname "$0")/gpu_available.sh"
python=${DEEPUM_PYTHON:-python3}
if ! "$python" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null; then
  echo "SKIP: $python has no PyTorch with CUDA"
  exit 77
fi
LD_PRELOAD="$lib" DEEPUM_LOG_LEVEL="${DEEPUM_LOG_LEVEL:-info}" exec "$python" "$@"
