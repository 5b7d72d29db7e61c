// prefetch_bandwidth: what explicit Unified Memory prefetches reach on this GPU, and what copies
// between the GPU and pinned host memory reach (deepum's swap path): the link's best rate each
// way is the figure the suite's floor is computed from (bytes that must cross the link / rate).
//
//   prefetch_bandwidth [MiB]   (default 2048; keep it well under the GPU's free memory)
//
// Prints one line per measurement, "name GB/s", best of 3 (both_ways: bytes moved either way over
// the time, half each way at once), and a JSON line last. Runs natively:
// deepum would turn nothing here into anything else (the memory is already managed).
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "managed_bench.hpp"

namespace {

using bench::device_location;
using bench::host_location;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Prefetches [data, data+bytes) to `to` as `pieces` equal ranges in one batch call; returns GB/s.
double batch_prefetch(char* data, size_t bytes, size_t pieces, cudaMemLocation to, cudaStream_t stream) {
  std::vector<void*> pointers(pieces);
  std::vector<size_t> sizes(pieces, bytes / pieces);
  for (size_t i = 0; i < pieces; ++i) pointers[i] = data + i * (bytes / pieces);
  size_t location_index = 0;
  const auto start = std::chrono::steady_clock::now();
  CHECK_CUDA(
      cudaMemPrefetchBatchAsync(pointers.data(), sizes.data(), pieces, &to, &location_index, 1, 0, stream));
  CHECK_CUDA(cudaStreamSynchronize(stream));
  return static_cast<double>(bytes) / seconds_since(start) / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  int device = 0;
  const size_t bytes = bench::requested_bytes(argc, argv, 2048, 2, "prefetch_bandwidth", &device);
  const size_t mib = bytes >> 20;
  char* data = nullptr;
  CHECK_CUDA(cudaMallocManaged(&data, bytes));
  std::memset(data, 1, bytes);  // resident on the host, every page touched
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  struct Result {
    const char* name;
    size_t pieces;
    bool to_gpu;
    double best = 0;
  };
  std::vector<Result> results{{"h2d_one_range", 1, true},
                              {"d2h_one_range", 1, false},
                              {"h2d_64MiB_ranges", bytes / (64 << 20), true},
                              {"d2h_64MiB_ranges", bytes / (64 << 20), false},
                              {"h2d_2MiB_ranges", bytes / (2 << 20), true},
                              {"d2h_2MiB_ranges", bytes / (2 << 20), false}};
  for (int round = 0; round < 3; ++round) {
    for (Result& r : results) {
      // Start each measurement from the other side.
      CHECK_CUDA(
          cudaMemPrefetchAsync(data, bytes, r.to_gpu ? host_location() : device_location(device), 0, stream));
      CHECK_CUDA(cudaStreamSynchronize(stream));
      const double gbps = batch_prefetch(data, bytes, std::max<size_t>(r.pieces, 1),
                                         r.to_gpu ? device_location(device) : host_location(), stream);
      r.best = std::max(r.best, gbps);
    }
  }
  // Both ways at once, as a training step needs (evictions out, fetches in), on two streams: half
  // the buffer to the host while the other half comes to the GPU. Both streams first wait for a
  // 100 ms kernel on a third: a move to the host enqueued in an idle stream holds the calling
  // thread until it is done, which would issue the two ways one after the other. Timed on the GPU
  // from the kernel's end to the later stream's.
  cudaStream_t other, gate;
  CHECK_CUDA(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking));
  CHECK_CUDA(cudaStreamCreateWithFlags(&gate, cudaStreamNonBlocking));
  cudaEvent_t released, out_done, in_done;
  for (cudaEvent_t* event : {&released, &out_done, &in_done}) CHECK_CUDA(cudaEventCreate(event));
  double both_ways = 0;
  const size_t half = bytes / 2;
  for (int round = 0; round < 3; ++round) {
    CHECK_CUDA(cudaMemPrefetchAsync(data, half, device_location(device), 0, stream));
    CHECK_CUDA(cudaMemPrefetchAsync(data + half, half, host_location(), 0, stream));
    CHECK_CUDA(cudaStreamSynchronize(stream));
    const auto enqueue_start = std::chrono::steady_clock::now();
    bench::spin<<<1, 1, 0, gate>>>(100'000'000ull);
    CHECK_CUDA(cudaEventRecord(released, gate));
    CHECK_CUDA(cudaStreamWaitEvent(stream, released, 0));
    CHECK_CUDA(cudaStreamWaitEvent(other, released, 0));
    for (size_t offset = 0; offset < half; offset += 64 << 20) {
      const size_t n = std::min<size_t>(64 << 20, half - offset);
      CHECK_CUDA(cudaMemPrefetchAsync(data + offset, n, host_location(), 0, stream));
      CHECK_CUDA(cudaMemPrefetchAsync(data + half + offset, n, device_location(device), 0, other));
    }
    CHECK_CUDA(cudaEventRecord(out_done, stream));
    CHECK_CUDA(cudaEventRecord(in_done, other));
    if (seconds_since(enqueue_start) > 0.1)
      std::fprintf(stderr, "both ways: the calls took longer than the kernel holding them back\n");
    CHECK_CUDA(cudaStreamSynchronize(stream));
    CHECK_CUDA(cudaStreamSynchronize(other));
    float out_ms = 0, in_ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&out_ms, released, out_done));
    CHECK_CUDA(cudaEventElapsedTime(&in_ms, released, in_done));
    both_ways = std::max(both_ways, static_cast<double>(2 * half) / (std::max(out_ms, in_ms) * 1e6));
  }
  results.push_back({"both_ways_64MiB_ranges", 0, false, both_ways});

  // Copies between the buffer, resident on the GPU, and pinned host memory, in 64 MiB calls (as
  // deepum swaps: one call per range, queued in one stream).
  char* pinned = nullptr;
  CHECK_CUDA(cudaMallocHost(&pinned, bytes));
  std::memset(pinned, 2, bytes);
  CHECK_CUDA(cudaMemPrefetchAsync(data, bytes, device_location(device), 0, stream));
  CHECK_CUDA(cudaStreamSynchronize(stream));
  Result to_host{"d2h_pinned_copy", bytes / (64 << 20), false};
  Result to_gpu{"h2d_pinned_copy", bytes / (64 << 20), true};
  for (int round = 0; round < 3; ++round) {
    for (Result* r : {&to_host, &to_gpu}) {
      const auto start = std::chrono::steady_clock::now();
      for (size_t offset = 0; offset < bytes; offset += 64 << 20) {
        const size_t n = std::min<size_t>(64 << 20, bytes - offset);
        if (r->to_gpu)
          CHECK_CUDA(cudaMemcpyAsync(data + offset, pinned + offset, n, cudaMemcpyHostToDevice, stream));
        else
          CHECK_CUDA(cudaMemcpyAsync(pinned + offset, data + offset, n, cudaMemcpyDeviceToHost, stream));
      }
      CHECK_CUDA(cudaStreamSynchronize(stream));
      r->best = std::max(r->best, static_cast<double>(bytes) / seconds_since(start) / 1e9);
    }
  }
  results.push_back(to_host);
  results.push_back(to_gpu);
  CHECK_CUDA(cudaFreeHost(pinned));
  cudaDeviceProp prop{};
  CHECK_CUDA(cudaGetDeviceProperties(&prop, device));
  std::printf("device %s, %zu MiB, best of 3\n", prop.name, mib);
  std::printf("{\"device\": \"%s\", \"bytes\": %zu", prop.name, bytes);
  for (const Result& r : results) std::printf(", \"%s_gbps\": %.2f", r.name, r.best);
  std::printf("}\n");
  for (const Result& r : results) std::fprintf(stderr, "%-18s %7.2f GB/s\n", r.name, r.best);
  CHECK_CUDA(cudaFree(data));
  return 0;
}
