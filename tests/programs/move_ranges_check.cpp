// move_ranges_check [RECORDER]: deepum's NVTX ranges around its moves reach a tool (RECORDER, a
// stand-in for Nsight Systems, loaded through NVTX_INJECTION64_PATH) as named ranges in deepum's
// domain, nested as opened; a range opened before NVTX is started is skipped. With no tool, the
// ranges do nothing. Needs no GPU.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "deepum/cuda/move_ranges.hpp"

using deepum::cuda::MoveRange;
using deepum::cuda::MoveRangeKind;

int main(int argc, char** argv) {
  if (argc == 2) setenv("NVTX_INJECTION64_PATH", argv[1], 1);
  { const MoveRange early(MoveRangeKind::eviction); }  // before the start: skipped
  if (!deepum::cuda::start_move_ranges()) {
    std::puts("SKIP: built without the toolkit's nvtx3 headers");
    return 77;
  }
  {
    const MoveRange eviction(MoveRangeKind::eviction);
    const MoveRange placement(MoveRangeKind::placement);
  }
  { const MoveRange copy_back(MoveRangeKind::host_copy_back); }
  if (argc < 2) {
    std::puts("PASS: ranges with no tool attached");
    return 0;
  }
  void* recorder = dlopen(argv[1], RTLD_NOW | RTLD_NOLOAD);
  const auto log =
      recorder ? reinterpret_cast<const char* (*)()>(dlsym(recorder, "nvtx_recorder_log")) : nullptr;
  if (log == nullptr) {
    std::printf("FAIL: NVTX never loaded the tool %s\n", argv[1]);
    return 1;
  }
  const std::string expected =
      "domain deepum\n"
      "push deepum: evict to host\npush deepum: place on GPU\npop\npop\n"
      "push deepum: copy swapped back\npop\n";
  if (log() != expected) {
    std::printf("FAIL: the tool saw:\n%s\nexpected:\n%s", log(), expected.c_str());
    return 1;
  }
  std::printf("PASS: the tool saw deepum's ranges:\n%s", log());
  return 0;
}
