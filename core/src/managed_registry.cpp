#include "deepum/core/managed_registry.hpp"

#include <array>
#include <mutex>
#include <new>

namespace deepum::core {

bool ManagedRegistry::insert(const ManagedRange& range) {
  if (range.bytes == 0) return false;
  std::unique_lock lock(mutex_);
  auto next = ranges_.lower_bound(range.base);
  if (next != ranges_.end() && next->first - range.base < range.bytes) return false;
  if (next != ranges_.begin() && std::prev(next)->second.contains(range.base)) return false;
  ranges_.emplace_hint(next, range.base, range);
  generation_.store(next_generation(), std::memory_order_release);
  live_bytes_ += range.bytes;
  if (range.base < span_low_.load(std::memory_order_relaxed))
    span_low_.store(range.base, std::memory_order_relaxed);
  if (range.base + range.bytes > span_high_.load(std::memory_order_relaxed)) {
    span_high_.store(range.base + range.bytes, std::memory_order_relaxed);
  }
  return true;
}

std::optional<ManagedRange> ManagedRegistry::erase(std::uintptr_t base) {
  std::unique_lock lock(mutex_);
  auto it = ranges_.find(base);
  if (it == ranges_.end()) return std::nullopt;
  ManagedRange range = it->second;
  ranges_.erase(it);
  generation_.store(next_generation(), std::memory_order_release);
  live_bytes_ -= range.bytes;
  return range;
}

std::optional<ManagedRange> ManagedRegistry::find_containing(std::uintptr_t address) const {
  std::shared_lock lock(mutex_);
  auto it = ranges_.upper_bound(address);
  if (it == ranges_.begin()) return std::nullopt;
  --it;
  if (!it->second.contains(address)) return std::nullopt;
  return it->second;
}

std::uint64_t ManagedRegistry::next_generation() {
  static std::atomic<std::uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

bool ManagedRegistry::contains(std::uintptr_t address) const {
  constexpr std::uintptr_t kBlockBytes = std::uintptr_t{2} << 20;
  struct Remembered {
    const ManagedRegistry* registry = nullptr;
    std::uint64_t generation = 0;
    std::array<std::uintptr_t, 64> blocks{};  // block number + 1 by its slot; 0: none
  };
  thread_local Remembered remembered;
  // Read before the lookup: a range that comes or goes meanwhile empties this at the next call.
  const std::uint64_t generation = generation_.load(std::memory_order_acquire);
  if (remembered.registry != this || remembered.generation != generation) {
    remembered.registry = this;
    remembered.generation = generation;
    remembered.blocks.fill(0);
  }
  const std::uintptr_t block = address / kBlockBytes;
  std::uintptr_t& slot = remembered.blocks[block % remembered.blocks.size()];
  if (slot == block + 1) return true;
  const std::optional<ManagedRange> range = find_containing(address);
  if (!range) return false;
  if (range->contains(block * kBlockBytes) && range->contains((block + 1) * kBlockBytes - 1))
    slot = block + 1;
  return true;
}

std::vector<ManagedRange> ManagedRegistry::snapshot() const {
  std::shared_lock lock(mutex_);
  std::vector<ManagedRange> out;
  out.reserve(ranges_.size());
  for (const auto& [base, range] : ranges_) out.push_back(range);
  return out;
}

std::uint64_t ManagedRegistry::live_bytes() const {
  std::shared_lock lock(mutex_);
  return live_bytes_;
}

std::size_t ManagedRegistry::live_count() const {
  std::shared_lock lock(mutex_);
  return ranges_.size();
}

void ManagedRegistry::reset_in_child() {
  new (&mutex_) std::shared_mutex();  // the parent's, still held, is abandoned, never released
  ranges_.clear();
  generation_.store(next_generation(), std::memory_order_release);
  live_bytes_ = 0;
}

std::uint64_t ManagedRegistry::forget_device(int device) {
  std::unique_lock lock(mutex_);
  std::uint64_t bytes = 0;
  for (auto it = ranges_.begin(); it != ranges_.end();) {
    if (it->second.device == device) {
      bytes += it->second.bytes;
      it = ranges_.erase(it);
      generation_.store(next_generation(), std::memory_order_release);
    } else {
      ++it;
    }
  }
  live_bytes_ -= bytes;
  return bytes;
}

void ManagedRegistry::clear() {
  std::unique_lock lock(mutex_);
  ranges_.clear();
  generation_.store(next_generation(), std::memory_order_release);
  live_bytes_ = 0;
}

}  // namespace deepum::core
