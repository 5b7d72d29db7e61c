// nccl_passthrough USER_LIBRARY [local|global]: loads the library (tests/nccl/nccl_user.cpp, linked
// to a stand-in libnccl.so) as Python loads PyTorch's (RTLD_LOCAL: NCCL is then not in the global
// scope, and deepum must find it among the loaded libraries) or RTLD_GLOBAL, and runs its calls.
// Under libdeepum.so every NCCL call must still reach NCCL unchanged. Exit 0: all did.
#include <dlfcn.h>

#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s USER_LIBRARY [local|global]\n", argv[0]);
    return 2;
  }
  const bool global = argc > 2 && std::strcmp(argv[2], "global") == 0;
  void* library = dlopen(argv[1], RTLD_NOW | (global ? RTLD_GLOBAL : RTLD_LOCAL));
  if (library == nullptr) {
    std::printf("FAIL: %s\n", dlerror());
    return 1;
  }
  using Run = int (*)();
  auto run = reinterpret_cast<Run>(dlsym(library, "run_nccl_calls"));
  if (run == nullptr) {
    std::printf("FAIL: no run_nccl_calls in %s\n", argv[1]);
    return 1;
  }
  const int failures = run();
  std::printf("%s: %d of 20 NCCL calls changed on their way (%s)\n", failures == 0 ? "PASS" : "FAIL",
              failures, global ? "RTLD_GLOBAL" : "RTLD_LOCAL");
  return failures == 0 ? 0 : 1;
}
