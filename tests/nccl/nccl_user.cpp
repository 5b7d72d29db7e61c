// Calls every NCCL function deepum interposes, as a library linked to libnccl.so would (PyTorch's
// libtorch_cuda.so), and checks that each reached the stand-in libnccl.so with the program's own
// arguments and that its result came back unchanged.
#include <cstdint>
#include <cstdio>

#include "fake_nccl.hpp"

extern "C" {
FakeNcclCall fake_nccl_last();
int ncclAllReduce(const void*, void*, std::size_t, int, int, void*, void*);
int ncclReduceScatter(const void*, void*, std::size_t, int, int, void*, void*);
int ncclBroadcast(const void*, void*, std::size_t, int, int, void*, void*);
int ncclBcast(void*, std::size_t, int, int, void*, void*);
int ncclReduce(const void*, void*, std::size_t, int, int, int, void*, void*);
int ncclAllGather(const void*, void*, std::size_t, int, void*, void*);
int ncclAlltoAll(const void*, void*, std::size_t, int, void*, void*);
int ncclGather(const void*, void*, std::size_t, int, int, void*, void*);
int ncclScatter(const void*, void*, std::size_t, int, int, void*, void*);
int ncclSend(const void*, std::size_t, int, int, void*, void*);
int ncclRecv(void*, std::size_t, int, int, void*, void*);
int ncclAllReduceConfig(const void*, void*, std::size_t, int, int, void*, void*, const void*);
int ncclReduceScatterConfig(const void*, void*, std::size_t, int, int, void*, void*, const void*);
int ncclBroadcastConfig(const void*, void*, std::size_t, int, int, void*, void*, const void*);
int ncclReduceConfig(const void*, void*, std::size_t, int, int, int, void*, void*, const void*);
int ncclAllGatherConfig(const void*, void*, std::size_t, int, void*, void*, const void*);
int ncclAlltoAllConfig(const void*, void*, std::size_t, int, void*, void*, const void*);
int ncclGatherConfig(const void*, void*, std::size_t, int, int, void*, void*, const void*);
int ncclScatterConfig(const void*, void*, std::size_t, int, int, void*, void*, const void*);
int ncclGroupEnd();
}

namespace {

void* at(std::uintptr_t address) { return reinterpret_cast<void*>(address); }

int g_failures = 0;

// The call numbered `function` returned `result` and recorded `expected`.
void check(int function, int result, const FakeNcclCall& expected) {
  const FakeNcclCall got = fake_nccl_last();
  const bool same = got.function == expected.function && got.send == expected.send &&
                    got.recv == expected.recv && got.count == expected.count && got.type == expected.type &&
                    got.extra == expected.extra && got.comm == expected.comm &&
                    got.stream == expected.stream && got.config == expected.config;
  if (result != 40 + function || !same) {
    std::printf("FAIL: call %d returned %d (expected %d), arguments %s\n", function, result, 40 + function,
                same ? "as passed" : "changed");
    ++g_failures;
  }
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int run_nccl_calls() {
  const void* s = at(0x10000);
  void* r = at(0x20000);
  void* c = at(0x30000);
  void* st = at(0x40000);
  const void* g = at(0x50000);
  const std::size_t n = 1000;
  const int t = 7, x = 3;
  check(0, ncclAllReduce(s, r, n, t, x, c, st), {0, s, r, n, t, x, c, st, nullptr});
  check(1, ncclReduceScatter(s, r, n, t, x, c, st), {1, s, r, n, t, x, c, st, nullptr});
  check(2, ncclBroadcast(s, r, n, t, x, c, st), {2, s, r, n, t, x, c, st, nullptr});
  check(3, ncclBcast(r, n, t, x, c, st), {3, r, r, n, t, x, c, st, nullptr});
  check(4, ncclReduce(s, r, n, t, x, 1, c, st), {4, s, r, n, t, x * 100 + 1, c, st, nullptr});
  check(5, ncclAllGather(s, r, n, t, c, st), {5, s, r, n, t, 0, c, st, nullptr});
  check(6, ncclAlltoAll(s, r, n, t, c, st), {6, s, r, n, t, 0, c, st, nullptr});
  check(7, ncclGather(s, r, n, t, x, c, st), {7, s, r, n, t, x, c, st, nullptr});
  check(8, ncclScatter(s, r, n, t, x, c, st), {8, s, r, n, t, x, c, st, nullptr});
  check(9, ncclSend(s, n, t, x, c, st), {9, s, nullptr, n, t, x, c, st, nullptr});
  check(10, ncclRecv(r, n, t, x, c, st), {10, nullptr, r, n, t, x, c, st, nullptr});
  check(11, ncclAllReduceConfig(s, r, n, t, x, c, st, g), {11, s, r, n, t, x, c, st, g});
  check(12, ncclReduceScatterConfig(s, r, n, t, x, c, st, g), {12, s, r, n, t, x, c, st, g});
  check(13, ncclBroadcastConfig(s, r, n, t, x, c, st, g), {13, s, r, n, t, x, c, st, g});
  check(14, ncclReduceConfig(s, r, n, t, x, 1, c, st, g), {14, s, r, n, t, x * 100 + 1, c, st, g});
  check(15, ncclAllGatherConfig(s, r, n, t, c, st, g), {15, s, r, n, t, 0, c, st, g});
  check(16, ncclAlltoAllConfig(s, r, n, t, c, st, g), {16, s, r, n, t, 0, c, st, g});
  check(17, ncclGatherConfig(s, r, n, t, x, c, st, g), {17, s, r, n, t, x, c, st, g});
  check(18, ncclScatterConfig(s, r, n, t, x, c, st, g), {18, s, r, n, t, x, c, st, g});
  check(19, ncclGroupEnd(), {19, nullptr, nullptr, 0, 0, 0, nullptr, nullptr, nullptr});
  return g_failures;
}
