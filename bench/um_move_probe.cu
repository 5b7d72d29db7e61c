// um_move_probe: what bounds moving managed memory on this GPU, for the choices the stream-ordered
// path makes: whether device-to-host prefetches (evictions) go faster on several streams at once,
// whether they overlap host-to-device prefetches, and what discarding costs (dropped and placed on
// the host, dropped in place, dropped and placed on the GPU without a copy), and what swapping
// costs (copies into a pinned store a 2 MB block per call, then a discard; placed, then copied back).
//
//   um_move_probe [MiB]   (default 2048 per buffer, two buffers; keep 2x well under free memory)
//
// Prints per measurement the host time the calls took to return, the time until the streams
// drained, and GB/s over the bytes named (best of 3), and a JSON line last. The "_behind_kernel"
// cases enqueue behind a 200 ms kernel on another stream: whether the calls return at once or
// hold the calling thread (the program's thread, for deepum's moves before launches). The
// "_behind_host_fn_N" and "_behind_spin_N" cases put a host function sleeping N us, or a kernel
// spinning N us, in the moves' own streams just before them: is that enough for the driver to queue
// the moves instead of doing them in the calling thread, and what does it cost the moves?
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "managed_bench.hpp"

namespace {

using bench::device_location;
using bench::host_location;
constexpr size_t kRange = 64 << 20;  // the evictor's ranges are tensors: tens of MiB
constexpr size_t kBlock = 2 << 20;   // the swap store's slot: one 2 MB block

struct Buffer {
  char* data = nullptr;
  size_t bytes = 0;
  // [first, first + n) of its 64 MiB ranges, as pointer and size arrays for the batch calls.
  void ranges(size_t first, size_t n, std::vector<void*>& pointers, std::vector<size_t>& sizes) const {
    pointers.clear();
    sizes.clear();
    for (size_t i = first; i < first + n; ++i) {
      pointers.push_back(data + i * kRange);
      sizes.push_back(kRange);
    }
  }
  size_t range_count() const { return bytes / kRange; }
};

void place(const Buffer& buffer, cudaMemLocation where, cudaStream_t stream) {
  CHECK_CUDA(cudaMemPrefetchAsync(buffer.data, buffer.bytes, where, 0, stream));
  CHECK_CUDA(cudaStreamSynchronize(stream));
}

// Prefetches `n` ranges of `buffer` from `first`, one call per range (as the evictor issues them).
void prefetch_ranges(const Buffer& buffer, size_t first, size_t n, cudaMemLocation to, cudaStream_t stream) {
  for (size_t i = first; i < first + n; ++i)
    CHECK_CUDA(cudaMemPrefetchAsync(buffer.data + i * kRange, kRange, to, 0, stream));
}

void CUDART_CB sleep_microseconds(void* microseconds) {
  std::this_thread::sleep_for(std::chrono::microseconds(reinterpret_cast<std::uintptr_t>(microseconds)));
}

struct Result {
  std::string name;
  size_t bytes = 0;
  double best_ms = 1e30, enqueue_ms = 1e30;
};

}  // namespace

int main(int argc, char** argv) {
  int device = 0;
  const size_t bytes = bench::requested_bytes(argc, argv, 2048, 4, "um_move_probe", &device);
  if (bytes < 4 * kRange) {
    std::fprintf(stderr, "um_move_probe: at least %zu MiB\n", (4 * kRange) >> 20);
    return 2;
  }
  Buffer a{nullptr, bytes - bytes % (4 * kRange)}, b{nullptr, a.bytes};
  CHECK_CUDA(cudaMallocManaged(&a.data, a.bytes));
  CHECK_CUDA(cudaMallocManaged(&b.data, b.bytes));
  std::memset(a.data, 1, a.bytes);
  std::memset(b.data, 2, b.bytes);
  std::vector<cudaStream_t> streams(4);
  for (cudaStream_t& s : streams) CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaMemLocation gpu = device_location(device),
                  host = host_location();  // non-const: the batch calls take pointers
  std::vector<void*> pointers;
  std::vector<size_t> sizes;
  size_t location_index = 0;

  // Each case: `setup` places the buffers (synchronised), `body` enqueues the measured work; the
  // time is from before `body` to every stream drained.
  struct Case {
    std::string name;
    size_t bytes;
    std::function<void()> setup, body;
  };
  const auto d2h_on = [&](size_t n_streams) {
    return Case{"d2h_" + std::to_string(n_streams) + "_streams", a.bytes, [&] { place(a, gpu, streams[0]); },
                [&, n_streams] {
                  const size_t per = a.range_count() / n_streams;
                  for (size_t s = 0; s < n_streams; ++s) prefetch_ranges(a, s * per, per, host, streams[s]);
                }};
  };
  const auto h2d_on = [&](size_t n_streams) {
    return Case{"h2d_" + std::to_string(n_streams) + "_streams", a.bytes, [&] { place(a, host, streams[0]); },
                [&, n_streams] {
                  const size_t per = a.range_count() / n_streams;
                  for (size_t s = 0; s < n_streams; ++s) prefetch_ranges(a, s * per, per, gpu, streams[s]);
                }};
  };
  std::vector<Case> cases{
      d2h_on(1),
      d2h_on(2),
      d2h_on(4),
      h2d_on(1),
      h2d_on(2),
      // Both directions at once, on two streams: an eviction beside a prefetch.
      {"d2h_and_h2d_at_once", a.bytes + b.bytes,
       [&] {
         place(a, gpu, streams[0]);
         place(b, host, streams[0]);
       },
       [&] {
         prefetch_ranges(a, 0, a.range_count(), host, streams[0]);
         prefetch_ranges(b, 0, b.range_count(), gpu, streams[1]);
       }},
      // Dropped and placed on the host: what stream_ordered_discard issues for dead victims.
      {"discard_and_place_on_host", a.bytes, [&] { place(a, gpu, streams[0]); },
       [&] {
         a.ranges(0, a.range_count(), pointers, sizes);
         CHECK_CUDA(cudaMemDiscardAndPrefetchBatchAsync(pointers.data(), sizes.data(), pointers.size(), &host,
                                                        &location_index, 1, 0, streams[0]));
       }},
      // Dropped where it is (no placement).
      {"discard_in_place", a.bytes, [&] { place(a, gpu, streams[0]); },
       [&] {
         a.ranges(0, a.range_count(), pointers, sizes);
         CHECK_CUDA(cudaMemDiscardBatchAsync(pointers.data(), sizes.data(), pointers.size(), 0, streams[0]));
       }},
      // Then moved to the host after the discard: does the driver still copy?
      {"d2h_after_discard_in_place", a.bytes,
       [&] {
         place(a, gpu, streams[0]);
         a.ranges(0, a.range_count(), pointers, sizes);
         CHECK_CUDA(cudaMemDiscardBatchAsync(pointers.data(), sizes.data(), pointers.size(), 0, streams[0]));
         CHECK_CUDA(cudaStreamSynchronize(streams[0]));
       },
       [&] { prefetch_ranges(a, 0, a.range_count(), host, streams[0]); }},
      // Host-resident stale contents dropped and placed on the GPU: a fresh buffer made resident
      // without copying what it held.
      {"discard_and_place_on_gpu", a.bytes, [&] { place(a, host, streams[0]); },
       [&] {
         a.ranges(0, a.range_count(), pointers, sizes);
         CHECK_CUDA(cudaMemDiscardAndPrefetchBatchAsync(pointers.data(), sizes.data(), pointers.size(), &gpu,
                                                        &location_index, 1, 0, streams[0]));
       }},
  };
  // stream_ordered_swap's moves: a live victim copied into a pinned host store one 2 MB block per
  // call, then dropped in place; brought back by a placement without a copy, then one copy per block.
  char* store = nullptr;
  CHECK_CUDA(cudaMallocHost(&store, a.bytes));
  const auto copy_blocks = [&](bool out) {
    for (size_t at = 0; at < a.bytes; at += kBlock) {
      CHECK_CUDA(out ? cudaMemcpyAsync(store + at, a.data + at, kBlock, cudaMemcpyDeviceToHost, streams[0])
                     : cudaMemcpyAsync(a.data + at, store + at, kBlock, cudaMemcpyHostToDevice, streams[0]));
    }
  };
  const auto discard_a = [&] {
    a.ranges(0, a.range_count(), pointers, sizes);
    CHECK_CUDA(cudaMemDiscardBatchAsync(pointers.data(), sizes.data(), pointers.size(), 0, streams[0]));
  };
  const auto place_a_on_gpu = [&] {
    a.ranges(0, a.range_count(), pointers, sizes);
    CHECK_CUDA(cudaMemDiscardAndPrefetchBatchAsync(pointers.data(), sizes.data(), pointers.size(), &gpu,
                                                   &location_index, 1, 0, streams[0]));
  };
  // A placement per 2 MB block, one call each: with discard_and_place_on_gpu (one call for all),
  // each call's own cost.
  cases.push_back({"place_in_2MiB_calls", a.bytes, [&] { place(a, host, streams[0]); },
                   [&] {
                     for (size_t at = 0; at < a.bytes; at += kBlock) {
                       void* pointer = a.data + at;
                       size_t size = kBlock;
                       CHECK_CUDA(cudaMemDiscardAndPrefetchBatchAsync(&pointer, &size, 1, &gpu,
                                                                      &location_index, 1, 0, streams[0]));
                     }
                   }});
  const size_t first_swap_case = cases.size();
  cases.push_back({"swap_copy_out", a.bytes, [&] { place(a, gpu, streams[0]); }, [&] { copy_blocks(true); }});
  cases.push_back({"swap_copy_out_then_discard", a.bytes, [&] { place(a, gpu, streams[0]); },
                   [&] {
                     copy_blocks(true);
                     discard_a();
                   }});
  cases.push_back({"swap_place_then_copy_back", a.bytes, [&] { place(a, host, streams[0]); },
                   [&] {
                     place_a_on_gpu();
                     copy_blocks(false);
                   }});
  // Streams 0 and 1 wait for a 200 ms kernel on stream 3 before what `body` enqueues.
  cudaEvent_t kernel_done;
  CHECK_CUDA(cudaEventCreateWithFlags(&kernel_done, cudaEventDisableTiming));
  const auto behind_kernel = [&](Case c) {
    c.name += "_behind_kernel";
    c.body = [&, body = c.body] {
      bench::spin<<<1, 1, 0, streams[3]>>>(200'000'000ull);
      CHECK_CUDA(cudaEventRecord(kernel_done, streams[3]));
      CHECK_CUDA(cudaStreamWaitEvent(streams[0], kernel_done, 0));
      CHECK_CUDA(cudaStreamWaitEvent(streams[1], kernel_done, 0));
      body();
    };
    return c;
  };
  // Streams 0 and 1 get a short hold of their own (`hold`) just before what `body` enqueues.
  const auto behind_hold = [&](Case c, const std::string& label, std::function<void(cudaStream_t)> hold) {
    c.name += "_behind_" + label;
    c.body = [&, body = c.body, hold] {
      hold(streams[0]);
      hold(streams[1]);
      body();
    };
    return c;
  };
  const auto host_fn = [](std::uintptr_t microseconds) {
    return [microseconds](cudaStream_t s) {
      CHECK_CUDA(cudaLaunchHostFunc(s, sleep_microseconds, reinterpret_cast<void*>(microseconds)));
    };
  };
  const auto spin_for = [](unsigned long long microseconds) {
    return [microseconds](cudaStream_t s) { bench::spin<<<1, 1, 0, s>>>(microseconds * 1000); };
  };
  // d2h_and_h2d_at_once issues both ways from one thread: on idle streams the moves to the host
  // hold it, so only behind the kernel are the two ways really enqueued at once.
  for (size_t i : {size_t{0}, size_t{3}, size_t{5}, size_t{6}}) cases.push_back(behind_kernel(cases[i]));
  for (size_t i = first_swap_case; i < first_swap_case + 3; ++i) cases.push_back(behind_kernel(cases[i]));
  for (size_t i : {size_t{0}, size_t{3}, size_t{5}}) {
    const Case plain = cases[i];
    cases.push_back(behind_hold(plain, "host_fn_0", host_fn(0)));
    cases.push_back(behind_hold(plain, "host_fn_50", host_fn(50)));
    cases.push_back(behind_hold(plain, "host_fn_200", host_fn(200)));
    cases.push_back(behind_hold(plain, "spin_50", spin_for(50)));
  }
  std::vector<Result> results;
  for (const Case& c : cases) results.push_back({c.name, c.bytes});
  for (int round = 0; round < 3; ++round) {
    for (size_t i = 0; i < cases.size(); ++i) {
      cases[i].setup();
      CHECK_CUDA(cudaDeviceSynchronize());
      const auto start = std::chrono::steady_clock::now();
      cases[i].body();
      const double enqueue_ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      for (cudaStream_t s : streams) CHECK_CUDA(cudaStreamSynchronize(s));
      const double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      results[i].best_ms = std::min(results[i].best_ms, ms);
      results[i].enqueue_ms = std::min(results[i].enqueue_ms, enqueue_ms);
    }
  }
  cudaDeviceProp prop{};
  CHECK_CUDA(cudaGetDeviceProperties(&prop, device));
  std::printf("device %s, %zu MiB per buffer, %zu MiB ranges, best of 3\n", prop.name, a.bytes >> 20,
              kRange >> 20);
  for (const Result& r : results)
    std::printf("%-42s enqueue %9.2f ms, done %9.2f ms %7.2f GB/s\n", r.name.c_str(), r.enqueue_ms, r.best_ms,
                r.bytes / r.best_ms / 1e6);
  std::printf("{\"device\": \"%s\", \"buffer_bytes\": %zu", prop.name, a.bytes);
  for (const Result& r : results)
    std::printf(", \"%s_ms\": %.3f, \"%s_enqueue_ms\": %.3f", r.name.c_str(), r.best_ms, r.name.c_str(),
                r.enqueue_ms);
  std::printf("}\n");
  CHECK_CUDA(cudaFree(a.data));
  CHECK_CUDA(cudaFree(b.data));
  CHECK_CUDA(cudaFreeHost(store));
  return 0;
}
