// MachineModel: the GPU and link the simulator replays a workload on. Every figure is one the
// simulator charges for: the GPU's memory, the link's bandwidth for each kind of transfer, the host
// time of a hint call and the cost of a fault. h200() holds the figures measured on the H200
// machine (docs/simulator.md names the measurement behind each); a JSON file overrides any of them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace deepum::sim {

struct MachineModel {
  // GPU memory the managed data may occupy, in bytes (whole 2 MB blocks are used).
  std::uint64_t capacity_bytes = 0;
  // Explicit prefetch of large ranges (cudaMemPrefetchAsync), after the call's host time.
  double prefetch_h2d_gb_per_s = 0;
  double prefetch_d2h_gb_per_s = 0;
  // Host time of one prefetch call (one contiguous range), to the GPU and to the host.
  double prefetch_h2d_call_us = 0;
  double prefetch_d2h_call_us = 0;
  // Fault-driven migration to the GPU, end to end (fault handling included).
  double fault_h2d_gb_per_s = 0;
  // The driver's own eviction when a fault finds the GPU full (on the faulting kernel's path).
  double evict_d2h_gb_per_s = 0;
  // A fault that moves no data: first touch of memory that holds nothing yet.
  double fault_us = 0;
  // Discard (cudaMemDiscardBatchAsync): host time per call, and the rate it drops memory at.
  double discard_call_us = 0;
  double discard_gb_per_s = 0;
  // Launch-ordered residency (OrderedPolicy), whose moves are issued on the program's thread:
  // the thread's own time per operation it launches (the program and deepum's launch callback)
  // where the trace has no host time for it (a trace records the gaps between launches),
  double launch_us = 0;
  // copies between a managed block on the GPU and deepum's pinned host store (swapping), and the
  // host time of one such call (one 2 MB block each),
  double copy_h2d_gb_per_s = 0;
  double copy_d2h_gb_per_s = 0;
  double copy_call_us = 0;
  // a placement (cuMemDiscardAndPrefetchBatchAsync to the GPU: made resident, nothing copied):
  // each call's own time and its rate (on an idle stream it holds the calling thread throughout),
  double place_call_us = 0;
  double place_gb_per_s = 0;
  // and whether the thread is held until the copies out of a swap are done (the discard after
  // them returns only then) rather than returning once they are enqueued.
  bool swap_holds_thread = false;
  // Whether what needs a swap's room (a launch waiting for the eviction, a placement or fetch
  // into its room) waits on the program's thread until the eviction thread has issued the swap:
  // it drops the victims only once their copies out have ended, so that is after them.
  bool swap_room_waits_for_copies = false;
  // Whether a placement or a drop holds the calling thread until it has run, behind what its
  // stream holds (false: only on an idle stream, where it runs at once; queued behind earlier
  // work it returns at once).
  bool place_holds_thread = false;
  // Whether moves to the GPU and to the host run at the same time (false: they take turns): the
  // driver's migrations and copies between managed and pinned memory take turns; deepum's swap
  // copies, staged through device memory, run both ways at once (copies_overlap).
  bool migrations_overlap = true;
  bool copies_overlap = true;

  // An H200 on PCIe Gen5 x16, driver 580, CUDA 13.0: the figures and their sources are in
  // docs/simulator.md, "Machine model keys".
  static MachineModel h200();

  bool operator==(const MachineModel&) const = default;
};

// Nanoseconds to move `bytes` at `gb_per_s` (1 GB/s = 1 byte/ns), rounded up.
std::uint64_t transfer_ns(std::uint64_t bytes, double gb_per_s);
// Microseconds as whole nanoseconds, rounded to nearest.
std::uint64_t us_to_ns(double us);

struct MachineLoad {
  std::optional<MachineModel> model;  // set on success
  std::string error;                  // "FILE: key 'x': ..." on failure
};

// h200() with the keys of a JSON object applied. Unknown keys, wrong types, negative or zero
// figures and malformed JSON are errors naming the file (`name`) and the key.
MachineLoad parse_machine_model(std::string_view json_text, std::string_view name);
MachineLoad load_machine_model(const std::string& path);

// The model as a JSON object, one key per line, keys in declaration order.
std::string machine_model_json(const MachineModel& model);

}  // namespace deepum::sim
