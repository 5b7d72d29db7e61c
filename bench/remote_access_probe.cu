// remote_access_probe: how fast a kernel reaches managed memory in each place deepum can leave it,
// the facts behind `remote_access` (memory not resident on the GPU is mapped for the GPU to use
// over the link instead of being faulted in).
//
//   remote_access_probe [MiB]   (default 1024; at most a quarter of the GPU's free memory)
//
// Each case runs a read kernel (or a write kernel) over the whole buffer three times and prints
// GB/s per pass. A case whose later passes speed up has migrated the data to the GPU on the way.
// Runs natively, not under deepum.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "managed_bench.hpp"

namespace {

using bench::device_location;
using bench::host_location;

__global__ void read_sum(const float4* data, size_t count, float* out) {
  float acc = 0;
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < count;
       i += size_t{gridDim.x} * blockDim.x) {
    const float4 v = data[i];
    acc += v.x + v.y + v.z + v.w;
  }
  if (acc == 12345.0f) *out = acc;  // keeps the loads; practically never taken
}

__global__ void write_fill(float4* data, size_t count, float value) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < count;
       i += size_t{gridDim.x} * blockDim.x) {
    data[i] = make_float4(value, value, value, value);
  }
}

struct Probe {
  char* data;
  size_t bytes;
  int device;
  int sms;
  cudaStream_t stream;
  float* sink;

  // One pass of the read (or write) kernel; GB/s.
  double pass(bool write) {
    cudaEvent_t start, stop;
    CHECK_CUDA(cudaEventCreate(&start));
    CHECK_CUDA(cudaEventCreate(&stop));
    const size_t count = bytes / sizeof(float4);
    CHECK_CUDA(cudaEventRecord(start, stream));
    if (write) {
      write_fill<<<sms * 8, 512, 0, stream>>>(reinterpret_cast<float4*>(data), count, 2.0f);
    } else {
      read_sum<<<sms * 8, 512, 0, stream>>>(reinterpret_cast<const float4*>(data), count, sink);
    }
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaEventRecord(stop, stream));
    CHECK_CUDA(cudaEventSynchronize(stop));
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
    CHECK_CUDA(cudaEventDestroy(start));
    CHECK_CUDA(cudaEventDestroy(stop));
    return static_cast<double>(bytes) / (ms * 1e-3) / 1e9;
  }

  void place(cudaMemLocation where) {
    CHECK_CUDA(cudaMemPrefetchAsync(data, bytes, where, 0, stream));
    CHECK_CUDA(cudaStreamSynchronize(stream));
  }

  void advise_remote(bool on) {
    if (on) {
      CHECK_CUDA(cudaMemAdvise(data, bytes, cudaMemAdviseSetPreferredLocation, host_location()));
      CHECK_CUDA(cudaMemAdvise(data, bytes, cudaMemAdviseSetAccessedBy, device_location(device)));
    } else {
      CHECK_CUDA(cudaMemAdvise(data, bytes, cudaMemAdviseUnsetPreferredLocation, host_location()));
      CHECK_CUDA(cudaMemAdvise(data, bytes, cudaMemAdviseUnsetAccessedBy, device_location(device)));
    }
  }
};

}  // namespace

int main(int argc, char** argv) {
  int device = 0;
  const size_t bytes = bench::requested_bytes(argc, argv, 1024, 4, "remote_access_probe", &device);
  const size_t mib = bytes >> 20;
  cudaDeviceProp prop{};
  CHECK_CUDA(cudaGetDeviceProperties(&prop, device));
  Probe probe{nullptr, bytes, device, prop.multiProcessorCount, nullptr, nullptr};
  CHECK_CUDA(cudaMallocManaged(&probe.data, bytes));
  CHECK_CUDA(cudaMalloc(&probe.sink, sizeof(float)));
  CHECK_CUDA(cudaStreamCreateWithFlags(&probe.stream, cudaStreamNonBlocking));
  std::memset(probe.data, 0, bytes);  // every page populated, on the host

  struct Case {
    std::string name;
    std::vector<double> gbps;
  };
  std::vector<Case> cases;
  auto run = [&](const char* name, bool write) {
    Case c{name, {}};
    for (int i = 0; i < 3; ++i) c.gbps.push_back(probe.pass(write));
    cases.push_back(c);
  };

  probe.place(device_location(device));
  run("read_resident_on_gpu", false);
  probe.place(host_location());
  run("read_on_host_demand_faults", false);  // plain UM: the first pass faults pages in
  probe.place(host_location());
  probe.advise_remote(true);
  run("read_on_host_remote_mapped", false);  // preferred host + accessed by the GPU
  probe.place(host_location());
  run("write_on_host_remote_mapped", true);
  probe.place(device_location(device));  // an explicit prefetch overrides the preferred location
  run("read_prefetched_despite_host_preference", false);
  probe.place(host_location());  // evicted again: reads go remote, nothing migrates back
  run("read_after_eviction_remote_mapped", false);
  probe.advise_remote(false);

  std::printf("device %s, %zu MiB, GB/s per pass\n", prop.name, mib);
  std::printf("{\"device\": \"%s\", \"bytes\": %zu", prop.name, bytes);
  for (const Case& c : cases) {
    std::printf(", \"%s_gbps\": [%.2f, %.2f, %.2f]", c.name.c_str(), c.gbps[0], c.gbps[1], c.gbps[2]);
    std::fprintf(stderr, "%-42s %8.2f %8.2f %8.2f GB/s\n", c.name.c_str(), c.gbps[0], c.gbps[1], c.gbps[2]);
  }
  std::printf("}\n");
  CHECK_CUDA(cudaFree(probe.data));
  CHECK_CUDA(cudaFree(probe.sink));
  return 0;
}
