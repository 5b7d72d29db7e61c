#include "deepum/core/loop_period.hpp"

#include <algorithm>
#include <array>
#include <utility>

namespace deepum::core {

bool LoopPeriod::repeats_at(std::uint64_t now, std::uint64_t distance, std::uint64_t signature) const {
  return distance != 0 && distance < history_.size() && distance < now &&
         history_[(now - distance) % history_.size()] == signature;
}

std::uint64_t LoopPeriod::window_hash(std::uint64_t now) const {
  if (now < kWindow || history_.size() < kWindow) return 0;
  std::uint64_t hash = 0x9e3779b97f4a7c15ULL;
  std::size_t at = (now - kWindow + 1) % history_.size();  // one division, not one per signature
  for (std::uint64_t n = 0; n < kWindow; ++n) {
    hash = (hash ^ history_[at]) * 0xff51afd7ed558ccdULL;
    if (++at == history_.size()) at = 0;
  }
  return hash == 0 ? 1 : hash;
}

void LoopPeriod::observe(std::uint64_t now, std::uint64_t signature) {
  const bool repeats = repeats_at(now, candidate_, signature);
  if (repeats) {
    ++streak_repeats_;
    if (!repeats_at(now, period_, signature)) ++streak_period_misses_;
  }
  history_[now % history_.size()] = signature;  // after the check: a distance is below the size
  std::uint64_t previous = 0;
  if (const std::uint64_t window = window_hash(now); window != 0) {
    // The product's low bits hold only the signatures' low bits: the high half is folded in.
    Seen& slot = seen_[(window ^ (window >> 32)) & (seen_.size() - 1)];
    if (slot.window == window) previous = slot.operation;
    slot = {window, now};
  }
  if (repeats) {
    ++streak_;
  } else {
    streak_ = 0;
    // A window seen before proposes its distance, its operations repeating already; one never
    // seen (a fresh address inside it) leaves the candidate be, so one odd launch does not cost
    // the loop.
    if (previous != 0 && now - previous < history_.size()) {
      candidate_ = now - previous;
      streak_ = std::min(kWindow, candidate_);
      streak_repeats_ = streak_period_misses_ = 0;
    }
  }
  if (candidate_ != 0 && streak_ >= std::min(candidate_, kConfirm) && !adds_little()) period_ = candidate_;
  if (period_ != 0) {
    misses_ = repeats_at(now, period_, signature) ? 0 : misses_ + 1;
    if (misses_ > period_) period_ = 0;
  }
}

bool LoopPeriod::adds_little() const {
  // Taken, a longer period holds planning up until a history of its length has filled, and it is
  // learned anew each time it is lost; the shorter one mispredicts only the odd operations.
  return period_ != 0 && candidate_ != period_ && candidate_ % period_ == 0 &&
         streak_period_misses_ * kFewMisses <= streak_repeats_;
}

namespace {
// A multiply and a shift per word, then one more mix so that every bit of the last word reaches
// the low bits (LoopPeriod's table slot); 0 only by accident (then 1).
template <std::size_t N>
std::uint64_t hash_words(const std::array<std::uint64_t, N>& words) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (std::uint64_t word : words) hash = (hash ^ word ^ (hash >> 29)) * 0xbf58476d1ce4e5b9ULL;
  hash = (hash ^ (hash >> 31)) * 0x94d049bb133111ebULL;
  hash ^= hash >> 29;
  return hash == 0 ? 1 : hash;
}
}  // namespace

std::uint64_t launch_address_signature(const KernelLaunch& launch) {
  if (launch.execution_key != 0) return launch.execution_key;  // function, shape and pointers
  std::array<std::uint64_t, KernelLaunch::kMaxPointers + 2> words{3, launch.function};
  std::copy_n(launch.pointers.begin(),
              std::min<std::size_t>(launch.pointer_count, KernelLaunch::kMaxPointers), words.begin() + 2);
  return hash_words(words);
}

std::uint64_t copy_address_signature(const CopyLaunch& copy) {
  return hash_words(std::array<std::uint64_t, 5>{4, static_cast<std::uint64_t>(copy.operation), copy.bytes,
                                                 copy.operand_count > 0 ? copy.operands[0] : 0,
                                                 copy.operand_count > 1 ? copy.operands[1] : 0});
}

std::uint64_t launch_shape_signature(const KernelLaunch& launch) {
  return hash_words(std::array<std::uint64_t, 8>{1, launch.function, launch.grid[0], launch.grid[1],
                                                 launch.grid[2], launch.block[0], launch.block[1],
                                                 launch.block[2]});
}

std::uint64_t copy_shape_signature(const CopyLaunch& copy) {
  return hash_words(std::array<std::uint64_t, 4>{2, static_cast<std::uint64_t>(copy.operation), copy.bytes,
                                                 copy.operand_count});
}

}  // namespace deepum::core
