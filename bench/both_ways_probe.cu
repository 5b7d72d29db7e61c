// both_ways_probe: whether a swap's copy out and a restore's copy back run at once, each at the
// link's rate, in the ways deepum can issue the copy out. The copy back is deepum's restore: a
// placement of the array, then 32 MiB pieces from pinned memory into a device buffer and from there
// into the array by a kernel, in the program's context. The copy out goes the other way through
// device buffers of its own, from a thread in a context of its own (deepum's eviction thread) or
// in the program's context, the managed-to-buffer leg by the driver's batched copy or by a kernel,
// through one buffer (each piece waits for the one before it) or two (taking turns on two
// streams). Each row: the copy out alone, the copy back alone, then both issued at once, the
// median of five, with the rate of each way.
//
//   both_ways_probe [MiB]   (default 256 per array, two arrays; keep well under free memory)
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "managed_bench.hpp"

namespace {

using bench::Clock;
using bench::ms_since;
constexpr size_t kBlock = 2 << 20;
constexpr size_t kPiece = 32 << 20;

// A context's streams and device buffers for one way.
struct Side {
  CUcontext context = nullptr;
  CUstream streams[2] = {};
  CUdeviceptr buffers[2] = {};
  void create(CUcontext in) {
    context = in;
    CHECK_CU(cuCtxSetCurrent(context));
    for (int i = 0; i < 2; ++i) {
      CHECK_CU(cuStreamCreate(&streams[i], CU_STREAM_NON_BLOCKING));
      CHECK_CU(cuMemAlloc(&buffers[i], kPiece));
    }
  }
  void synchronize() const {
    CHECK_CU(cuCtxSetCurrent(context));
    for (CUstream s : streams) CHECK_CU(cuStreamSynchronize(s));
  }
};

// The managed leg of a piece by the driver: one batched call of 2 MiB copies, as deepum makes it.
void driver_copy(CUdeviceptr to, CUdeviceptr from, size_t bytes, CUdevice device, CUstream stream) {
  std::vector<CUdeviceptr> dsts, srcs;
  for (size_t at = 0; at < bytes; at += kBlock) {
    dsts.push_back(to + at);
    srcs.push_back(from + at);
  }
  bench::batched_copies(dsts, srcs, bench::on_gpu(device), bench::on_gpu(device), kBlock, stream);
}

void kernel_copy(CUdeviceptr to, CUdeviceptr from, size_t bytes, CUstream stream) {
  bench::copy_kernel<<<264, 512, 0, reinterpret_cast<cudaStream_t>(stream)>>>(
      reinterpret_cast<const int4*>(from), reinterpret_cast<int4*>(to), bytes / sizeof(int4));
  CHECK_CUDA(cudaGetLastError());
}

struct OutWay {
  const char* name;
  bool own_context, by_kernel;
  int buffers;
};

// The array into pinned memory, piece by piece through the side's buffers.
void copy_out(const Side& side, const OutWay& way, char* array, char* pinned, size_t bytes, CUdevice device) {
  CHECK_CU(cuCtxSetCurrent(side.context));
  for (size_t at = 0, piece = 0; at < bytes; at += kPiece, ++piece) {
    const int turn = static_cast<int>(piece % static_cast<size_t>(way.buffers));
    const CUstream stream = side.streams[turn];
    const CUdeviceptr buffer = side.buffers[turn], managed = bench::address(array + at);
    const size_t n = std::min(kPiece, bytes - at);
    if (way.by_kernel)
      kernel_copy(buffer, managed, n, stream);
    else
      driver_copy(buffer, managed, n, device, stream);
    CHECK_CU(cuMemcpyDtoHAsync(pinned + at, buffer, n, stream));
  }
}

// deepum's restore: placed, then pinned memory into the buffer and the buffer into the array.
void copy_back(const Side& side, char* array, char* pinned, size_t bytes, CUdevice device) {
  CHECK_CU(cuCtxSetCurrent(side.context));
  const CUstream stream = side.streams[0];
  CUdeviceptr pointer = bench::address(array);
  size_t size = bytes, index = 0;
  CUmemLocation gpu = bench::on_gpu(device);
  CHECK_CU(cuMemDiscardAndPrefetchBatchAsync(&pointer, &size, 1, &gpu, &index, 1, 0, stream));
  for (size_t at = 0; at < bytes; at += kPiece) {
    const size_t n = std::min(kPiece, bytes - at);
    CHECK_CU(cuMemcpyHtoDAsync(side.buffers[0], pinned + at, n, stream));
    kernel_copy(bench::address(array + at), side.buffers[0], n, stream);
  }
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int device = 0;
  const size_t bytes =
      bench::requested_bytes(argc, argv, 256, 8, "both_ways_probe", &device) / kBlock * kBlock;
  CHECK_CUDA(cudaFree(nullptr));
  CUcontext program = nullptr, own = nullptr;
  CHECK_CU(cuCtxGetCurrent(&program));
  CHECK_CU(cuCtxCreate(&own, nullptr, 0, device));
  Side program_out, own_out, back;
  program_out.create(program);
  own_out.create(own);
  back.create(program);
  CHECK_CU(cuCtxSetCurrent(program));
  char *out = nullptr, *in = nullptr, *pinned_out = nullptr, *pinned_in = nullptr;
  CHECK_CUDA(cudaMallocManaged(&out, bytes));
  CHECK_CUDA(cudaMallocManaged(&in, bytes));
  CHECK_CUDA(cudaMallocHost(&pinned_out, bytes));
  CHECK_CUDA(cudaMallocHost(&pinned_in, bytes));
  std::memset(out, 3, bytes);
  for (size_t i = 0; i < bytes; i += 4096) pinned_in[i] = static_cast<char>(i / 4096);
  const auto prepare = [&] {  // the array out resident, the array back dropped, as deepum leaves them
    CHECK_CU(cuCtxSetCurrent(program));
    CHECK_CUDA(cudaMemPrefetchAsync(out, bytes, bench::device_location(device), 0, nullptr));
    CUdeviceptr pointer = bench::address(in);
    size_t size = bytes;
    CHECK_CU(cuMemDiscardBatchAsync(&pointer, &size, 1, 0, back.streams[0]));
    std::memset(pinned_out, 0, bytes);
    CHECK_CUDA(cudaDeviceSynchronize());
  };
  const double gb = static_cast<double>(bytes) / 1e6;
  const OutWay ways[] = {
      {"own context, driver copy, 1 buffer", true, false, 1},
      {"own context, driver copy, 2 buffers", true, false, 2},
      {"program context, driver copy, 1 buffer", false, false, 1},
      {"program context, kernel, 1 buffer", false, true, 1},
      {"program context, kernel, 2 buffers", false, true, 2},
  };
  std::vector<double> back_alone;
  for (int i = 0; i < 5; ++i) {
    prepare();
    const auto start = Clock::now();
    copy_back(back, in, pinned_in, bytes, device);
    back.synchronize();
    back_alone.push_back(ms_since(start));
  }
  std::printf("%zu MiB each way, %zu MiB pieces; copy back alone %.2f ms (%.1f GB/s)\n", bytes >> 20,
              kPiece >> 20, median(back_alone), gb / median(back_alone));
  std::printf("%-40s %10s %14s %14s\n", "copy out", "alone", "both: out", "both: back");
  for (const OutWay& way : ways) {
    const Side& side = way.own_context ? own_out : program_out;
    std::vector<double> alone, both_out, both_back;
    for (int i = 0; i < 5; ++i) {
      prepare();
      auto start = Clock::now();
      copy_out(side, way, out, pinned_out, bytes, device);
      side.synchronize();
      alone.push_back(ms_since(start));
      prepare();
      std::atomic<bool> go{false};
      double out_ms = 0, back_ms = 0;
      std::thread out_thread([&] {
        while (!go.load()) std::this_thread::yield();
        copy_out(side, way, out, pinned_out, bytes, device);
        side.synchronize();
        out_ms = ms_since(start);
      });
      start = Clock::now();
      go.store(true);
      copy_back(back, in, pinned_in, bytes, device);
      back.synchronize();
      back_ms = ms_since(start);
      out_thread.join();
      both_out.push_back(out_ms);
      both_back.push_back(back_ms);
    }
    for (size_t at = 0; at < bytes; at += 4096) {
      if (pinned_out[at] != 3 || in[at] != pinned_in[at]) {
        std::fprintf(stderr, "both_ways_probe: %s: a copy does not match at byte %zu\n", way.name, at);
        return 1;
      }
    }
    std::printf("%-40s %5.2f ms %4.1f %5.2f ms %4.1f %5.2f ms %4.1f  (ms, GB/s)\n", way.name, median(alone),
                gb / median(alone), median(both_out), gb / median(both_out), median(both_back),
                gb / median(both_back));
  }
  CHECK_CU(cuCtxSetCurrent(program));
  return 0;
}
