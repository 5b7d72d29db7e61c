// Residency by the migration records in time order: what was on the GPU, by the driver's own
// account, at every moment of the run. The worker's live estimate applies records as they arrive
// (0.05-2 s late, measured on an H100) and so runs behind the GPU by however much it faulted in
// meanwhile: on GPT-2 at 3x it showed a peak 1.4-2 GiB under this one. TimeOrderedResidency holds
// records until they have settled (no earlier one can still come) and replays them in order; it
// gives the run's true peak and the time spent over the limit, live (a few seconds behind) or
// from a trace file.
#pragma once

#include <cstdint>
#include <queue>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "deepum/core/residency_map.hpp"
#include "deepum/core/trace_file.hpp"

namespace deepum::core {

struct ResidencyReplay {
  std::uint64_t limit_bytes = 0;
  std::uint64_t migrations = 0;
  std::uint64_t peak_bytes = 0;  // by the records in time order
  Timestamp peak_time = 0;
  Timestamp first_time = 0, last_time = 0;  // of the migrations replayed (earliest, latest)
  Timestamp over_limit_ns = 0;              // time spent above the limit
  Timestamp over_limit_5pct_ns = 0;         // and above the limit + 5%
  std::uint64_t out_of_order = 0;           // records that came after later ones had been replayed
  std::uint64_t estimated_peak_bytes = 0;   // from a trace: the live estimate's largest sample
  std::string error;  // replay_residency: why the trace was not replayed (nothing else is set)
};

class TimeOrderedResidency {
 public:
  // Records are applied once `settle_ns` older than the time given to advance(): a record later
  // than that is applied when it comes, out of order, and counted.
  TimeOrderedResidency(std::uint64_t limit_bytes, Timestamp settle_ns);

  void on_range(const RangeEvent& range);
  void on_migration(const Migration& migration);
  // Replays every record that has settled by `now`.
  void advance(Timestamp now);
  // Replays everything held (the end of the run).
  void finish();

  const ResidencyReplay& result() const { return result_; }
  std::uint64_t resident_bytes() const { return map_.resident_bytes(); }
  // Also keep the highest residency in each `bucket_ns` interval from `origin` (a timeline), for
  // at most kMaxTimelineIntervals intervals.
  static constexpr Timestamp kMaxTimelineIntervals = Timestamp{1} << 22;
  void keep_timeline(Timestamp origin, Timestamp bucket_ns);
  const std::vector<std::uint64_t>& timeline() const { return timeline_; }
  std::size_t held() const { return pending_.size(); }

 private:
  struct Pending {
    Timestamp time;
    std::uint64_t sequence;  // arrival order among equal times: an allocation before its migrations
    std::variant<RangeEvent, Migration> record;
    bool operator>(const Pending& other) const {
      return time != other.time ? time > other.time : sequence > other.sequence;
    }
  };
  void push(Timestamp time, std::variant<RangeEvent, Migration> record);
  void apply(const Pending& pending);
  void replay_up_to(Timestamp cutoff);  // every record held with a time at or before `cutoff`

  Timestamp settle_ns_;
  std::priority_queue<Pending, std::vector<Pending>, std::greater<>> pending_;
  std::uint64_t sequence_ = 0;
  Timestamp replayed_up_to_ = 0;                                          // time of the latest record applied
  std::uint64_t resident_ = 0;                                            // after the latest record applied
  Timestamp over_limit_pending_ns_ = 0, over_limit_5pct_pending_ns_ = 0;  // since the last migration
  Timestamp timeline_origin_ = 0, timeline_bucket_ns_ = 0;
  std::vector<std::uint64_t> timeline_;
  ResidencyMap map_{/*faults_make_resident=*/false};
  ResidencyReplay result_;
};

// One interval of a whole trace's timeline: what the records in time order, the live estimate and
// the link did in it.
struct ResidencyInterval {
  Timestamp start = 0;                                // ns after the first migration
  std::uint64_t resident_max = 0;                     // by the records in time order
  std::uint64_t estimated_max = 0;                    // the live estimate's samples (0: none in it)
  std::uint64_t to_gpu_bytes = 0, to_host_bytes = 0;  // migrations ending in it
  std::uint64_t evictions_asked_bytes = 0;            // deepum's eviction and discard hints in it
};

// A whole trace: its ranges and migrations through TimeOrderedResidency, and the live estimate's
// largest resident sample. With `timeline` and `interval_ns`, also the run in intervals. A trace
// whose ranges cover more than `max_managed_bytes` of address space, every 2 MB block counted once
// (the most its map can hold), is not replayed: `error` says so.
ResidencyReplay replay_residency(const Trace& trace, std::uint64_t limit_bytes,
                                 std::vector<ResidencyInterval>* timeline = nullptr,
                                 Timestamp interval_ns = 0,
                                 std::uint64_t max_managed_bytes = kMaxTraceManagedBytes);

// A few lines of text: the peak against the limit, the time over it, the live estimate's peak.
std::string describe(const ResidencyReplay& replay);

}  // namespace deepum::core
