// deferred_move_probe: once the driver queues a move instead of doing it in the calling thread (its
// stream held by a host function just before), what do the next calls cost? deepum's program
// thread follows an eviction with a prefetch into its room, and with the program's own launches.
// And does a move to the host made in another thread, or in another context, hold up the
// program's calls? Each scenario is timed per call (host ms until the call returned) and to the
// end of everything (done ms), best of 3:
//   chain:             A: hold, to host, event; B: waits for it, hold, to GPU  (deepum's order)
//   chain_no_hold:     the same without the hold on B (B waits for a queued move's event)
//   beside_queued:     A: hold, to host; 5 ms later B: hold, to GPU (no order between them)
//   beside_idle:       A: hold, to host; 5 ms later B, idle: to GPU
//   launches_beside:   A: hold, to host; 5 ms later 200 empty kernels on C
//   many_behind_queued: A: hold, to host, event; B waits for it: 256 moves of 2 MiB to the GPU
//                      (second ms: the slowest call)
//   many_held_beside:  A: hold, to host; 5 ms later B: 256 moves of 2 MiB, each behind a hold
//   launches_beside_thread:  a thread moves `a` to the host in its idle stream; 5 ms in, 200
//                      empty kernels here (second ms: their launch calls)
//   launches_beside_context: the same, the thread in a second context of its own
//   h2d_beside_context: the same, `b` moved to the GPU here instead of the launches
//   launches_beside_8MiB, _2MiB: launches_beside_thread with the move in 8 (2) MiB calls
//   one_then_other:    to host then to GPU, both in idle streams, one thread (no hold)
//   two_threads:       to host and to GPU in idle streams, from two threads at once (no hold)
//
//   deferred_move_probe [MiB]   (default 1024 per buffer, two buffers; keep 2x well under free memory)
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "managed_bench.hpp"

namespace {

using bench::Clock;
using bench::device_location;
using bench::host_location;
using bench::ms_since;
constexpr size_t kRange = 64 << 20;

void CUDART_CB no_op(void*) {}
__global__ void empty_kernel() {}

// Moves [data, data + bytes) to `to` in `piece` calls; returns the host ms the calls took.
double move(char* data, size_t bytes, cudaMemLocation to, cudaStream_t stream, size_t piece = kRange) {
  const auto start = Clock::now();
  for (size_t offset = 0; offset < bytes; offset += piece)
    CHECK_CUDA(cudaMemPrefetchAsync(data + offset, std::min(piece, bytes - offset), to, 0, stream));
  return ms_since(start);
}

// 200 empty kernels on `stream`: the host ms of the launch calls.
double launches(cudaStream_t stream) {
  const auto start = Clock::now();
  for (int i = 0; i < 200; ++i) empty_kernel<<<1, 1, 0, stream>>>();
  CHECK_CUDA(cudaGetLastError());
  return ms_since(start);
}

struct Timing {
  double first_ms = 1e30, second_ms = 1e30, done_ms = 1e30;
};

}  // namespace

int main(int argc, char** argv) {
  int device = 0;
  const size_t bytes = bench::requested_bytes(argc, argv, 1024, 4, "deferred_move_probe", &device);
  char *a = nullptr, *b = nullptr;
  CHECK_CUDA(cudaMallocManaged(&a, bytes));
  CHECK_CUDA(cudaMallocManaged(&b, bytes));
  std::memset(a, 1, bytes);
  std::memset(b, 2, bytes);
  cudaStream_t A, B, C;
  for (cudaStream_t* s : {&A, &B, &C}) CHECK_CUDA(cudaStreamCreateWithFlags(s, cudaStreamNonBlocking));
  cudaEvent_t evicted;
  CHECK_CUDA(cudaEventCreateWithFlags(&evicted, cudaEventDisableTiming));
  const cudaMemLocation gpu = device_location(device), host = host_location();
  const auto hold = [](cudaStream_t s) { CHECK_CUDA(cudaLaunchHostFunc(s, no_op, nullptr)); };
  const auto pause = [] { std::this_thread::sleep_for(std::chrono::milliseconds(5)); };
  // 256 moves of 2 MiB of `b` to the GPU in `s`, each behind a hold of its own if `held`: the host
  // ms of the slowest call (is there a bound on the moves the driver keeps queued?).
  const auto small_moves = [&](cudaStream_t s, bool held) {
    double slowest = 0;
    for (size_t i = 0; i < 256 && (i + 1) * (2 << 20) <= bytes; ++i) {
      if (held) hold(s);
      const auto start = Clock::now();
      CHECK_CUDA(cudaMemPrefetchAsync(b + i * (2 << 20), 2 << 20, gpu, 0, s));
      slowest = std::max(slowest, ms_since(start));
    }
    return slowest;
  };

  // Each scenario returns the host ms of its first and second part; `a` starts on the GPU, `b` on
  // the host.
  struct Scenario {
    std::string name;
    std::function<std::pair<double, double>()> body;
  };
  // Another context on the same device, with a stream of its own.
  using CtxCreate = decltype(&cuCtxCreate_v4);
  using CtxSetCurrent = decltype(&cuCtxSetCurrent);
  using CtxGetCurrent = decltype(&cuCtxGetCurrent);
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  CHECK_CUDA(cudaGetDriverEntryPointByVersion("cuCtxCreate", &fn, 13000, cudaEnableDefault, &found));
  const auto ctx_create = reinterpret_cast<CtxCreate>(fn);
  CHECK_CUDA(cudaGetDriverEntryPointByVersion("cuCtxSetCurrent", &fn, 12000, cudaEnableDefault, &found));
  const auto ctx_set_current = reinterpret_cast<CtxSetCurrent>(fn);
  CHECK_CUDA(cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &fn, 12000, cudaEnableDefault, &found));
  const auto ctx_get_current = reinterpret_cast<CtxGetCurrent>(fn);
  CUcontext primary = nullptr, other = nullptr;
  CHECK_CUDA(cudaFree(nullptr));  // the primary context current
  if (ctx_create == nullptr || ctx_set_current == nullptr || ctx_get_current == nullptr ||
      ctx_get_current(&primary) != CUDA_SUCCESS || ctx_create(&other, nullptr, 0, device) != CUDA_SUCCESS) {
    std::fprintf(stderr, "deferred_move_probe: no second context\n");
    return 1;
  }
  ctx_set_current(other);
  cudaStream_t other_stream;
  CHECK_CUDA(cudaStreamCreateWithFlags(&other_stream, cudaStreamNonBlocking));
  ctx_set_current(primary);
  // `a` to the host in `piece` calls on a thread of its own (in `context`, else the program's);
  // 5 ms in, `beside` runs here: first the thread's ms, second what `beside` returns.
  const auto beside_thread = [&](CUcontext context, size_t piece, const std::function<double()>& beside) {
    double first = 0;
    std::thread mover([&] {
      if (context != nullptr) ctx_set_current(context);
      first = move(a, bytes, host, context != nullptr ? other_stream : A, piece);
      if (context != nullptr) CHECK_CUDA(cudaStreamSynchronize(other_stream));
    });
    pause();
    const double second = beside();
    mover.join();
    return std::pair{first, second};
  };
  // deepum's order: A to the host, then B (held if `hold_b`) to the GPU after A's event.
  const auto chain = [&](bool hold_b) {
    hold(A);
    const double first = move(a, bytes, host, A);
    CHECK_CUDA(cudaEventRecord(evicted, A));
    const auto start = Clock::now();
    CHECK_CUDA(cudaStreamWaitEvent(B, evicted, 0));
    if (hold_b) hold(B);
    move(b, bytes, gpu, B);
    return std::pair{first, ms_since(start)};
  };
  std::vector<Scenario> scenarios{
      {"chain", [&] { return chain(true); }},
      {"chain_no_hold", [&] { return chain(false); }},
      {"beside_queued",
       [&] {
         hold(A);
         const double first = move(a, bytes, host, A);
         pause();
         hold(B);
         return std::pair{first, move(b, bytes, gpu, B)};
       }},
      {"beside_idle",
       [&] {
         hold(A);
         const double first = move(a, bytes, host, A);
         pause();
         return std::pair{first, move(b, bytes, gpu, B)};
       }},
      {"launches_beside",
       [&] {
         hold(A);
         const double first = move(a, bytes, host, A);
         pause();
         return std::pair{first, launches(C)};
       }},
      // A move to the host in a thread of its own, in the program's context or another one.
      {"launches_beside_thread", [&] { return beside_thread(nullptr, kRange, [&] { return launches(C); }); }},
      {"launches_beside_context", [&] { return beside_thread(other, kRange, [&] { return launches(C); }); }},
      {"h2d_beside_context",
       [&] { return beside_thread(other, kRange, [&] { return move(b, bytes, gpu, B); }); }},
      {"launches_beside_8MiB", [&] { return beside_thread(nullptr, 8 << 20, [&] { return launches(C); }); }},
      {"launches_beside_2MiB", [&] { return beside_thread(nullptr, 2 << 20, [&] { return launches(C); }); }},
      {"many_behind_queued",
       [&] {
         hold(A);
         const double first = move(a, bytes, host, A);
         CHECK_CUDA(cudaEventRecord(evicted, A));
         CHECK_CUDA(cudaStreamWaitEvent(B, evicted, 0));
         return std::pair{first, small_moves(B, false)};
       }},
      {"many_held_beside",
       [&] {
         hold(A);
         const double first = move(a, bytes, host, A);
         pause();
         return std::pair{first, small_moves(B, true)};
       }},
      {"one_then_other",
       [&] {
         const double first = move(a, bytes, host, A);
         return std::pair{first, move(b, bytes, gpu, B)};
       }},
      {"two_threads",
       [&] {
         double first = 0;
         std::thread to_host([&] { first = move(a, bytes, host, A); });
         const double second = move(b, bytes, gpu, B);
         to_host.join();
         return std::pair{first, second};
       }},
  };
  std::vector<Timing> timings(scenarios.size());
  for (int round = 0; round < 3; ++round) {
    for (size_t i = 0; i < scenarios.size(); ++i) {
      CHECK_CUDA(cudaMemPrefetchAsync(a, bytes, gpu, 0, A));
      CHECK_CUDA(cudaMemPrefetchAsync(b, bytes, host, 0, A));
      CHECK_CUDA(cudaDeviceSynchronize());
      const auto start = Clock::now();
      const auto [first, second] = scenarios[i].body();
      CHECK_CUDA(cudaDeviceSynchronize());
      const double done = ms_since(start);
      if (done < timings[i].done_ms) timings[i] = {first, second, done};
    }
  }
  cudaDeviceProp prop{};
  CHECK_CUDA(cudaGetDeviceProperties(&prop, device));
  std::printf("device %s, %zu MiB per buffer, %zu MiB ranges, the round with the least done ms of 3\n",
              prop.name, bytes >> 20, kRange >> 20);
  std::printf("%-18s %12s %12s %10s\n", "scenario", "first ms", "second ms", "done ms");
  for (size_t i = 0; i < scenarios.size(); ++i)
    std::printf("%-18s %12.2f %12.2f %10.2f\n", scenarios[i].name.c_str(), timings[i].first_ms,
                timings[i].second_ms, timings[i].done_ms);
  CHECK_CUDA(cudaFree(a));
  CHECK_CUDA(cudaFree(b));
  return 0;
}
