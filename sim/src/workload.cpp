#include "deepum/sim/workload.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <variant>

#include "deepum/core/fault_attribution.hpp"
#include "deepum/core/live_buffers.hpp"

namespace deepum::sim {

using core::BlockId;
using core::Timestamp;

std::uint64_t Workload::compute_ns() const {
  std::uint64_t total = 0;
  for (const KernelStep& kernel : kernels) total += kernel.compute_ns;
  return total;
}

std::uint32_t Workload::max_blocks_per_kernel() const {
  std::uint32_t most = 0;
  for (std::size_t s = 0; s + 1 < touch_set_offsets.size(); ++s) {
    most = std::max(most, touch_set_offsets[s + 1] - touch_set_offsets[s]);
  }
  return most;
}

void WorkloadBuilder::add(const core::KernelLaunch& launch) {
  ++stats_.launches;
  LaunchInfo info;
  info.execution_key = launch.execution_key;
  info.function = launch.function;
  info.grid = launch.grid;
  info.block = launch.block;
  info.first_pointer = static_cast<std::uint32_t>(pointer_addresses_.size());
  const std::size_t count = std::min<std::size_t>(launch.pointer_count, core::KernelLaunch::kMaxPointers);
  for (std::size_t i = 0; i < count; ++i) pointer_addresses_.push_back(launch.pointers[i]);
  info.pointer_count = static_cast<std::uint16_t>(count);
  info.stream = launch.stream;
  info.host_time = launch.host_time;
  launches_.emplace_back(launch.correlation_id, info);
}

void WorkloadBuilder::add(const core::LaunchOperands& operands) { launch_operands_.push_back(operands); }
void WorkloadBuilder::add(const core::CopyLaunch& copy) {
  copies_.push_back(copy);
  copies_.back().operand_count =
      static_cast<std::uint16_t>(std::min<std::size_t>(copy.operand_count, core::CopyLaunch::kMaxOperands));
}
void WorkloadBuilder::add(const core::BufferEvent& buffer) { buffers_.push_back(buffer); }
void WorkloadBuilder::add(const core::FunctionName& name) { function_names_[name.function] = name.name; }

void WorkloadBuilder::add(const core::KernelExecution& execution) {
  ++stats_.executions;
  executions_.push_back(execution);
}

void WorkloadBuilder::add(const core::PageFault& fault) {
  ++stats_.faults;
  if (fault.access == core::FaultAccess::prefetch) {
    ++stats_.faults_from_prefetch;  // raised by a prefetch, outside any kernel (FaultAttributor agrees)
    return;
  }
  faults_.push_back(FaultInfo{fault.start, core::block_of(fault.address)});
}

void WorkloadBuilder::add(const core::RangeEvent& range) { ranges_.push_back(range); }

void WorkloadBuilder::add(const core::TraceRecord& record) {
  std::visit(
      [this](const auto& event) {
        using T = std::decay_t<decltype(event)>;
        if constexpr (std::is_same_v<T, core::KernelLaunch> || std::is_same_v<T, core::KernelExecution> ||
                      std::is_same_v<T, core::PageFault> || std::is_same_v<T, core::RangeEvent> ||
                      std::is_same_v<T, core::LaunchOperands> || std::is_same_v<T, core::CopyLaunch> ||
                      std::is_same_v<T, core::BufferEvent> || std::is_same_v<T, core::FunctionName>) {
          add(event);
        }
      },
      record);
}

namespace {

constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

// The execution a fault at `time` belongs to, by core::FaultAttributor's rule: an execution whose
// interval widened by the slack holds the time; among several, the one that started last. Asked
// for times in ascending order, it passes over the executions (sorted by start) once, however long
// any of them claims to run.
class CoveringExecution {
 public:
  explicit CoveringExecution(const std::vector<core::KernelExecution>& executions)
      : executions_(executions) {}

  std::uint32_t at(Timestamp time) {
    constexpr Timestamp slack = core::FaultAttributor::kSlackNs;
    // Candidates: executions started by time + slack, ends decreasing upwards. One ending no later
    // than a later-started one never wins: whenever it covers a time, so does the later one.
    while (next_ < executions_.size() && executions_[next_].start <= time + slack) {
      while (!candidates_.empty() && end_of(candidates_.back()) <= executions_[next_].end)
        candidates_.pop_back();
      candidates_.push_back(next_++);
    }
    // Ended before this time (less the slack), so before every later one too.
    while (!candidates_.empty() && end_of(candidates_.back()) + slack < time) candidates_.pop_back();
    return candidates_.empty() ? kNone : static_cast<std::uint32_t>(candidates_.back());
  }

 private:
  Timestamp end_of(std::size_t e) const { return executions_[e].end; }

  const std::vector<core::KernelExecution>& executions_;
  std::size_t next_ = 0;
  std::vector<std::size_t> candidates_;
};

struct ManagedPeak {
  std::uint64_t bytes = 0;
  Timestamp time = 0;
};

// The most bytes of managed ranges live at once, ranges in time order (an address allocated again
// replaces its range), and when it was reached; once past `cap`, the first sum past it (saturated).
ManagedPeak managed_peak(const std::vector<core::RangeEvent>& ranges, std::uint64_t cap) {
  std::map<std::uint64_t, std::uint64_t> live;  // address -> bytes
  std::uint64_t live_bytes = 0;                 // at most cap: no sum below overflows
  ManagedPeak peak;
  for (const core::RangeEvent& range : ranges) {
    if (range.kind == core::RangeEvent::Kind::allocated) {
      auto [it, inserted] = live.try_emplace(range.address, range.bytes);
      if (!inserted) {
        live_bytes -= it->second;
        it->second = range.bytes;
      }
      if (range.bytes > cap - live_bytes) {
        return {range.bytes > UINT64_MAX - live_bytes ? UINT64_MAX : live_bytes + range.bytes, range.time};
      }
      live_bytes += range.bytes;
      if (live_bytes > peak.bytes) peak = {live_bytes, range.time};
    } else if (auto it = live.find(range.address); it != live.end()) {
      live_bytes -= it->second;
      live.erase(it);
    }
  }
  return peak;
}

// For each distinct pointer address (ascending), the end of the memory the tensor behind it can
// span: the next distinct address in the same managed range, or the range's end. Ranges ever
// allocated are merged where they overlap (a freed range's address may be reused at another size).
// A pointer outside every range spans its own byte only (its own block).
std::vector<std::uint64_t> pointer_extent_ends(const std::vector<std::uint64_t>& addresses,
                                               const std::vector<core::RangeEvent>& ranges) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> spans;  // [begin, end), merged
  for (const core::RangeEvent& range : ranges) {
    if (range.kind == core::RangeEvent::Kind::allocated && range.bytes != 0)
      spans.emplace_back(range.address, range.address + range.bytes);
  }
  std::sort(spans.begin(), spans.end());
  std::vector<std::pair<std::uint64_t, std::uint64_t>> merged;
  for (const auto& span : spans) {
    if (!merged.empty() && span.first < merged.back().second) {
      merged.back().second = std::max(merged.back().second, span.second);
    } else {
      merged.push_back(span);
    }
  }
  std::vector<std::uint64_t> ends(addresses.size());
  for (std::size_t i = 0; i < addresses.size(); ++i) {
    const std::uint64_t p = addresses[i];
    auto it = std::upper_bound(merged.begin(), merged.end(), p,
                               [](std::uint64_t a, const auto& span) { return a < span.first; });
    if (it == merged.begin() || std::prev(it)->second <= p) {
      ends[i] = p + 1;
      continue;
    }
    const std::uint64_t range_end = std::prev(it)->second;
    ends[i] = i + 1 < addresses.size() ? std::min(addresses[i + 1], range_end) : range_end;
  }
  return ends;
}

// Buffers the program's allocator handed out (trace format 1.4), to tell a stale pointer from a
// tensor of unknown size: a pointer into memory the allocator handed out before the launch, which
// the recording found in no live buffer (extent 0), is a word that only looks like a pointer (a
// stale slot of a foreach kernel's tensor list), and the kernel touches nothing behind it.
class HandedOut {
 public:
  explicit HandedOut(const std::vector<core::BufferEvent>& events) {
    for (const core::BufferEvent& e : events) {
      if (e.kind == core::BufferEvent::Kind::handed_out && e.bytes != 0)
        buffers_.push_back({e.address, e.address + e.bytes, e.time});
    }
    std::sort(buffers_.begin(), buffers_.end(),
              [](const Buffer& a, const Buffer& b) { return a.begin < b.begin; });
    reach_.resize(buffers_.size());
    std::uint64_t reach = 0;
    for (std::size_t i = 0; i < buffers_.size(); ++i) reach_[i] = reach = std::max(reach, buffers_[i].end);
  }
  // Whether a buffer holding `pointer` was handed out before `time`.
  bool before(std::uint64_t pointer, core::Timestamp time) const {
    auto i = static_cast<std::size_t>(
        std::upper_bound(buffers_.begin(), buffers_.end(), pointer,
                         [](std::uint64_t p, const Buffer& b) { return p < b.begin; }) -
        buffers_.begin());
    // Walk down while an earlier buffer can still reach the pointer, a bounded number of them (a
    // trace is input deepum does not control): past that, the pointer is taken as a tensor.
    for (std::size_t walked = 0; i > 0 && reach_[i - 1] > pointer && walked < kMaxWalk; ++walked) {
      const Buffer& b = buffers_[--i];
      if (pointer < b.end && b.time < time) return true;
    }
    return false;
  }

 private:
  struct Buffer {
    std::uint64_t begin = 0, end = 0;
    core::Timestamp time = 0;
  };
  static constexpr std::size_t kMaxWalk = 256;
  std::vector<Buffer> buffers_;       // by address
  std::vector<std::uint64_t> reach_;  // the furthest end among buffers_[0..i]
};

}  // namespace

void WorkloadBuilder::fill_extents() {
  // The library follows the allocator for tensor sizes only while its engine runs: a trace
  // recorded without a resident limit has its buffer events but no extents.
  if (buffers_.empty()) return;
  std::unordered_map<std::uint64_t, core::Timestamp> launched;  // correlation id -> host time
  for (const auto& [id, info] : launches_) launched.emplace(id, info.host_time);
  struct HostStep {
    core::Timestamp time = 0;
    bool buffer = false;  // else a launch's operands
    std::size_t index = 0;
  };
  std::vector<HostStep> steps;
  for (std::size_t i = 0; i < buffers_.size(); ++i) steps.push_back({buffers_[i].time, true, i});
  for (std::size_t i = 0; i < launch_operands_.size(); ++i) {
    auto it = launched.find(launch_operands_[i].correlation_id);
    if (it != launched.end()) steps.push_back({it->second, false, i});
  }
  // A buffer handed out at a launch's time came first (the allocator ran before the launch).
  std::stable_sort(steps.begin(), steps.end(), [](const HostStep& a, const HostStep& b) {
    return a.time != b.time ? a.time < b.time : a.buffer && !b.buffer;
  });
  core::LiveBuffers live;
  for (const HostStep& step : steps) {
    if (step.buffer) {
      const core::BufferEvent& e = buffers_[step.index];
      if (e.kind == core::BufferEvent::Kind::handed_out) {
        live.handed_out(e.address, e.bytes);
      } else {
        live.returned(e.address);
      }
      continue;
    }
    core::LaunchOperands& operands = launch_operands_[step.index];
    operands.extents.resize(operands.pointers.size(), 0);
    for (std::size_t p = 0; p < operands.pointers.size(); ++p) {
      if (operands.extents[p] == 0) operands.extents[p] = live.bytes_from(operands.pointers[p]);
    }
  }
}

Workload WorkloadBuilder::finish() {
  Workload w;
  error_.clear();

  // Ranges in time order: their peak first, since the replay holds an entry per block of it.
  std::stable_sort(ranges_.begin(), ranges_.end(),
                   [](const auto& a, const auto& b) { return a.time < b.time; });
  const ManagedPeak peak = managed_peak(ranges_, options_.max_managed_bytes);
  if (peak.bytes > options_.max_managed_bytes) {
    error_ = "its managed ranges hold " + std::to_string(peak.bytes) + " bytes at once (at time " +
             std::to_string(peak.time) + "), more than the " + std::to_string(options_.max_managed_bytes) +
             " a replay holds";
    return w;
  }
  stats_.managed_peak_bytes = peak.bytes;

  std::stable_sort(executions_.begin(), executions_.end(), [](const auto& a, const auto& b) {
    return a.start != b.start ? a.start < b.start : a.correlation_id < b.correlation_id;
  });
  std::stable_sort(launches_.begin(), launches_.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  fill_extents();
  const auto find_launch = [this](const core::KernelExecution& e) -> const LaunchInfo* {
    if (e.operation != core::GpuOperation::kernel) return nullptr;  // a copy's id is an API call's
    auto it = std::lower_bound(launches_.begin(), launches_.end(), e.correlation_id,
                               [](const auto& entry, std::uint64_t id) { return entry.first < id; });
    return it != launches_.end() && it->first == e.correlation_id ? &it->second : nullptr;
  };

  // Faults to executions, in time order.
  std::stable_sort(faults_.begin(), faults_.end(),
                   [](const auto& a, const auto& b) { return a.time < b.time; });
  std::vector<std::pair<std::uint32_t, BlockId>> raw;  // execution, block
  raw.reserve(faults_.size() + pointer_addresses_.size());
  CoveringExecution covering(executions_);
  for (const FaultInfo& fault : faults_) {
    const std::uint32_t e = covering.at(fault.time);
    if (e == kNone) {
      ++stats_.faults_unattributed;
      continue;
    }
    ++stats_.faults_attributed;
    raw.emplace_back(e, fault.block);
  }
  std::vector<const LaunchInfo*> launch_of(executions_.size(), nullptr);
  std::uint64_t matched = 0;
  for (std::size_t e = 0; e < executions_.size(); ++e) {
    launch_of[e] = find_launch(executions_[e]);
    if (launch_of[e] == nullptr) continue;
    ++matched;
    for (std::uint32_t p = 0; p < launch_of[e]->pointer_count; ++p) {
      raw.emplace_back(static_cast<std::uint32_t>(e),
                       core::block_of(pointer_addresses_[launch_of[e]->first_pointer + p]));
    }
  }
  stats_.launches_without_execution = stats_.launches - std::min(stats_.launches, matched);
  // The blocks the host named for each operation, where the trace has them: every pointer's tensor
  // (or its own block where no size was known), every copy operand's span.
  std::sort(launch_operands_.begin(), launch_operands_.end(),
            [](const auto& a, const auto& b) { return a.correlation_id < b.correlation_id; });
  std::sort(copies_.begin(), copies_.end(),
            [](const auto& a, const auto& b) { return a.correlation_id < b.correlation_id; });
  // Checked before each is added: the spans come from the trace, and raw holds an entry per block.
  const auto add_blocks = [&](std::size_t e, BlockId first, BlockId last) {
    if (last < first) return true;
    if (last - first >= options_.max_named_blocks - std::min(raw.size(), options_.max_named_blocks)) {
      error_ = "its operations name more than " + std::to_string(options_.max_named_blocks) +
               " (operation, 2 MB block) pairs, the most a replay holds; the last one counted, operation " +
               std::to_string(e) + " (correlation id " + std::to_string(executions_[e].correlation_id) +
               "), names " + std::to_string(last - first + 1) + " blocks";
      return false;
    }
    for (BlockId b = first; b <= last; ++b) raw.emplace_back(static_cast<std::uint32_t>(e), b);
    return true;
  };
  const auto named_span = [&](std::size_t e, std::uint64_t address, std::uint64_t bytes) {
    const std::uint64_t reach = std::max<std::uint64_t>(bytes, 1) - 1;
    const std::uint64_t last_byte = reach > UINT64_MAX - address ? UINT64_MAX : address + reach;
    return add_blocks(e, core::block_of(address), core::block_of(last_byte));
  };
  for (std::size_t e = 0; e < executions_.size(); ++e) {
    if (const core::LaunchOperands* operands = operands_of(executions_[e])) {
      for (std::size_t p = 0; p < operands->pointers.size(); ++p) {
        const std::uint64_t extent = p < operands->extents.size() ? operands->extents[p] : 0;
        if (!named_span(e, operands->pointers[p], extent)) return Workload{};
      }
    } else if (const core::CopyLaunch* copy = copy_of(executions_[e])) {
      for (std::uint16_t o = 0; o < copy->operand_count; ++o) {
        if (!named_span(e, copy->operands[o], copy->bytes)) return Workload{};
      }
    }
  }
  // The blocks a fault or a pointer names itself; extents add the rest of each pointer's tensor.
  std::vector<BlockId> named;
  named.reserve(raw.size());
  for (const auto& entry : raw) named.push_back(entry.second);
  std::sort(named.begin(), named.end());
  named.erase(std::unique(named.begin(), named.end()), named.end());
  if (options_.pointer_extents) {
    std::vector<std::uint64_t> addresses = pointer_addresses_;
    std::sort(addresses.begin(), addresses.end());
    addresses.erase(std::unique(addresses.begin(), addresses.end()), addresses.end());
    const std::vector<std::uint64_t> ends = pointer_extent_ends(addresses, ranges_);
    // One execution per key is enough when the key's executions share their blocks (the key
    // covers the pointers).
    std::unordered_set<std::uint64_t> keys_done;
    const HandedOut handed_out(buffers_);
    for (std::size_t e = 0; e < executions_.size(); ++e) {
      if (launch_of[e] == nullptr) continue;
      const std::uint64_t key = launch_of[e]->execution_key;
      if (options_.union_by_execution_key && key != 0 && !keys_done.insert(key).second) continue;
      const core::LaunchOperands* operands = operands_of(executions_[e]);
      for (std::uint32_t p = 0; p < launch_of[e]->pointer_count; ++p) {
        const std::uint64_t address = pointer_addresses_[launch_of[e]->first_pointer + p];
        // A known size was counted above; a pointer into memory the allocator handed out before,
        // which no live buffer holds, is a stale word (see HandedOut).
        if (operands != nullptr && p < operands->extents.size() && operands->pointers[p] == address &&
            (operands->extents[p] != 0 || handed_out.before(address, launch_of[e]->host_time)))
          continue;
        const std::size_t i = static_cast<std::size_t>(
            std::lower_bound(addresses.begin(), addresses.end(), address) - addresses.begin());
        if (!add_blocks(e, core::block_of(address) + 1, core::block_of(ends[i] - 1))) return Workload{};
      }
    }
  }

  // Dense block indices in address order.
  w.block_ids.reserve(raw.size());
  for (const auto& entry : raw) w.block_ids.push_back(entry.second);
  std::sort(w.block_ids.begin(), w.block_ids.end());
  w.block_ids.erase(std::unique(w.block_ids.begin(), w.block_ids.end()), w.block_ids.end());
  w.block_ids.shrink_to_fit();
  stats_.extent_blocks = w.block_ids.size() - named.size();
  const auto dense = [&w](BlockId block) {
    return static_cast<BlockIndex>(std::lower_bound(w.block_ids.begin(), w.block_ids.end(), block) -
                                   w.block_ids.begin());
  };

  // Touch sets: one per execution key (or per execution), set 0 the empty one.
  std::vector<std::uint32_t> set_of(executions_.size(), 0);
  std::unordered_map<std::uint64_t, std::uint32_t> set_of_key;
  std::uint32_t sets = 1;
  for (std::size_t e = 0; e < executions_.size(); ++e) {
    const std::uint64_t key = launch_of[e] != nullptr ? launch_of[e]->execution_key : 0;
    if (options_.union_by_execution_key && key != 0) {
      auto [it, inserted] = set_of_key.try_emplace(key, sets);
      if (inserted) ++sets;
      set_of[e] = it->second;
    } else {
      set_of[e] = sets++;
    }
  }
  std::vector<std::pair<std::uint32_t, BlockIndex>> members;
  members.reserve(raw.size());
  for (const auto& [e, block] : raw) members.emplace_back(set_of[e], dense(block));
  std::vector<std::pair<std::uint32_t, BlockId>>().swap(raw);
  std::sort(members.begin(), members.end());
  members.erase(std::unique(members.begin(), members.end()), members.end());
  // Renumber the sets in use densely (sets without touches become the empty set 0).
  std::vector<std::uint32_t> renumber(sets, 0);
  w.touch_set_offsets.push_back(0);
  w.touch_set_offsets.push_back(0);  // set 0: empty
  w.touches.reserve(members.size());
  for (std::size_t i = 0; i < members.size(); ++i) {
    if (i == 0 || members[i].first != members[i - 1].first) {
      renumber[members[i].first] = static_cast<std::uint32_t>(w.touch_set_offsets.size() - 1);
      w.touch_set_offsets.push_back(w.touch_set_offsets.back());
    }
    w.touches.push_back(members[i].second);
    ++w.touch_set_offsets.back();
  }

  // Compute times.
  std::unordered_map<std::uint64_t, std::uint64_t> min_of_key;
  const auto duration = [](const core::KernelExecution& e) { return e.end > e.start ? e.end - e.start : 0; };
  if (options_.min_compute_by_execution_key) {
    for (std::size_t e = 0; e < executions_.size(); ++e) {
      if (launch_of[e] == nullptr || launch_of[e]->execution_key == 0) continue;
      auto [it, inserted] = min_of_key.try_emplace(launch_of[e]->execution_key, duration(executions_[e]));
      if (!inserted) it->second = std::min(it->second, duration(executions_[e]));
    }
  }
  w.kernels.reserve(executions_.size());
  // In launch order (the calls' correlation ids), as the library's model decides them: kernels of
  // two streams may run in either order from step to step, which breaks the loop it learns. A
  // graph's kernels, of one launch, stay in the order they ran.
  std::vector<std::size_t> launch_order(executions_.size());
  for (std::size_t e = 0; e < executions_.size(); ++e) launch_order[e] = e;
  std::stable_sort(launch_order.begin(), launch_order.end(), [this](std::size_t a, std::size_t b) {
    return executions_[a].correlation_id < executions_[b].correlation_id;
  });
  for (std::size_t e : launch_order) {
    KernelStep step;
    const core::KernelExecution& execution = executions_[e];
    step.correlation_id = execution.correlation_id;
    step.execution_key = launch_of[e] != nullptr ? launch_of[e]->execution_key : 0;
    if (launch_of[e] != nullptr) {
      step.function = launch_of[e]->function;
      step.grid = launch_of[e]->grid;
      step.block = launch_of[e]->block;
    }
    step.operation = execution.operation;
    step.copy_kind = execution.copy_kind;
    step.start = execution.start;
    auto min = min_of_key.find(step.execution_key);
    step.compute_ns = step.execution_key != 0 && min != min_of_key.end() ? min->second : duration(execution);
    step.touch_set = renumber[set_of[e]];
    w.kernels.push_back(step);
    if (w.pointer_offsets.empty()) w.pointer_offsets.push_back(0);
    if (launch_of[e] != nullptr) {
      for (std::uint32_t p = 0; p < launch_of[e]->pointer_count; ++p)
        w.pointers.push_back(dense(core::block_of(pointer_addresses_[launch_of[e]->first_pointer + p])));
    }
    w.pointer_offsets.push_back(static_cast<std::uint32_t>(w.pointers.size()));
  }

  // Ranges (in time order, sorted above): the blocks a free drops, before the first operation that
  // ran after it: the first whose latest start so far, in launch order, is not before it.
  std::vector<Timestamp> started_by(w.kernels.size());
  for (std::size_t k = 0; k < w.kernels.size(); ++k)
    started_by[k] = std::max(w.kernels[k].start, k == 0 ? Timestamp{0} : started_by[k - 1]);
  std::map<std::uint64_t, std::uint64_t> live;  // address -> bytes
  for (const core::RangeEvent& range : ranges_) {
    if (range.kind == core::RangeEvent::Kind::allocated) {
      live.insert_or_assign(range.address, range.bytes);
      continue;
    }
    std::uint64_t bytes = range.bytes;
    if (auto it = live.find(range.address); it != live.end()) {
      bytes = bytes == 0 ? it->second : bytes;
      live.erase(it);
    }
    // Only blocks wholly inside the range: a block shared with another range keeps its data.
    const BlockId first = (range.address + core::kBlockBytes - 1) >> core::kBlockShift;
    const BlockId end = (range.address + bytes) >> core::kBlockShift;
    if (end <= first) continue;
    const BlockIndex first_index = dense(first);
    const BlockIndex end_index = dense(end);
    if (end_index <= first_index) continue;
    auto next = std::lower_bound(started_by.begin(), started_by.end(), range.time);
    if (next == started_by.end()) continue;
    w.releases.push_back(BlockRelease{static_cast<std::uint32_t>(next - started_by.begin()), first_index,
                                      end_index - first_index});
  }
  std::stable_sort(w.releases.begin(), w.releases.end(),
                   [](const auto& a, const auto& b) { return a.before_kernel < b.before_kernel; });

  place_host_side(w);
  w.iterations = detect_iterations(w.kernels);
  w.stats = stats_;
  w.function_names = function_names_;
  return w;
}

namespace {
// The record of `records` (sorted by correlation id) with this correlation id, or none.
template <typename Record>
const Record* with_correlation(const std::vector<Record>& records, std::uint64_t id) {
  auto it = std::lower_bound(records.begin(), records.end(), id,
                             [](const Record& r, std::uint64_t wanted) { return r.correlation_id < wanted; });
  return it != records.end() && it->correlation_id == id ? &*it : nullptr;
}
}  // namespace

const core::LaunchOperands* WorkloadBuilder::operands_of(const core::KernelExecution& e) const {
  return e.operation == core::GpuOperation::kernel ? with_correlation(launch_operands_, e.correlation_id)
                                                   : nullptr;
}

const core::CopyLaunch* WorkloadBuilder::copy_of(const core::KernelExecution& e) const {
  return e.operation != core::GpuOperation::kernel ? with_correlation(copies_, e.correlation_id) : nullptr;
}

void WorkloadBuilder::place_host_side(Workload& w) {
  if (launch_operands_.empty() && copies_.empty() && buffers_.empty()) return;
  // Each operation's host time (its launch's or copy's, else the one before it), never going back:
  // a host event belongs before the first operation the host issued after it.
  std::vector<Timestamp> issued(w.kernels.size(), 0);
  Timestamp latest = 0;
  w.operands.resize(w.kernels.size());
  for (std::size_t k = 0; k < w.kernels.size(); ++k) {
    const KernelStep& step = w.kernels[k];
    core::KernelExecution key;
    key.correlation_id = step.correlation_id;
    key.operation = step.operation;
    StepOperands& out = w.operands[k];
    if (step.operation == core::GpuOperation::kernel) {
      auto launch = std::lower_bound(launches_.begin(), launches_.end(), step.correlation_id,
                                     [](const auto& entry, std::uint64_t id) { return entry.first < id; });
      if (launch != launches_.end() && launch->first == step.correlation_id) {
        latest = std::max(latest, launch->second.host_time);
        out.stream = launch->second.stream;
      }
      if (const core::LaunchOperands* operands = operands_of(key)) {
        out.known = true;
        out.complete = operands->complete;
        out.unnamed_memory = operands->unnamed_memory;
        out.first = static_cast<std::uint32_t>(w.operand_addresses.size());
        out.count = static_cast<std::uint32_t>(operands->pointers.size());
        w.operand_addresses.insert(w.operand_addresses.end(), operands->pointers.begin(),
                                   operands->pointers.end());
        w.operand_extents.insert(w.operand_extents.end(), operands->extents.begin(), operands->extents.end());
      }
    } else if (const core::CopyLaunch* copy = copy_of(key)) {
      latest = std::max(latest, copy->host_time);
      out.known = true;
      out.unnamed_memory = copy->unnamed_memory;
      out.stream = copy->stream;
      out.copy_bytes = copy->bytes;
      out.first = static_cast<std::uint32_t>(w.operand_addresses.size());
      out.count = copy->operand_count;
      for (std::uint16_t o = 0; o < copy->operand_count; ++o) {
        w.operand_addresses.push_back(copy->operands[o]);
        w.operand_extents.push_back(copy->bytes);
      }
    }
    if (out.known) ++stats_.steps_with_operands;
    issued[k] = latest;
    if (k > 0 && issued[k - 1] != 0 && !step.copies_to_host())
      w.kernels[k].host_gap_ns = issued[k] - issued[k - 1];
  }
  const auto before = [&issued](Timestamp time) {
    return static_cast<std::uint32_t>(std::upper_bound(issued.begin(), issued.end(), time) - issued.begin());
  };
  std::vector<std::pair<Timestamp, HostEvent>> events;  // host time, event
  for (const core::RangeEvent& range : ranges_) {
    const bool allocated = range.kind == core::RangeEvent::Kind::allocated;
    events.push_back(
        {range.time,
         {before(range.time), allocated ? HostEvent::Kind::range_allocated : HostEvent::Kind::range_freed,
          range.address, range.bytes, 0}});
  }
  for (const core::BufferEvent& buffer : buffers_) {
    const bool handed_out = buffer.kind == core::BufferEvent::Kind::handed_out;
    events.push_back({buffer.time,
                      {before(buffer.time),
                       handed_out ? HostEvent::Kind::buffer_handed_out : HostEvent::Kind::buffer_returned,
                       buffer.address, buffer.bytes, buffer.stream}});
  }
  // In host time order (a range before the buffers in it where times tie: it was pushed first).
  std::stable_sort(events.begin(), events.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  w.host_events.reserve(events.size());
  for (const auto& entry : events) w.host_events.push_back(entry.second);
}

std::uint32_t detect_iterations(std::span<const KernelStep> kernels) {
  const std::size_t n = kernels.size();
  if (n < 2) return 1;
  const auto same = [&](std::size_t a, std::size_t b) {
    return kernels[a].execution_key == kernels[b].execution_key &&
           kernels[a].operation == kernels[b].operation;
  };
  constexpr int kMaxCandidates = 4096;
  int tried = 0;
  for (std::size_t p = 1; p <= n / 2 && tried < kMaxCandidates; ++p) {
    if (!same(0, p)) continue;
    ++tried;
    bool periodic = true;
    for (std::size_t i = 0; i + p < n && periodic; ++i) periodic = same(i, i + p);
    if (periodic) return static_cast<std::uint32_t>(n / p);
  }
  return 1;
}

std::vector<std::uint32_t> iteration_starts(const Workload& workload, std::uint32_t iterations) {
  const auto& kernels = workload.kernels;
  const std::size_t n = kernels.size();
  if (iterations == 0 || n < iterations) return {};
  std::vector<std::uint32_t> starts{0};
  if (iterations == 1) return starts;
  if (workload.iterations == iterations) {
    const std::size_t period = n / iterations;
    for (std::uint32_t i = 1; i < iterations; ++i) starts.push_back(static_cast<std::uint32_t>(i * period));
    return starts;
  }
  // Per function: how often it runs, where it first ran, where it last ran and the shortest gap
  // between two of its runs. A once-per-iteration function runs about an iteration apart; one of
  // the set-up that happens to run as often does not, so the widest shortest gap wins.
  struct Runs {
    std::uint32_t count = 0;
    std::size_t first = 0, last = 0, shortest_gap = 0;
  };
  std::unordered_map<std::uint64_t, Runs> runs;
  for (std::size_t k = 0; k < n; ++k) {
    if (kernels[k].function == 0) continue;
    auto [it, inserted] = runs.try_emplace(kernels[k].function);
    Runs& r = it->second;
    if (inserted) {
      r.first = k;
      r.shortest_gap = n;
    } else {
      r.shortest_gap = std::min(r.shortest_gap, k - r.last);
    }
    r.last = k;
    ++r.count;
  }
  const Runs* best = nullptr;
  std::uint64_t anchor = 0;
  for (const auto& [function, r] : runs) {
    if (r.count != iterations) continue;
    if (best == nullptr || r.shortest_gap > best->shortest_gap ||
        (r.shortest_gap == best->shortest_gap && r.first < best->first)) {
      best = &r;
      anchor = function;
    }
  }
  if (best == nullptr) return {};
  for (std::size_t k = best->first + 1; k < n; ++k) {
    if (kernels[k].function == anchor) starts.push_back(static_cast<std::uint32_t>(k));
  }
  return starts;
}

WorkloadLoad build_workload(const core::Trace& trace, WorkloadOptions options) {
  WorkloadBuilder builder(options);
  for (const auto& launch : trace.launches) builder.add(launch);
  for (const auto& execution : trace.executions) builder.add(execution);
  for (const auto& fault : trace.faults) builder.add(fault);
  for (const auto& range : trace.ranges) builder.add(range);
  for (const auto& [function, name] : trace.function_names) builder.add(core::FunctionName{function, name});
  WorkloadLoad result;
  result.workload = builder.finish();
  result.error = builder.error();
  return result;
}

WorkloadLoad load_workload(const std::string& path, WorkloadOptions options) {
  WorkloadLoad result;
  core::TraceReader reader;
  if (!reader.open(path)) {
    result.error = reader.error();
    return result;
  }
  WorkloadBuilder builder(options);
  while (auto record = reader.next()) builder.add(*record);
  if (!reader.finished()) {
    result.error =
        reader.error().empty() ? path + ": the trace ended without its end record" : reader.error();
    return result;
  }
  result.workload = builder.finish();
  if (!builder.error().empty()) result.error = path + ": " + builder.error();
  return result;
}

}  // namespace deepum::sim
