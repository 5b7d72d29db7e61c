// A stand-in for libnccl.so: each call records its arguments and returns a code of its own, so that
// a program under libdeepum.so can check that deepum's NCCL interposers hand the real functions
// exactly what the program passed and hand back exactly what they return.
#include "fake_nccl.hpp"

namespace {
FakeNcclCall g_last;

int record(int function, const void* send, const void* recv, std::size_t count, int type, int extra,
           void* comm, void* stream, const void* config = nullptr) {
  g_last = {function, send, recv, count, type, extra, comm, stream, config};
  return 40 + function;
}
}  // namespace

#define FAKE extern "C" __attribute__((visibility("default")))

FAKE FakeNcclCall fake_nccl_last() { return g_last; }
FAKE int ncclCommCount(void*, int* count) {
  *count = kFakeRanks;
  return 0;
}
FAKE int ncclAllReduce(const void* s, void* r, std::size_t n, int t, int op, void* c, void* st) {
  return record(0, s, r, n, t, op, c, st);
}
FAKE int ncclReduceScatter(const void* s, void* r, std::size_t n, int t, int op, void* c, void* st) {
  return record(1, s, r, n, t, op, c, st);
}
FAKE int ncclBroadcast(const void* s, void* r, std::size_t n, int t, int root, void* c, void* st) {
  return record(2, s, r, n, t, root, c, st);
}
FAKE int ncclBcast(void* b, std::size_t n, int t, int root, void* c, void* st) {
  return record(3, b, b, n, t, root, c, st);
}
FAKE int ncclReduce(const void* s, void* r, std::size_t n, int t, int op, int root, void* c, void* st) {
  return record(4, s, r, n, t, op * 100 + root, c, st);
}
FAKE int ncclAllGather(const void* s, void* r, std::size_t n, int t, void* c, void* st) {
  return record(5, s, r, n, t, 0, c, st);
}
FAKE int ncclAlltoAll(const void* s, void* r, std::size_t n, int t, void* c, void* st) {
  return record(6, s, r, n, t, 0, c, st);
}
FAKE int ncclGather(const void* s, void* r, std::size_t n, int t, int root, void* c, void* st) {
  return record(7, s, r, n, t, root, c, st);
}
FAKE int ncclScatter(const void* s, void* r, std::size_t n, int t, int root, void* c, void* st) {
  return record(8, s, r, n, t, root, c, st);
}
FAKE int ncclSend(const void* s, std::size_t n, int t, int peer, void* c, void* st) {
  return record(9, s, nullptr, n, t, peer, c, st);
}
FAKE int ncclRecv(void* r, std::size_t n, int t, int peer, void* c, void* st) {
  return record(10, nullptr, r, n, t, peer, c, st);
}
FAKE int ncclAllReduceConfig(const void* s, void* r, std::size_t n, int t, int op, void* c, void* st,
                             const void* g) {
  return record(11, s, r, n, t, op, c, st, g);
}
FAKE int ncclReduceScatterConfig(const void* s, void* r, std::size_t n, int t, int op, void* c, void* st,
                                 const void* g) {
  return record(12, s, r, n, t, op, c, st, g);
}
FAKE int ncclBroadcastConfig(const void* s, void* r, std::size_t n, int t, int root, void* c, void* st,
                             const void* g) {
  return record(13, s, r, n, t, root, c, st, g);
}
FAKE int ncclReduceConfig(const void* s, void* r, std::size_t n, int t, int op, int root, void* c, void* st,
                          const void* g) {
  return record(14, s, r, n, t, op * 100 + root, c, st, g);
}
FAKE int ncclAllGatherConfig(const void* s, void* r, std::size_t n, int t, void* c, void* st, const void* g) {
  return record(15, s, r, n, t, 0, c, st, g);
}
FAKE int ncclAlltoAllConfig(const void* s, void* r, std::size_t n, int t, void* c, void* st, const void* g) {
  return record(16, s, r, n, t, 0, c, st, g);
}
FAKE int ncclGatherConfig(const void* s, void* r, std::size_t n, int t, int root, void* c, void* st,
                          const void* g) {
  return record(17, s, r, n, t, root, c, st, g);
}
FAKE int ncclScatterConfig(const void* s, void* r, std::size_t n, int t, int root, void* c, void* st,
                           const void* g) {
  return record(18, s, r, n, t, root, c, st, g);
}
FAKE int ncclGroupEnd() { return record(19, nullptr, nullptr, 0, 0, 0, nullptr, nullptr); }
