# Sourced by the PyTorch tests: sets `python` (DEEPUM_PYTHON, else python3) and exits 77 (ctest's
# skip code) with a clear message without a GPU, or without PyTorch that can use it.
source "$(dirname "${BASH_SOURCE[0]}")/gpu_available.sh"
python=${DEEPUM_PYTHON:-python3}
if ! "$python" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null; then
  echo "SKIP: $python has no PyTorch with CUDA"
  exit 77
fi
