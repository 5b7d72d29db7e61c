// LoopPeriod: the length, in operations, of the loop a program repeats (a training step, a sweep
// over arrays), learned from the sequence of operation signatures (a kernel's function and launch
// shape; a copy's kind and size). With it, the blocks the next period
// names are the ones this period named, one period later: the engine evicts those needed furthest
// ahead (Belady's choice on the learned loop), not the least recently named, which in a loop is
// exactly what comes back next.
//
// A candidate period is the distance to the latest earlier occurrence of the last kWindow
// signatures together (one signature alone recurs within a step: PyTorch's allocator hands each
// layer the same scratch buffers); it is confirmed once that many operations in a row (at most
// kConfirm) repeat at that distance. A confirmed period is kept through operations that break the
// pattern (an input batch at a new address, a logging step), and dropped after a whole period of them.
// A multiple of it replaces it only where the period misses more than one in kFewMisses of the
// operations the multiple repeats (an odd launch every other step proposes twice the period, which
// every repeating operation confirms).
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

#include "deepum/core/events.hpp"

namespace deepum::core {

class LoopPeriod {
 public:
  static constexpr std::uint64_t kConfirm = 256;
  static constexpr std::uint64_t kWindow = 16;
  static constexpr std::uint64_t kFewMisses = 16;

  // Periods longer than `max_period` operations are not looked for (the history is a ring of
  // that many signatures).
  explicit LoopPeriod(std::uint32_t max_period = 1U << 18)
      : history_(max_period, 0), seen_(std::bit_ceil(std::clamp<std::uint32_t>(max_period, 1, kMaxSeen))) {}

  // Operation number `now` (1, 2, ..., each once, in order) had `signature` (never 0).
  void observe(std::uint64_t now, std::uint64_t signature);
  // The confirmed period, or 0 while none is.
  std::uint64_t period() const { return period_; }

 private:
  bool repeats_at(std::uint64_t now, std::uint64_t distance, std::uint64_t signature) const;
  // Whether the candidate is a multiple of the confirmed period, which repeats nearly all it does.
  bool adds_little() const;
  // The hash of the signatures of operations now - kWindow + 1 to now (0 before there are that many).
  std::uint64_t window_hash(std::uint64_t now) const;

  // Windows remembered at most: a table of 1 MiB. A window's slot comes from its hash, and a
  // window that lands on another's replaces it: a window lost so is proposed at its next
  // occurrence, and the period learned a little later. One slot a launch, no allocation: the
  // launch callback calls observe on every launch.
  static constexpr std::uint32_t kMaxSeen = 1U << 16;
  struct Seen {
    std::uint64_t window = 0, operation = 0;  // window hash 0: empty
  };

  std::vector<std::uint64_t> history_;  // signature of operation n at n % size; 0: none yet
  std::vector<Seen> seen_;              // window hash -> its latest operation, as above
  std::uint64_t candidate_ = 0, streak_ = 0;
  // Operations of the candidate's streak that repeated at its distance, and of those, how many did
  // not at the period's.
  std::uint64_t streak_repeats_ = 0, streak_period_misses_ = 0;
  std::uint64_t period_ = 0, misses_ = 0;
};

// Operation signatures for LoopPeriod: equal for operations that repeat each other. By address
// (function and the managed pointers it names), a loop over arrays with one kernel is seen; by
// shape (function and launch shape), a training step is, although PyTorch's allocator hands its
// activations out at other addresses each step (in a traced GPT-2 run, about half of a step's
// distinct launches were not in the step before).
std::uint64_t launch_address_signature(const KernelLaunch& launch);
std::uint64_t copy_address_signature(const CopyLaunch& copy);
std::uint64_t launch_shape_signature(const KernelLaunch& launch);
std::uint64_t copy_shape_signature(const CopyLaunch& copy);

}  // namespace deepum::core
