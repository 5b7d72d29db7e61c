#include "deepum/core/loop_period.hpp"

#include <algorithm>
#include <utility>

namespace deepum::core {

bool LoopPeriod::repeats_at(std::uint64_t now, std::uint64_t distance, std::uint64_t signature) const {
  return distance != 0 && distance < history_.size() && distance < now &&
         history_[(now - distance) % history_.size()] == signature;
}

void LoopPeriod::observe(std::uint64_t now, std::uint64_t signature) {
  const auto [seen, first] = last_seen_.try_emplace(signature, now);
  const std::uint64_t previous = first ? 0 : std::exchange(seen->second, now);
  if (repeats_at(now, candidate_, signature)) {
    if (++streak_ >= std::min(candidate_, kConfirm)) period_ = candidate_;
  } else {
    streak_ = 0;
    // A signature seen before proposes its distance; a new one (a fresh address) leaves the
    // candidate be, so one odd launch does not cost the loop.
    if (previous != 0 && now - previous < history_.size()) {
      candidate_ = now - previous;
      streak_ = 1;
    }
  }
  if (period_ != 0) {
    misses_ = repeats_at(now, period_, signature) ? 0 : misses_ + 1;
    if (misses_ > period_) period_ = 0;
  }
  history_[now % history_.size()] = signature;
  // A program that never repeats would grow the map without end: forgotten now and then.
  if (last_seen_.size() > 4 * history_.size()) last_seen_.clear();
}

std::uint64_t copy_signature(std::uint64_t operation, const std::uint64_t* operands, std::size_t count,
                             std::uint64_t bytes) {
  // FNV-1a over the words: cheap, and 0 only by accident (then 1).
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  const auto mix = [&hash](std::uint64_t word) {
    for (int i = 0; i < 8; ++i) {
      hash ^= (word >> (8 * i)) & 0xff;
      hash *= 0x100000001b3ULL;
    }
  };
  mix(operation);
  mix(bytes);
  for (std::size_t i = 0; i < count; ++i) mix(operands[i]);
  return hash == 0 ? 1 : hash;
}

}  // namespace deepum::core
