// drop_overlap_probe: the rate at which swaps leave the GPU when each array's drop
// (cuMemDiscardBatchAsync, a call that holds its caller until the driver is done) comes after its
// copies out, as deepum's eviction thread makes them: the array copied in 2 MB blocks through a
// 32 MB device buffer into pinned memory (batched copies, within the GPU then to the host), the
// copies' end waited for, then the drop. Orders compared:
//   serial           the drop after the array's copies, the next array's copies after the drop
//   next first       the next array's copies enqueued before the drop, the drop in a stream of
//                    the copies' context
//   next first, ctx  the same, the drop in a stream of a second context
//   piece first      the next array's first 32 MB piece enqueued before the drop, the rest after it
//   host, serial     as serial, the drop a placement on the host of discarded contents
//                    (cuMemDiscardAndPrefetchBatchAsync), which copies beside it did not hold on
//                    the GPU (drop_beside_probe)
//   host, next first as next first, the drop that placement on the host
//   no drops         the copies alone (what the link allows)
// Each order runs alone and with copies to the GPU running beside all along (copies back).
// A drop is held by copies to the host beside it (drop_beside_probe): if it is held only by
// those of its own context, or only by the one running, the next array's copies can run beside it.
//
//   drop_overlap_probe [MiB per array] [arrays]   (default 256 MiB, 8 arrays)
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "managed_bench.hpp"

namespace {

using bench::Clock;
using bench::ms_since;

constexpr size_t kBlock = size_t{2} << 20;
constexpr size_t kStaging = size_t{32} << 20;

enum class Order {
  serial,
  next_first,
  next_first_other_context,
  piece_first,
  host_serial,
  host_next_first,
  no_drops
};
const char* name(Order order) {
  switch (order) {
    case Order::serial:
      return "serial";
    case Order::next_first:
      return "next first";
    case Order::next_first_other_context:
      return "next first, ctx";
    case Order::piece_first:
      return "piece first";
    case Order::host_serial:
      return "host, serial";
    case Order::host_next_first:
      return "host, next first";
    case Order::no_drops:
      return "no drops";
  }
  return "?";
}

struct Setup {
  size_t bytes = 0;
  std::vector<char*> arrays;  // managed
  char* staging = nullptr;    // device
  char* store = nullptr;      // pinned, one array's bytes (the contents are not checked)
  char* back_from = nullptr;  // pinned, what the copies back move
  char* back_to = nullptr;    // device
  cudaStream_t copies = nullptr, drops = nullptr, back = nullptr;
  CUcontext other = nullptr;  // the second context
  CUstream other_drops = nullptr;
};

void make_resident(const Setup& s) {
  for (char* array : s.arrays) {
    CHECK_CUDA(cudaMemPrefetchAsync(array, s.bytes, bench::device_location(0), 0, s.copies));
    CHECK_CUDA(cudaMemsetAsync(array, 1, s.bytes, s.copies));
  }
  CHECK_CUDA(cudaStreamSynchronize(s.copies));
}

// The array's copies out from byte `from` to `to`, as deepum's: per 32 MB piece, its blocks into
// the buffer, then the buffer into the store.
void copy_out(const Setup& s, const char* array, size_t from = 0, size_t to = SIZE_MAX) {
  const CUmemLocation gpu = bench::on_gpu(0), host = bench::on_host();
  for (size_t piece = from; piece < std::min(s.bytes, to); piece += kStaging) {
    std::vector<CUdeviceptr> staged, blocks, stored;
    for (size_t at = piece; at < std::min(s.bytes, piece + kStaging); at += kBlock) {
      staged.push_back(bench::address(s.staging + (at - piece)));
      blocks.push_back(bench::address(array + at));
      stored.push_back(bench::address(s.store + at));
    }
    bench::batched_copies(staged, blocks, gpu, gpu, kBlock, bench::cu(s.copies));
    bench::batched_copies(stored, staged, gpu, host, kBlock, bench::cu(s.copies));
  }
}

// Holds the caller until the driver has dropped the array (or placed it on the host), ms. Serial,
// on the copies' stream, then idle; the other orders on a stream of their own.
double drop(const Setup& s, const char* array, Order order) {
  CUdeviceptr pointer = bench::address(array);
  size_t size = s.bytes;
  const bool other = order == Order::next_first_other_context;
  if (other) CHECK_CU(cuCtxPushCurrent(s.other));
  const CUstream stream = other                    ? s.other_drops
                          : order == Order::serial ? bench::cu(s.copies)
                                                   : bench::cu(s.drops);
  const auto start = Clock::now();
  if (order == Order::host_serial || order == Order::host_next_first) {
    CUmemLocation host = bench::on_host();
    size_t location_index = 0;
    CHECK_CU(cuMemDiscardAndPrefetchBatchAsync(&pointer, &size, 1, &host, &location_index, 1, 0, stream));
  } else {
    CHECK_CU(cuMemDiscardBatchAsync(&pointer, &size, 1, 0, stream));
  }
  CHECK_CU(cuStreamSynchronize(stream));
  const double ms = ms_since(start);
  if (other) {
    CUcontext popped = nullptr;
    CHECK_CU(cuCtxPopCurrent(&popped));
  }
  return ms;
}

// Copies back beside, one 32 MB piece after another, until `stop`.
void copies_back(const Setup& s, const std::atomic<bool>& stop) {
  CHECK_CUDA(cudaSetDevice(0));
  while (!stop.load()) {
    for (int i = 0; i < 8; ++i)
      CHECK_CUDA(cudaMemcpyAsync(s.back_to, s.back_from, kStaging, cudaMemcpyHostToDevice, s.back));
    CHECK_CUDA(cudaStreamSynchronize(s.back));
  }
}

struct Result {
  double total_ms = 0, drops_ms = 0;
  long rss_mib = 0;  // the process's resident host memory once the arrays are out
};

// VmRSS: host pages a drop placed on the host would fill.
long rss_mib() {
  long pages = 0, resident = 0;
  if (FILE* statm = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(statm, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(statm);
  }
  return resident * 4096 / (1 << 20);
}

Result swap_out_all(const Setup& s, Order order, bool with_copies_back) {
  make_resident(s);
  std::atomic<bool> stop{false};
  std::thread back;
  if (with_copies_back) back = std::thread(copies_back, std::cref(s), std::cref(stop));
  std::vector<cudaEvent_t> copied(s.arrays.size());
  for (cudaEvent_t& event : copied) CHECK_CUDA(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  Result result;
  const auto start = Clock::now();
  for (size_t i = 0; i < s.arrays.size(); ++i) {
    if (order == Order::piece_first) {
      // The first piece went before the previous array's drop (and the first array's, here).
      if (i == 0) copy_out(s, s.arrays[i], 0, kStaging);
      copy_out(s, s.arrays[i], kStaging);
      CHECK_CUDA(cudaEventRecord(copied[i], s.copies));
      CHECK_CUDA(cudaEventSynchronize(copied[i]));
      if (i + 1 < s.arrays.size()) copy_out(s, s.arrays[i + 1], 0, kStaging);
      result.drops_ms += drop(s, s.arrays[i], order);
      continue;
    }
    copy_out(s, s.arrays[i]);
    CHECK_CUDA(cudaEventRecord(copied[i], s.copies));
    if (order == Order::serial || order == Order::host_serial) {
      CHECK_CUDA(cudaEventSynchronize(copied[i]));
      result.drops_ms += drop(s, s.arrays[i], order);
    } else if (order != Order::no_drops && i > 0) {
      CHECK_CUDA(cudaEventSynchronize(copied[i - 1]));
      result.drops_ms += drop(s, s.arrays[i - 1], order);
    }
  }
  if (order == Order::next_first || order == Order::next_first_other_context ||
      order == Order::host_next_first) {
    CHECK_CUDA(cudaEventSynchronize(copied.back()));
    result.drops_ms += drop(s, s.arrays.back(), order);
  }
  CHECK_CUDA(cudaStreamSynchronize(s.copies));
  result.total_ms = ms_since(start);
  result.rss_mib = rss_mib();
  stop.store(true);
  if (back.joinable()) back.join();
  for (cudaEvent_t event : copied) CHECK_CUDA(cudaEventDestroy(event));
  return result;
}

void create_other_context(Setup& s) {
  CUdevice device = 0;
  CHECK_CU(cuDeviceGet(&device, 0));
  CHECK_CU(cuCtxCreate(&s.other, nullptr, 0, device));  // current from here: popped below
  CHECK_CU(cuStreamCreate(&s.other_drops, CU_STREAM_NON_BLOCKING));
  CUcontext popped = nullptr;
  CHECK_CU(cuCtxPopCurrent(&popped));
}

}  // namespace

int main(int argc, char** argv) {
  const size_t mib = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 256;
  const size_t count = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 8;
  Setup s;
  s.bytes = mib << 20;
  if (mib == 0 || s.bytes % kStaging != 0 || count == 0) {
    std::fprintf(stderr, "drop_overlap_probe: MiB per array must be a multiple of 32, arrays at least 1\n");
    return 2;
  }
  CHECK_CUDA(cudaSetDevice(0));
  CHECK_CUDA(cudaFree(nullptr));  // the primary context, current
  size_t free_bytes = 0, total = 0;
  CHECK_CUDA(cudaMemGetInfo(&free_bytes, &total));
  if ((count + 2) * s.bytes > free_bytes / 2) {
    std::fprintf(stderr, "drop_overlap_probe: %zu x %zu MiB asks too much of %zu MiB free\n", count, mib,
                 free_bytes >> 20);
    return 1;
  }
  s.arrays.resize(count);
  for (char*& array : s.arrays) CHECK_CUDA(cudaMallocManaged(&array, s.bytes));
  CHECK_CUDA(cudaMalloc(&s.staging, kStaging));
  CHECK_CUDA(cudaMalloc(&s.back_to, kStaging));
  CHECK_CUDA(cudaHostAlloc(&s.store, s.bytes, cudaHostAllocPortable));
  CHECK_CUDA(cudaHostAlloc(&s.back_from, kStaging, cudaHostAllocPortable));
  for (cudaStream_t* stream : {&s.copies, &s.drops, &s.back})
    CHECK_CUDA(cudaStreamCreateWithFlags(stream, cudaStreamNonBlocking));
  create_other_context(s);
  swap_out_all(s, Order::serial, false);  // warm up: the store's pages, the driver's paths
  std::printf("%zu arrays of %zu MiB swapped out (copies through a 32 MiB buffer, then a drop each)\n", count,
              mib);
  std::printf("%-16s %-12s %10s %10s %14s %12s\n", "order", "beside", "total ms", "out GB/s", "drop call ms",
              "host RSS MiB");
  const double gb = static_cast<double>(count * s.bytes) / 1e9;
  for (bool back : {false, true}) {
    for (Order order : {Order::no_drops, Order::serial, Order::next_first, Order::next_first_other_context,
                        Order::piece_first, Order::host_serial, Order::host_next_first}) {
      const Result r = swap_out_all(s, order, back);
      const double per_drop = order == Order::no_drops ? 0.0 : r.drops_ms / static_cast<double>(count);
      std::printf("%-16s %-12s %10.2f %10.1f %14.2f %12ld\n", name(order), back ? "copies back" : "nothing",
                  r.total_ms, gb / (r.total_ms / 1e3), per_drop, r.rss_mib);
    }
  }
  return 0;
}
