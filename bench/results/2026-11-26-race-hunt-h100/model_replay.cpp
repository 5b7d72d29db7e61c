// The decisions of mode fast for a recorded GPT-2 124M run (batch 8), replayed through the model
// at a resident limit (default 6036652032 bytes, 2x): per operation, what it names and the moves and waits
// decided. Built against a build folder B of this tree:
//   g++ -std=c++20 -O1 -Isim/include -Icore/include -IB/core -I.deps/include model_replay.cpp \
//       B/sim/libdeepum_sim.a B/core/libdeepum_core.a B/config/libdeepum_config.a -o model_replay
//   xz -dc bench/results/2026-11-26-engine-h200/gpt2-124m-b8.dtrace.xz > gpt2.dtrace
//   model_replay gpt2.dtrace [LIMIT] > model-replay.txt
#include <cstdio>
#include <map>
#include <string>

#include "deepum/core/launch_ordered_residency.hpp"
#include "deepum/core/live_buffers.hpp"
#include "deepum/core/trace_file.hpp"
#include "deepum/sim/workload.hpp"
using namespace deepum;
static std::string rs(const std::vector<core::AddressRange>& v) {
  std::string s;
  char b[64];
  for (auto& r : v) {
    std::snprintf(b, sizeof b, " %llx+%lluK", (unsigned long long)r.address,
                  (unsigned long long)(r.bytes >> 10));
    s += b;
  }
  return s;
}
int main(int argc, char** argv) {
  std::map<std::uint64_t, std::string> names;
  {
    core::TraceReader r;
    r.open(argv[1]);
    while (auto rec = r.next())
      if (auto* f = std::get_if<core::FunctionName>(&*rec)) names[f->function] = f->name;
  }
  sim::WorkloadLoad load = sim::load_workload(argv[1]);
  if (!load.ok()) {
    std::fprintf(stderr, "%s\n", load.error.c_str());
    return 1;
  }
  const sim::Workload& w = load.workload;
  std::uint64_t limit = argc > 2 ? std::stoull(argv[2]) : 6036652032ull;
  std::uint64_t batch = std::min<std::uint64_t>(
      std::min(std::max<std::uint64_t>(1ull << 30, limit / 10), limit / 4), limit / 8);
  core::LaunchOrderedOptions o;
  o.prefetch = true;
  o.discard_dead = true;
  o.place_fresh = true;
  o.swap = true;
  o.swap_bytes = 34ull << 30;
  o.evictions_ahead = 1;
  o.victims_by_next_use = true;
  o.restore_ahead = true;
  core::LaunchOrderedResidency m(limit, batch, o);
  std::size_t ev = 0;
  core::LiveBuffers live;
  std::vector<std::uint64_t> ext(w.operand_extents);
  for (std::uint32_t k = 0; k < w.kernels.size(); ++k) {
    for (; ev < w.host_events.size() && w.host_events[ev].before_kernel <= k; ++ev) {
      const auto& e = w.host_events[ev];
      switch (e.kind) {
        case sim::HostEvent::Kind::range_allocated:
          m.on_range_allocated(e.address, e.bytes);
          std::printf("  range+ %llx+%lluK\n", (unsigned long long)e.address,
                      (unsigned long long)e.bytes >> 10);
          break;
        case sim::HostEvent::Kind::range_freed:
          m.on_range_freed(e.address);
          std::printf("  range- %llx\n", (unsigned long long)e.address);
          break;
        case sim::HostEvent::Kind::buffer_handed_out:
          live.handed_out(e.address, e.bytes);
          m.on_buffer_handed_out(e.address, e.bytes);
          std::printf("  out %llx+%lluK\n", (unsigned long long)e.address, (unsigned long long)e.bytes >> 10);
          break;
        case sim::HostEvent::Kind::buffer_returned:
          live.returned(e.address);
          m.on_buffer_returned(e.address, e.bytes, e.stream);
          std::printf("  ret %llx+%lluK\n", (unsigned long long)e.address, (unsigned long long)e.bytes >> 10);
          break;
      }
    }
    const auto& step = w.operands[k];
    const auto& kernel = w.kernels[k];
    if (!step.known) {
      std::printf("op ? k %u unknown\n", k);
      continue;
    }
    core::LaunchEviction d;
    for (std::uint32_t i = 0; i < step.count; ++i)
      if (ext[step.first + i] == 0)
        ext[step.first + i] = live.bytes_from(w.operand_addresses[step.first + i]);
    std::string what;
    if (kernel.operation == core::GpuOperation::kernel) {
      core::KernelLaunch launch;
      launch.correlation_id = kernel.correlation_id;
      launch.execution_key = kernel.execution_key;
      launch.stream = step.stream;
      launch.unnamed_memory = step.unnamed_memory;
      launch.function = kernel.function;
      const std::size_t kept = std::min<std::size_t>(step.count, core::KernelLaunch::kMaxPointers);
      launch.pointer_count = kept;
      launch.pointers_truncated = step.count > kept || !step.complete;
      for (std::size_t i = 0; i < kept; ++i) {
        launch.pointers[i] = w.operand_addresses[step.first + i];
        launch.extents[i] = ext[step.first + i];
      }
      if (step.count <= kept)
        d = m.before_launch(launch);
      else {
        core::LaunchPointers every{w.operand_addresses.data() + step.first, ext.data() + step.first,
                                   step.count, step.complete};
        d = m.before_launch(launch, true, &every);
      }
      what = names[kernel.function].substr(0, 110);
    } else {
      core::CopyLaunch copy;
      copy.stream = step.stream;
      copy.operation = kernel.operation;
      copy.bytes = step.copy_bytes;
      copy.operand_count = std::min<std::size_t>(step.count, 2);
      for (int i = 0; i < copy.operand_count; ++i) copy.operands[i] = w.operand_addresses[step.first + i];
      d = m.before_copy(copy);
      char b[64];
      std::snprintf(b, sizeof b, "%s %lluB kind %d",
                    kernel.operation == core::GpuOperation::memset ? "MEMSET" : "MEMCPY",
                    (unsigned long long)step.copy_bytes, kernel.copy_kind);
      what = b;
    }
    std::printf("op %llu k %u %s\n  names%s\n", (unsigned long long)m.launches_decided(), k, what.c_str(),
                rs(m.last_named()).c_str());
    const std::pair<const char*, const std::vector<core::AddressRange>*> mv[] = {
        {"evict", &d.evict},     {"swap_out", &d.swap_out},
        {"discard", &d.discard}, {"place", &d.place},
        {"restore", &d.restore}, {"fetch", &d.fetch},
        {"unswap", &d.unswap},   {"restore_ahead", &d.restore_ahead}};
    for (auto& [n, r] : mv)
      if (!r->empty()) std::printf("  %s%s\n", n, rs(*r).c_str());
    if (d.eviction_number || d.placement_number || d.wait_for_eviction || d.after_placement || d.after_drop ||
        d.ahead_placement_number)
      std::printf(
          "  nums ev %llu pl %llu ahead %llu; wfe %llu eal %llu ap %llu ad %llu aae %llu eap %llu dae %llu "
          "fwe %llu pae %llu wfev %d\n",
          (unsigned long long)d.eviction_number, (unsigned long long)d.placement_number,
          (unsigned long long)d.ahead_placement_number, (unsigned long long)d.wait_for_eviction,
          (unsigned long long)d.evict_after_launch, (unsigned long long)d.after_placement,
          (unsigned long long)d.after_drop, (unsigned long long)d.ahead_after_eviction,
          (unsigned long long)d.evict_after_placement, (unsigned long long)d.discard_after_eviction,
          (unsigned long long)d.fetch_waits_for_eviction, (unsigned long long)d.place_after_eviction,
          d.wait_for_evict);
  }
  auto& s = m.stats();
  std::fprintf(stderr,
               "ops %llu evictions %llu waited %llu swapped %llu restored %llu placed %llu discarded %llu "
               "fetched %llu ahead %llu loop %llu shape %llu unswaps %llu\n",
               (unsigned long long)s.launches, (unsigned long long)s.evictions,
               (unsigned long long)s.waited_evictions, (unsigned long long)s.swapped_out_bytes >> 20,
               (unsigned long long)s.restored_bytes >> 20, (unsigned long long)s.placed_bytes >> 20,
               (unsigned long long)s.discarded_bytes >> 20, (unsigned long long)s.fetched_bytes >> 20,
               (unsigned long long)s.restored_ahead_bytes >> 20, (unsigned long long)s.loop_period,
               (unsigned long long)s.shape_loop_period, (unsigned long long)s.unswaps);
}
