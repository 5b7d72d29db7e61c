// swap_call_probe: what each driver call of deepum's swap path costs the calling thread, and how
// fast its moves run, in the states deepum makes them (a 256 MiB array, as the CUDA sweep's, in
// 2 MiB blocks):
//   copy_out:        per block, a copy of GPU-resident managed memory into pinned memory, then one
//                    discard of the array, on an idle stream
//   copy_out_held:   the same behind a 5 ms kernel on that stream (deepum's: after the victims' users)
//   place_idle:      one discard-and-prefetch of the array to the GPU (a placement), idle stream
//   place_held:      the same behind a 5 ms kernel (deepum's restore waits for the room's eviction)
//   copy_in:         per block, a copy from pinned memory into the placed array
//   both_ways:       copy_out of one array and place + copy_in of another at once, two streams
//   kernel_in_*:     the copy in done by a kernel reading the pinned memory through its mapping
//   both_ways_kernel_in: copy out by the copy engines beside the copy in by a kernel
//   both_ways_kernels: both copies by kernels; kernel_in_beside_device_out: the copy in by a kernel
//                    beside a copy engine's copy out of device (not managed) memory
//   place_staged_in_held_N: a placement and deepum's copy back through a device buffer, N blocks a
//                    piece (two batched calls each), behind a 5 ms kernel; *_beside_copies_out and
//                    *_beside_swaps: the same (N = 16) while a thread in a context of its own copies
//                    another array out through a buffer of its own, waits, and (swaps) drops it
//                    and places it back, over and over, as deepum's eviction thread does
//   both_ways_staged: both ways through device buffers, in 32 MiB pieces (only the copies between
//                    device memory and the arrays touch managed memory); managed_to_device: that copy
//   *_beside_copy_out: a placement, a discard or a copy in, issued while a copy out runs
//   copy_out_beside_*, staged_out_beside_*: a copy out (direct, or through a device buffer as
//                    deepum's) issued while nothing, a placement or a discard runs on the other stream
//   host_copy_back:  the host writes the array's contents back into it after a discard (deepum's
//                    copy back on the host), as is, and after placing it on the host first
// host ms: until the calls returned; done ms: until the stream finished; GB/s of the move.
//
//   swap_call_probe [MiB]   (default 256 per array, four arrays; keep well under free memory)
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "managed_bench.hpp"

namespace {

using bench::Clock;
using bench::ms_since;
constexpr size_t kBlock = 2 << 20;
constexpr unsigned long long kHoldNs = 5'000'000;

struct Row {
  const char* name;
  double host_ms, done_ms, gb_per_s;
};

void print(const Row& row) {
  std::printf("%-22s host %8.3f ms  done %8.3f ms  %6.1f GB/s\n", row.name, row.host_ms, row.done_ms,
              row.gb_per_s);
}

// Host ms of the calls and done ms, for `issue` on `stream` (behind a hold when `held`).
template <typename Issue>
Row timed(const char* name, size_t bytes, cudaStream_t stream, bool held, Issue&& issue) {
  CHECK_CUDA(cudaDeviceSynchronize());
  if (held) bench::spin<<<1, 1, 0, stream>>>(kHoldNs);
  const auto start = Clock::now();
  issue();
  const double host = ms_since(start);
  CHECK_CUDA(cudaStreamSynchronize(stream));
  const double done = ms_since(start) - (held ? kHoldNs / 1e6 : 0);
  return {name, host, done, static_cast<double>(bytes) / (done * 1e6)};
}

void copy_out(char* array, char* pinned, size_t bytes, cudaStream_t stream) {
  for (size_t at = 0; at < bytes; at += kBlock)
    CHECK_CU(cuMemcpyDtoHAsync(pinned + at, reinterpret_cast<CUdeviceptr>(array + at), kBlock,
                               reinterpret_cast<CUstream>(stream)));
  CUdeviceptr pointer = reinterpret_cast<CUdeviceptr>(array);
  size_t size = bytes;
  CHECK_CU(cuMemDiscardBatchAsync(&pointer, &size, 1, 0, reinterpret_cast<CUstream>(stream)));
}

// The same as one batched call, with where the managed operands are hinted (or not).
void batch_copy(char* managed, char* pinned, size_t bytes, bool to_host, bool hinted, CUdevice device,
                cudaStream_t stream) {
  std::vector<CUdeviceptr> dsts, srcs;
  for (size_t at = 0; at < bytes; at += kBlock) {
    const auto gpu = reinterpret_cast<CUdeviceptr>(managed + at),
               cpu = reinterpret_cast<CUdeviceptr>(pinned + at);
    dsts.push_back(to_host ? cpu : gpu);
    srcs.push_back(to_host ? gpu : cpu);
  }
  const CUmemLocation gpu = hinted ? bench::on_gpu(device) : CUmemLocation{},
                      host = hinted ? bench::on_host() : CUmemLocation{};
  bench::batched_copies(dsts, srcs, to_host ? gpu : host, to_host ? host : gpu, kBlock,
                        reinterpret_cast<CUstream>(stream));
}

// As deepum swaps blocks out or copies them back: through a device buffer, `piece` blocks at a
// time, each piece one batched call between pinned memory and the buffer and one between the
// buffer and the managed blocks, the operands' locations hinted.
void staged_batches(char* managed, char* pinned, CUdeviceptr stage, size_t bytes, size_t piece, bool to_host,
                    CUdevice device, CUstream stream) {
  const CUmemLocation gpu = bench::on_gpu(device), host = bench::on_host();
  for (size_t start = 0; start < bytes; start += piece * kBlock) {
    std::vector<CUdeviceptr> staged, in_pinned, in_managed;
    for (size_t at = start; at < std::min(bytes, start + piece * kBlock); at += kBlock) {
      staged.push_back(stage + (at - start));
      in_pinned.push_back(reinterpret_cast<CUdeviceptr>(pinned + at));
      in_managed.push_back(reinterpret_cast<CUdeviceptr>(managed + at));
    }
    if (to_host) {
      bench::batched_copies(staged, in_managed, gpu, gpu, kBlock, stream);
      bench::batched_copies(in_pinned, staged, gpu, host, kBlock, stream);
    } else {
      bench::batched_copies(staged, in_pinned, host, gpu, kBlock, stream);
      bench::batched_copies(in_managed, staged, gpu, gpu, kBlock, stream);
    }
  }
}

// What deepum's eviction thread does, over and over, from a thread in a context of its own:
// `array` copied out through a device buffer of its own, 16 blocks a piece, waited for on the
// host, then (with `drops`) dropped and placed back on the GPU.
class BackgroundSwaps {
 public:
  BackgroundSwaps(char* array, size_t bytes, CUdevice device, bool drops) {
    thread_ = std::thread([this, array, bytes, device, drops] { run(array, bytes, device, drops); });
    while (!started_.load()) std::this_thread::yield();
  }
  ~BackgroundSwaps() {
    stop_.store(true);
    thread_.join();
  }
  BackgroundSwaps(const BackgroundSwaps&) = delete;
  BackgroundSwaps& operator=(const BackgroundSwaps&) = delete;
  long rounds() const { return rounds_.load(); }

 private:
  void run(char* array, size_t bytes, CUdevice device, bool drops) {
    CUcontext context = nullptr;
    CHECK_CU(cuCtxCreate(&context, nullptr, 0, device));
    CUstream stream = nullptr;
    CHECK_CU(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    CUdeviceptr stage = 0;
    CHECK_CU(cuMemAlloc(&stage, 16 * kBlock));
    void* pinned = nullptr;
    CHECK_CU(cuMemAllocHost(&pinned, bytes));
    CUmemLocation gpu = bench::on_gpu(device);  // the driver's call takes it by non-const pointer
    started_.store(true);
    while (!stop_.load()) {
      staged_batches(array, static_cast<char*>(pinned), stage, bytes, 16, true, device, stream);
      CHECK_CU(cuStreamSynchronize(stream));
      if (drops) {
        CUdeviceptr pointer = reinterpret_cast<CUdeviceptr>(array);
        size_t size = bytes, index = 0;
        CHECK_CU(cuMemDiscardBatchAsync(&pointer, &size, 1, 0, stream));
        CHECK_CU(cuStreamSynchronize(stream));
        CHECK_CU(cuMemDiscardAndPrefetchBatchAsync(&pointer, &size, 1, &gpu, &index, 1, 0, stream));
        CHECK_CU(cuStreamSynchronize(stream));
      }
      rounds_.fetch_add(1);
    }
    CHECK_CU(cuMemFreeHost(pinned));
    CHECK_CU(cuMemFree(stage));
    CHECK_CU(cuStreamDestroy(stream));
    CHECK_CU(cuCtxDestroy(context));
  }

  std::thread thread_;
  std::atomic<bool> started_{false}, stop_{false};
  std::atomic<long> rounds_{0};
};

// A copy by the GPU's own threads: reads pinned host memory through its mapping, writes the array.
void kernel_copy_in(char* array, const char* pinned, size_t bytes, int blocks, cudaStream_t stream) {
  bench::copy_kernel<<<blocks, 512, 0, stream>>>(reinterpret_cast<const int4*>(pinned),
                                                 reinterpret_cast<int4*>(array), bytes / sizeof(int4));
  CHECK_CUDA(cudaGetLastError());
}

void place(char* array, size_t bytes, CUmemLocation location, cudaStream_t stream) {
  CUdeviceptr pointer = reinterpret_cast<CUdeviceptr>(array);
  size_t size = bytes, index = 0;
  CHECK_CU(cuMemDiscardAndPrefetchBatchAsync(&pointer, &size, 1, &location, &index, 1, 0,
                                             reinterpret_cast<CUstream>(stream)));
}

void copy_in(char* array, const char* pinned, size_t bytes, cudaStream_t stream) {
  for (size_t at = 0; at < bytes; at += kBlock)
    CHECK_CU(cuMemcpyHtoDAsync(reinterpret_cast<CUdeviceptr>(array + at), pinned + at, kBlock,
                               reinterpret_cast<CUstream>(stream)));
}

}  // namespace

int main(int argc, char** argv) {
  int device = 0;
  const size_t bytes =
      bench::requested_bytes(argc, argv, 256, 8, "swap_call_probe", &device) / kBlock * kBlock;
  CUmemLocation gpu{};
  gpu.type = CU_MEM_LOCATION_TYPE_DEVICE;
  gpu.id = device;
  CUmemLocation host{};
  host.type = CU_MEM_LOCATION_TYPE_HOST;
  char *a = nullptr, *b = nullptr, *c = nullptr, *pinned_a = nullptr, *pinned_b = nullptr;
  CHECK_CUDA(cudaMallocManaged(&a, bytes));
  CHECK_CUDA(cudaMallocManaged(&b, bytes));
  CHECK_CUDA(cudaMallocManaged(&c, bytes));
  CHECK_CUDA(cudaMallocHost(&pinned_a, bytes));
  CHECK_CUDA(cudaMallocHost(&pinned_b, bytes));
  std::memset(pinned_a, 1, bytes);
  std::memset(pinned_b, 2, bytes);
  cudaStream_t s1 = nullptr, s2 = nullptr;
  CHECK_CUDA(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  CHECK_CUDA(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  const auto resident = [&](char* array) {
    CHECK_CUDA(cudaMemsetAsync(array, 3, bytes, s1));
    CHECK_CUDA(cudaStreamSynchronize(s1));
  };
  std::printf("array %zu MiB in %zu blocks of 2 MiB\n", bytes >> 20, bytes / kBlock);
  for (int round = 0; round < 2; ++round) {  // the first round warms the driver up
    const bool show = round == 1;
    resident(a);
    Row row = timed("copy_out", bytes, s1, false, [&] { copy_out(a, pinned_a, bytes, s1); });
    if (show) print(row);
    resident(a);
    row = timed("copy_out_held", bytes, s1, true, [&] { copy_out(a, pinned_a, bytes, s1); });
    if (show) print(row);
    for (const bool hinted : {false, true}) {
      resident(a);
      row = timed(hinted ? "batch_out_held_hinted" : "batch_out_held", bytes, s1, true, [&] {
        batch_copy(a, pinned_a, bytes, true, hinted, device, s1);
        CUdeviceptr pointer = reinterpret_cast<CUdeviceptr>(a);
        size_t size = bytes;
        CHECK_CU(cuMemDiscardBatchAsync(&pointer, &size, 1, 0, reinterpret_cast<CUstream>(s1)));
      });
      if (show) print(row);
      row = timed(hinted ? "place_batch_in_held_hinted" : "place_batch_in_held", bytes, s2, true, [&] {
        place(b, bytes, gpu, s2);
        batch_copy(b, pinned_b, bytes, false, hinted, device, s2);
      });
      if (show) print(row);
    }
    row = timed("place_copy_in_held", bytes, s2, true, [&] {
      place(b, bytes, gpu, s2);
      copy_in(b, pinned_b, bytes, s2);
    });
    if (show) print(row);
    resident(a);
    CHECK_CUDA(cudaDeviceSynchronize());
    {
      bench::spin<<<1, 1, 0, s1>>>(kHoldNs);
      bench::spin<<<1, 1, 0, s2>>>(kHoldNs);
      const auto start = Clock::now();
      batch_copy(a, pinned_a, bytes, true, true, device, s1);
      place(c, bytes, gpu, s2);
      batch_copy(c, pinned_b, bytes, false, true, device, s2);
      const double issued = ms_since(start);
      CHECK_CUDA(cudaDeviceSynchronize());
      const double done = ms_since(start) - kHoldNs / 1e6;
      if (show) print({"both_ways_held_hinted", issued, done, static_cast<double>(bytes) / (done * 1e6)});
    }
    // The calls deepum's program thread makes while its earlier moves run: each timed alone, 1 ms
    // after a copy out of 256 MiB started on the other stream.
    for (int call = 0; call < 3; ++call) {
      resident(a);
      resident(c);
      CHECK_CUDA(cudaDeviceSynchronize());
      batch_copy(a, pinned_a, bytes, true, true, device, s1);
      const auto started = Clock::now();
      while (ms_since(started) < 1.0) {
      }
      const auto start = Clock::now();
      if (call == 0) {
        place(b, bytes, gpu, s2);
      } else if (call == 1) {
        CUdeviceptr pointer = reinterpret_cast<CUdeviceptr>(c);
        size_t size = bytes;
        CHECK_CU(cuMemDiscardBatchAsync(&pointer, &size, 1, 0, reinterpret_cast<CUstream>(s2)));
      } else {
        batch_copy(c, pinned_b, bytes, false, true, device, s2);
      }
      const double issued = ms_since(start);
      CHECK_CUDA(cudaDeviceSynchronize());
      const char* names[] = {"place_beside_copy_out", "discard_beside_copy_out", "copy_in_beside_copy_out"};
      if (show) print({names[call], issued, ms_since(start), 0.0});
    }
    // The reverse: deepum's eviction thread copying out (directly, and as it does, through a 32 MiB
    // device buffer) while nothing, a placement or a discard of the program's runs on the other
    // stream (held 1 ms behind a kernel, so their calls return at once).
    CUdeviceptr stage = 0;
    CHECK_CU(cuMemAlloc(&stage, 16 * kBlock));
    for (int move = 0; move < 3; ++move) {
      for (const bool staged : {false, true}) {
        resident(a);
        resident(c);
        CHECK_CUDA(cudaDeviceSynchronize());
        bench::spin<<<1, 1, 0, s2>>>(1'000'000);
        if (move == 1) {
          place(b, bytes, gpu, s2);
        } else if (move == 2) {
          CUdeviceptr pointer = reinterpret_cast<CUdeviceptr>(c);
          size_t size = bytes;
          CHECK_CU(cuMemDiscardBatchAsync(&pointer, &size, 1, 0, reinterpret_cast<CUstream>(s2)));
        }
        const auto started = Clock::now();
        while (ms_since(started) < 1.05) {
        }
        const auto start = Clock::now();
        if (staged) {
          staged_batches(a, pinned_a, stage, bytes, 16, true, device, reinterpret_cast<CUstream>(s1));
        } else {
          batch_copy(a, pinned_a, bytes, true, true, device, s1);
        }
        const double issued = ms_since(start);
        CHECK_CUDA(cudaStreamSynchronize(s1));
        const double done = ms_since(start);
        CHECK_CUDA(cudaDeviceSynchronize());
        const char* names[3][2] = {{"copy_out_beside_none", "staged_out_beside_none"},
                                   {"copy_out_beside_place", "staged_out_beside_place"},
                                   {"copy_out_beside_discard", "staged_out_beside_discard"}};
        if (show) print({names[move][staged], issued, done, static_cast<double>(bytes) / (done * 1e6)});
      }
    }
    CHECK_CU(cuMemFree(stage));
    // Copying in with a kernel instead of the copy engines: alone, and beside a copy out.
    for (const int blocks : {32, 132}) {
      place(b, bytes, gpu, s2);
      CHECK_CUDA(cudaDeviceSynchronize());
      row = timed(blocks == 32 ? "kernel_in_32_blocks" : "kernel_in_132_blocks", bytes, s2, false,
                  [&] { kernel_copy_in(b, pinned_b, bytes, blocks, s2); });
      if (show) print(row);
    }
    resident(a);
    place(c, bytes, gpu, s2);
    CHECK_CUDA(cudaDeviceSynchronize());
    {
      const auto start = Clock::now();
      batch_copy(a, pinned_a, bytes, true, true, device, s1);
      kernel_copy_in(c, pinned_b, bytes, 132, s2);
      CHECK_CUDA(cudaDeviceSynchronize());
      const double done = ms_since(start);
      if (show) print({"both_ways_kernel_in", 0, done, static_cast<double>(bytes) / (done * 1e6)});
    }
    {
      // Both ways by kernels: out reads the array and writes pinned memory through its mapping.
      resident(a);
      const auto start = Clock::now();
      bench::copy_kernel<<<32, 512, 0, s1>>>(reinterpret_cast<const int4*>(a),
                                             reinterpret_cast<int4*>(pinned_a), bytes / sizeof(int4));
      kernel_copy_in(c, pinned_b, bytes, 32, s2);
      CHECK_CUDA(cudaDeviceSynchronize());
      const double done = ms_since(start);
      if (show) print({"both_ways_kernels", 0, done, static_cast<double>(bytes) / (done * 1e6)});
    }
    {
      // The copy in by a kernel beside a copy out of device memory (not managed) by the copy engines.
      char* device_memory = nullptr;
      CHECK_CUDA(cudaMalloc(&device_memory, bytes));
      const auto start = Clock::now();
      CHECK_CUDA(cudaMemcpyAsync(pinned_a, device_memory, bytes, cudaMemcpyDeviceToHost, s1));
      kernel_copy_in(c, pinned_b, bytes, 32, s2);
      CHECK_CUDA(cudaDeviceSynchronize());
      const double done = ms_since(start);
      if (show) print({"kernel_in_beside_device_out", 0, done, static_cast<double>(bytes) / (done * 1e6)});
      CHECK_CUDA(cudaFree(device_memory));
    }
    {
      // Staged through device memory: out, the array to a device buffer, then that to pinned
      // memory; in, pinned memory to a device buffer, then that into the placed array; in 32 MiB
      // pieces, so that only the device-to-device copies touch managed memory.
      char *out_stage = nullptr, *in_stage = nullptr;
      CHECK_CUDA(cudaMalloc(&out_stage, bytes));
      CHECK_CUDA(cudaMalloc(&in_stage, bytes));
      resident(a);
      place(c, bytes, gpu, s2);
      CHECK_CUDA(cudaDeviceSynchronize());
      constexpr size_t kPiece = 32 << 20;
      const auto start = Clock::now();
      for (size_t at = 0; at < bytes; at += kPiece) {
        CHECK_CUDA(cudaMemcpyAsync(out_stage + at, a + at, kPiece, cudaMemcpyDeviceToDevice, s1));
        CHECK_CUDA(cudaMemcpyAsync(pinned_a + at, out_stage + at, kPiece, cudaMemcpyDeviceToHost, s1));
        CHECK_CUDA(cudaMemcpyAsync(in_stage + at, pinned_b + at, kPiece, cudaMemcpyHostToDevice, s2));
        CHECK_CUDA(cudaMemcpyAsync(c + at, in_stage + at, kPiece, cudaMemcpyDeviceToDevice, s2));
      }
      CHECK_CUDA(cudaDeviceSynchronize());
      const double done = ms_since(start);
      if (show) print({"both_ways_staged", 0, done, static_cast<double>(bytes) / (done * 1e6)});
      resident(a);
      CHECK_CUDA(cudaDeviceSynchronize());
      const auto d2d = Clock::now();
      CHECK_CUDA(cudaMemcpyAsync(out_stage, a, bytes, cudaMemcpyDeviceToDevice, s1));
      CHECK_CUDA(cudaStreamSynchronize(s1));
      const double d2d_ms = ms_since(d2d);
      if (show) print({"managed_to_device", 0, d2d_ms, static_cast<double>(bytes) / (d2d_ms * 1e6)});
      CHECK_CUDA(cudaFree(out_stage));
      CHECK_CUDA(cudaFree(in_stage));
    }
    if (std::memcmp(pinned_b, c, 4096) != 0 || std::memcmp(pinned_b, b, 4096) != 0) {
      std::fprintf(stderr, "swap_call_probe: the kernel's copy does not match\n");
      return 1;
    }
    row = timed("place_idle", bytes, s2, false, [&] { place(b, bytes, gpu, s2); });
    if (show) print(row);
    CHECK_CU(cuMemDiscardBatchAsync(reinterpret_cast<CUdeviceptr*>(&b), const_cast<size_t*>(&bytes), 1, 0,
                                    reinterpret_cast<CUstream>(s2)));
    row = timed("place_held", bytes, s2, true, [&] { place(b, bytes, gpu, s2); });
    if (show) print(row);
    row = timed("copy_in", bytes, s2, false, [&] { copy_in(b, pinned_b, bytes, s2); });
    if (show) print(row);
    {
      // deepum's copies back: placed (its blocks dropped first), then staged in pieces of 16 blocks
      // (its 32 MiB buffer) or more.
      char* stage = nullptr;
      CHECK_CUDA(cudaMalloc(&stage, bytes));
      const auto staged_in = [&](const char* name, size_t piece) {
        CUdeviceptr pointer = reinterpret_cast<CUdeviceptr>(b);
        size_t size = bytes;
        CHECK_CU(cuMemDiscardBatchAsync(&pointer, &size, 1, 0, reinterpret_cast<CUstream>(s2)));
        return timed(name, bytes, s2, true, [&] {
          place(b, bytes, gpu, s2);
          staged_batches(b, pinned_b, reinterpret_cast<CUdeviceptr>(stage), bytes, piece, false, device,
                         reinterpret_cast<CUstream>(s2));
        });
      };
      for (size_t piece : {16, 64, 128}) {
        char name[48];
        std::snprintf(name, sizeof name, "place_staged_in_held_%zu", piece);
        row = staged_in(name, piece);
        if (show) print(row);
      }
      // The same beside deepum's eviction thread at work in a context of its own (median of 7).
      char* d = nullptr;
      CHECK_CUDA(cudaMallocManaged(&d, bytes));
      for (const bool drops : {false, true}) {
        resident(d);
        BackgroundSwaps swaps(d, bytes, device, drops);
        std::vector<Row> rows;
        for (int i = 0; i < 7; ++i)
          rows.push_back(
              staged_in(drops ? "place_staged_in_beside_swaps" : "place_staged_in_beside_copies_out", 16));
        std::sort(rows.begin(), rows.end(), [](const Row& x, const Row& y) { return x.host_ms < y.host_ms; });
        if (show) {
          print(rows[rows.size() / 2]);
          std::printf("  (the thread beside: %ld rounds; host ms of the 7: min %.3f max %.3f)\n",
                      swaps.rounds(), rows.front().host_ms, rows.back().host_ms);
        }
      }
      CHECK_CUDA(cudaFree(d));
      CHECK_CUDA(cudaFree(stage));
      if (std::memcmp(pinned_b, b, bytes) != 0) {
        std::fprintf(stderr, "swap_call_probe: the staged copy back does not match\n");
        return 1;
      }
    }
    resident(a);
    CHECK_CUDA(cudaDeviceSynchronize());
    const auto start = Clock::now();
    copy_out(a, pinned_a, bytes, s1);
    place(c, bytes, gpu, s2);
    copy_in(c, pinned_b, bytes, s2);
    const double issued = ms_since(start);
    CHECK_CUDA(cudaDeviceSynchronize());
    const double done = ms_since(start);
    if (show) print({"both_ways (each way)", issued, done, static_cast<double>(bytes) / (done * 1e6)});
    // The host writes back what a discard dropped: page by page, then placed on the host first.
    CHECK_CUDA(cudaDeviceSynchronize());
    auto at = Clock::now();
    std::memcpy(a, pinned_a, bytes);
    double ms = ms_since(at);
    if (show) print({"host_copy_back", ms, ms, static_cast<double>(bytes) / (ms * 1e6)});
    resident(a);
    copy_out(a, pinned_a, bytes, s1);
    CHECK_CUDA(cudaStreamSynchronize(s1));
    at = Clock::now();
    place(a, bytes, host, s1);
    CHECK_CUDA(cudaStreamSynchronize(s1));
    const double placed = ms_since(at);
    std::memcpy(a, pinned_a, bytes);
    ms = ms_since(at);
    if (show) print({"host_copy_back_placed", placed, ms, static_cast<double>(bytes) / (ms * 1e6)});
    if (std::memcmp(a, pinned_a, bytes) != 0) {
      std::fprintf(stderr, "swap_call_probe: the copy back does not match\n");
      return 1;
    }
  }
  return 0;
}
