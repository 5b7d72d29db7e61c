#include "deepum/core/launch_frontier.hpp"

#include <algorithm>

namespace deepum::core {
namespace {

constexpr std::uint64_t kPageBytes = ResidencyMap::kPageBytes;

AddressRange named_by(std::uint64_t pointer, std::uint64_t extent) {
  const std::uint64_t lo = pointer / kPageBytes * kPageBytes;
  const std::uint64_t end = extent != 0 ? pointer + extent : block_base(block_of(pointer)) + kBlockBytes;
  const std::uint64_t hi = (end + kPageBytes - 1) / kPageBytes * kPageBytes;
  return {lo, hi - lo};
}

}  // namespace

void LaunchFrontier::on_launch(const KernelLaunch& launch) {
  if (launch.pointer_count == 0) return;  // names nothing: progress past it is all it could tell
  Pending pending{launch.correlation_id, false, {}};
  pending.ranges.reserve(launch.pointer_count);
  for (std::size_t i = 0; i < launch.pointer_count; ++i)
    pending.ranges.push_back(named_by(launch.pointers[i], launch.extents[i]));
  Stream& stream = streams_[launch.stream];
  // Launches from two threads on one stream may reach the queue out of id order.
  auto at = stream.end();
  while (at != stream.begin() && std::prev(at)->correlation_id > launch.correlation_id) --at;
  stream.insert(at, std::move(pending));
  ++pending_count_;
  if (stream.size() > max_pending_) {
    stream.pop_front();
    --pending_count_;
  }
}

void LaunchFrontier::reach(Pending& launch, bool done, const ReachedFn& reached) {
  if (launch.reached) return;
  launch.reached = true;
  for (const AddressRange& range : launch.ranges) {
    reached_bytes_ += range.bytes;
    reached(range, done);
  }
}

void LaunchFrontier::advance(Stream& stream, std::uint64_t correlation_id, bool including,
                             const ReachedFn& reached) {
  while (!stream.empty() && (stream.front().correlation_id < correlation_id ||
                             (including && stream.front().correlation_id == correlation_id))) {
    reach(stream.front(), /*done=*/true, reached);
    stream.pop_front();
    --pending_count_;
  }
  for (std::size_t i = 0; i < std::min(reached_ahead_, stream.size()); ++i)
    reach(stream[i], /*done=*/false, reached);
}

void LaunchFrontier::on_progress(std::uint64_t stream, std::uint64_t correlation_id,
                                 const ReachedFn& reached) {
  auto it = streams_.find(stream);
  if (it != streams_.end()) advance(it->second, correlation_id, /*including=*/false, reached);
}

void LaunchFrontier::on_executed(std::uint64_t correlation_id, const ReachedFn& reached) {
  for (auto& [handle, stream] : streams_) {
    if (stream.empty() || stream.front().correlation_id > correlation_id ||
        stream.back().correlation_id < correlation_id)
      continue;
    const auto it = std::lower_bound(
        stream.begin(), stream.end(), correlation_id,
        [](const Pending& pending, std::uint64_t id) { return pending.correlation_id < id; });
    if (it == stream.end() || it->correlation_id != correlation_id) continue;
    advance(stream, correlation_id, /*including=*/true, reached);
    return;
  }
}

void LaunchFrontier::clear() {
  streams_.clear();
  pending_count_ = 0;
}

std::unordered_map<BlockId, std::uint64_t> LaunchFrontier::next_uses() const {
  std::unordered_map<BlockId, std::uint64_t> uses;
  for (const auto& [handle, stream] : streams_) {
    for (std::size_t position = 0; position < stream.size(); ++position) {
      for (const AddressRange& range : stream[position].ranges) {
        for_each_block_of(range, [&](BlockId block) {
          auto [it, inserted] = uses.emplace(block, position);
          if (!inserted) it->second = std::min<std::uint64_t>(it->second, position);
        });
      }
    }
  }
  return uses;
}

}  // namespace deepum::core
