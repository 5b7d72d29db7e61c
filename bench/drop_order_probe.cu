// drop_order_probe: whether a drop (cuMemDiscardBatchAsync) is over by the time the event recorded
// behind it completes, in the orders deepum's swap path can issue it. Each trial mirrors a swap and
// the copy back after it: a managed array, resident on the GPU, is copied into pinned memory
// through a device buffer and dropped on stream X, which then records an event; stream Y waits for
// that event, places the array on the GPU, copies a new pattern into it, spins 20 ms and counts the
// 32-bit words that do not hold the new pattern. A count above 0 means the drop landed after the
// event and undid the copy back (GPT-2 124M's weights went back to older values that way).
//   idle:          the copies, a host wait for them, then the drop and a host wait (deepum's swap)
//   behind_copies: the drop issued at once behind the copies, while they run
//   behind_hold:   a 5 ms kernel on X first (a swap waiting for its victims' last users), then
//                  the copies and the drop
//   other_context: behind_copies from a second context, its event relayed into the first through
//                  a stream that waits for it (deepum's eviction thread)
//   other_stream:  the copies on X, the drop on a third stream that waits for an event after them
//   other_both:    other_stream from a second context, the drop's event relayed into the first
//
//   drop_order_probe [MiB] [TRIALS]   (default 64 MiB, 20 trials per order)
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "managed_bench.hpp"

namespace {

constexpr size_t kPiece = size_t{32} << 20;  // the device buffer the copies pass through
constexpr unsigned long long kHoldNs = 5'000'000, kSettleNs = 20'000'000;
constexpr unsigned kOld = 0x11111111u, kResident = 0x22222222u, kRestored = 0x33333333u;

__global__ void fill(unsigned* words, size_t count, unsigned value) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < count;
       i += size_t{gridDim.x} * blockDim.x)
    words[i] = value;
}

__global__ void count_other(const unsigned* words, size_t count, unsigned value, unsigned long long* differ) {
  unsigned long long mine = 0;
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < count;
       i += size_t{gridDim.x} * blockDim.x)
    mine += words[i] != value;
  if (mine != 0) atomicAdd(differ, mine);
}

CUdeviceptr ptr(const void* p) { return reinterpret_cast<CUdeviceptr>(p); }

struct Probe {
  size_t bytes = 0;
  unsigned* array = nullptr;  // managed
  char* staging = nullptr;    // device memory of the first context
  char* staging_b = nullptr;  // device memory of the second
  char* store = nullptr;      // pinned, what the swap copies out
  char* restored = nullptr;   // pinned, the new pattern copied back
  unsigned long long* differ = nullptr;
  CUcontext first = nullptr, second = nullptr;
  CUstream x = nullptr, y = nullptr, z = nullptr, relay = nullptr, x_b = nullptr, z_b = nullptr;
  CUevent after_drop = nullptr, after_copies = nullptr, moved_b = nullptr, copied_b = nullptr;
  CUdevice device = 0;

  // Managed memory to pinned through `through` (device memory), on `on`.
  void copy_out(char* through, CUstream on) const {
    for (size_t at = 0; at < bytes; at += kPiece) {
      const size_t n = bytes - at < kPiece ? bytes - at : kPiece;
      CHECK_CU(cuMemcpyAsync(ptr(through), ptr(reinterpret_cast<char*>(array) + at), n, on));
      CHECK_CU(cuMemcpyDtoHAsync(store + at, ptr(through), n, on));
    }
  }
  void copy_in(CUstream on) const {
    for (size_t at = 0; at < bytes; at += kPiece) {
      const size_t n = bytes - at < kPiece ? bytes - at : kPiece;
      CHECK_CU(cuMemcpyHtoDAsync(ptr(staging), restored + at, n, on));
      CHECK_CU(cuMemcpyAsync(ptr(reinterpret_cast<char*>(array) + at), ptr(staging), n, on));
    }
  }
  void drop(CUstream on) const {
    CUdeviceptr p = ptr(array);
    size_t size = bytes;
    CHECK_CU(cuMemDiscardBatchAsync(&p, &size, 1, 0, on));
  }
  void place(CUstream on) const {
    CUdeviceptr p = ptr(array);
    size_t size = bytes, index = 0;
    CUmemLocation gpu{};
    gpu.type = CU_MEM_LOCATION_TYPE_DEVICE;
    gpu.id = device;
    CHECK_CU(cuMemDiscardAndPrefetchBatchAsync(&p, &size, 1, &gpu, &index, 1, 0, on));
  }
  // The host wrote kOld last; the GPU holds kResident.
  void prepare() const {
    CHECK_CUDA(cudaDeviceSynchronize());
    for (size_t i = 0; i < bytes / sizeof(unsigned); ++i) array[i] = kOld;
    CHECK_CUDA(
        cudaMemPrefetchAsync(array, bytes, bench::device_location(static_cast<int>(device)), 0, nullptr));
    fill<<<264, 512>>>(array, bytes / sizeof(unsigned), kResident);
    CHECK_CUDA(cudaMemset(differ, 0, sizeof(*differ)));
    CHECK_CUDA(cudaDeviceSynchronize());
  }
  // Y: after the drop's event, the placement and the copy back; then the count, 20 ms later.
  unsigned long long restore_and_count() const {
    CHECK_CU(cuStreamWaitEvent(y, after_drop, 0));
    place(y);
    copy_in(y);
    bench::spin<<<1, 1, 0, reinterpret_cast<cudaStream_t>(y)>>>(kSettleNs);
    count_other<<<264, 512, 0, reinterpret_cast<cudaStream_t>(y)>>>(array, bytes / sizeof(unsigned),
                                                                    kRestored, differ);
    CHECK_CUDA(cudaDeviceSynchronize());
    unsigned long long n = 0;
    CHECK_CUDA(cudaMemcpy(&n, differ, sizeof(n), cudaMemcpyDeviceToHost));
    return n;
  }
};

enum class Order { idle, behind_copies, behind_hold, other_context, other_stream, other_both };
constexpr const char* kNames[] = {"idle",          "behind_copies", "behind_hold",
                                  "other_context", "other_stream",  "other_both"};
constexpr int kOrders = sizeof(kNames) / sizeof(kNames[0]);

unsigned long long trial(Probe& p, Order order) {
  p.prepare();
  switch (order) {
    case Order::idle:
      p.copy_out(p.staging, p.x);
      CHECK_CU(cuStreamSynchronize(p.x));
      p.drop(p.x);
      CHECK_CU(cuStreamSynchronize(p.x));
      CHECK_CU(cuEventRecord(p.after_drop, p.x));
      break;
    case Order::behind_hold:
      bench::spin<<<1, 1, 0, reinterpret_cast<cudaStream_t>(p.x)>>>(kHoldNs);
      [[fallthrough]];
    case Order::behind_copies:
      p.copy_out(p.staging, p.x);
      p.drop(p.x);
      CHECK_CU(cuEventRecord(p.after_drop, p.x));
      break;
    case Order::other_context:
      CHECK_CU(cuCtxSetCurrent(p.second));
      p.copy_out(p.staging_b, p.x_b);
      p.drop(p.x_b);
      CHECK_CU(cuEventRecord(p.moved_b, p.x_b));
      CHECK_CU(cuCtxSetCurrent(p.first));
      CHECK_CU(cuStreamWaitEvent(p.relay, p.moved_b, 0));
      CHECK_CU(cuEventRecord(p.after_drop, p.relay));
      break;
    case Order::other_stream:
      p.copy_out(p.staging, p.x);
      CHECK_CU(cuEventRecord(p.after_copies, p.x));
      CHECK_CU(cuStreamWaitEvent(p.z, p.after_copies, 0));
      p.drop(p.z);
      CHECK_CU(cuEventRecord(p.after_drop, p.z));
      break;
    case Order::other_both:
      CHECK_CU(cuCtxSetCurrent(p.second));
      p.copy_out(p.staging_b, p.x_b);
      CHECK_CU(cuEventRecord(p.copied_b, p.x_b));
      CHECK_CU(cuStreamWaitEvent(p.z_b, p.copied_b, 0));
      p.drop(p.z_b);
      CHECK_CU(cuEventRecord(p.moved_b, p.z_b));
      CHECK_CU(cuCtxSetCurrent(p.first));
      CHECK_CU(cuStreamWaitEvent(p.relay, p.moved_b, 0));
      CHECK_CU(cuEventRecord(p.after_drop, p.relay));
      break;
  }
  return p.restore_and_count();
}

}  // namespace

int main(int argc, char** argv) {
  int device = 0;
  Probe p;
  p.bytes = bench::requested_bytes(argc, argv, 64, 8, "drop_order_probe", &device) / kPiece * kPiece;
  const int trials = argc > 2 ? std::atoi(argv[2]) : 20;
  if (p.bytes == 0 || trials <= 0) {
    std::fprintf(stderr, "drop_order_probe: give at least 32 MiB and one trial\n");
    return 2;
  }
  p.device = device;
  CHECK_CUDA(cudaFree(nullptr));  // the runtime's context, current from here on
  CHECK_CU(cuCtxGetCurrent(&p.first));
  CHECK_CUDA(cudaMallocManaged(&p.array, p.bytes));
  CHECK_CUDA(cudaMalloc(&p.staging, kPiece));
  CHECK_CUDA(cudaMalloc(&p.differ, sizeof(*p.differ)));
  CHECK_CUDA(cudaHostAlloc(&p.store, p.bytes, cudaHostAllocPortable));
  CHECK_CUDA(cudaHostAlloc(&p.restored, p.bytes, cudaHostAllocPortable));
  for (size_t i = 0; i < p.bytes / sizeof(unsigned); ++i)
    reinterpret_cast<unsigned*>(p.restored)[i] = kRestored;
  for (CUstream* s : {&p.x, &p.y, &p.z, &p.relay}) CHECK_CU(cuStreamCreate(s, CU_STREAM_NON_BLOCKING));
  for (CUevent* e : {&p.after_drop, &p.after_copies}) CHECK_CU(cuEventCreate(e, CU_EVENT_DISABLE_TIMING));
  CHECK_CU(cuCtxCreate(&p.second, nullptr, 0, p.device));  // current now
  for (CUstream* s : {&p.x_b, &p.z_b}) CHECK_CU(cuStreamCreate(s, CU_STREAM_NON_BLOCKING));
  for (CUevent* e : {&p.moved_b, &p.copied_b}) CHECK_CU(cuEventCreate(e, CU_EVENT_DISABLE_TIMING));
  CUdeviceptr staging_b = 0;
  CHECK_CU(cuMemAlloc(&staging_b, kPiece));
  p.staging_b = reinterpret_cast<char*>(staging_b);
  CHECK_CU(cuCtxSetCurrent(p.first));
  std::printf("array %zu MiB, %d trials per order; words not holding what was copied back 20 ms earlier:\n",
              p.bytes >> 20, trials);
  for (int o = 0; o < kOrders; ++o) {
    int bad = 0;
    unsigned long long worst = 0;
    for (int t = 0; t < trials; ++t) {
      const unsigned long long n = trial(p, static_cast<Order>(o));
      bad += n != 0;
      worst = n > worst ? n : worst;
    }
    std::printf("%-14s %2d of %d trials lost the copy back (at most %llu of %zu words)\n", kNames[o], bad,
                trials, worst, p.bytes / sizeof(unsigned));
  }
  return 0;
}
