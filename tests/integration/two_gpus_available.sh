# Sourced by the two-GPU tests: as pytorch_available.sh (sets `python`), and exits 77 (ctest's skip
# code) with a clear message where PyTorch sees fewer than two GPUs.
source "$(dirname "${BASH_SOURCE[0]}")/pytorch_available.sh"
gpus=$("$python" -c "import torch; print(torch.cuda.device_count())")
if [[ $gpus -lt 2 ]]; then
  echo "SKIP: $gpus GPU(s); this test needs two"
  exit 77
fi
