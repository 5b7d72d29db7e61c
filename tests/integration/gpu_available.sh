# Sourced by the GPU tests: exits 77 (ctest's skip code) with a clear message when no NVIDIA GPU is
# reachable from this machine.
if ! ls /dev/nvidia[0-9]* >/dev/null 2>&1; then
  echo "SKIP: no NVIDIA GPU on this machine (/dev/nvidia* absent); this test runs on the GPU machine"
  exit 77
fi
