#include "deepum/core/residency_replay.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "deepum/core/statistics.hpp"

namespace deepum::core {

TimeOrderedResidency::TimeOrderedResidency(std::uint64_t limit_bytes, Timestamp settle_ns)
    : settle_ns_(settle_ns) {
  result_.limit_bytes = limit_bytes;
}

void TimeOrderedResidency::push(Timestamp time, std::variant<RangeEvent, Migration> record) {
  pending_.push({time, sequence_++, std::move(record)});
}

void TimeOrderedResidency::on_range(const RangeEvent& range) { push(range.time, range); }

void TimeOrderedResidency::on_migration(const Migration& migration) {
  // A move to the GPU holds memory from its start, a move to the host frees it at its end: while
  // both run, the larger reading.
  const bool to_gpu = migration.direction == MigrationDirection::host_to_device;
  push(to_gpu ? migration.start : std::max(migration.start, migration.end), migration);
}

void TimeOrderedResidency::apply(const Pending& pending) {
  const std::uint64_t limit = result_.limit_bytes;
  const std::uint64_t limit_5pct = limit > UINT64_MAX - limit / 20 ? UINT64_MAX : limit + limit / 20;
  const bool is_migration = std::holds_alternative<Migration>(pending.record);
  if (pending.time < replayed_up_to_) {
    // Later than the settling delay: applied now, its bytes counted from here on (its own time
    // stays its peak time).
    ++result_.out_of_order;
  } else {
    // The residency reached by the previous record held until this one. Counted into the run
    // only once a migration follows, so that frees after the last migration (at exit) add none.
    if (replayed_up_to_ != 0) {
      if (resident_ > limit) over_limit_pending_ns_ += pending.time - replayed_up_to_;
      if (resident_ > limit_5pct) over_limit_5pct_pending_ns_ += pending.time - replayed_up_to_;
    }
    replayed_up_to_ = pending.time;
    if (is_migration) {
      result_.over_limit_ns += std::exchange(over_limit_pending_ns_, 0);
      result_.over_limit_5pct_ns += std::exchange(over_limit_5pct_pending_ns_, 0);
    }
  }
  if (const auto* range = std::get_if<RangeEvent>(&pending.record)) {
    if (range->kind == RangeEvent::Kind::allocated) {
      map_.on_range_allocated(range->address, range->bytes);
    } else {
      map_.on_range_freed(range->address, range->bytes);
    }
  } else {
    map_.on_migration(std::get<Migration>(pending.record));
    result_.first_time =
        result_.migrations++ == 0 ? pending.time : std::min(result_.first_time, pending.time);
    result_.last_time = std::max(result_.last_time, pending.time);
  }
  const std::uint64_t before = resident_;
  resident_ = map_.resident_bytes();
  if (timeline_bucket_ns_ != 0 && pending.time >= timeline_origin_) {
    const Timestamp bucket_index = (pending.time - timeline_origin_) / timeline_bucket_ns_;
    // A bad timestamp must not ask for billions of intervals: past the cap, no timeline.
    if (bucket_index < kMaxTimelineIntervals) {
      const auto bucket = static_cast<std::size_t>(bucket_index);
      // The intervals since the last record held what it left, up to and into this one.
      for (std::size_t i = timeline_.size(); i <= bucket; ++i) timeline_.push_back(i == 0 ? 0 : before);
      if (bucket + 1 == timeline_.size()) timeline_[bucket] = std::max(timeline_[bucket], before);
      timeline_[bucket] = std::max(timeline_[bucket], resident_);
    }
  }
  if (resident_ > result_.peak_bytes) {
    result_.peak_bytes = resident_;
    result_.peak_time = pending.time;
  }
}

void TimeOrderedResidency::keep_timeline(Timestamp origin, Timestamp bucket_ns) {
  timeline_origin_ = origin;
  timeline_bucket_ns_ = bucket_ns;
}

void TimeOrderedResidency::replay_up_to(Timestamp cutoff) {
  while (!pending_.empty() && pending_.top().time <= cutoff) {
    apply(pending_.top());
    pending_.pop();
  }
}

void TimeOrderedResidency::advance(Timestamp now) {
  if (now >= settle_ns_) replay_up_to(now - settle_ns_);
}

void TimeOrderedResidency::finish() { replay_up_to(UINT64_MAX); }

namespace {

// The 2 MB blocks the trace's ranges ever cover, each counted once: however its frees and reuses
// of addresses go, the most blocks a replay's map can hold at once.
std::uint64_t blocks_ever_covered(const std::vector<RangeEvent>& ranges) {
  std::vector<std::pair<BlockId, BlockId>> spans;  // first, last
  for (const RangeEvent& range : ranges) {
    if (range.kind != RangeEvent::Kind::allocated || range.bytes == 0) continue;
    const std::uint64_t last_byte =
        range.bytes - 1 > UINT64_MAX - range.address ? UINT64_MAX : range.address + (range.bytes - 1);
    spans.emplace_back(block_of(range.address), block_of(last_byte));
  }
  std::sort(spans.begin(), spans.end());
  std::uint64_t blocks = 0;
  BlockId covered_up_to = 0;  // one past the last block counted
  for (const auto& [first, last] : spans) {
    const BlockId from = std::max(first, covered_up_to);
    if (last >= from) blocks += last - from + 1;
    covered_up_to = std::max(covered_up_to, last + 1);
  }
  return blocks;
}

}  // namespace

ResidencyReplay replay_residency(const Trace& trace, std::uint64_t limit_bytes,
                                 std::vector<ResidencyInterval>* timeline, Timestamp interval_ns,
                                 std::uint64_t max_managed_bytes) {
  if (const std::uint64_t blocks = blocks_ever_covered(trace.ranges);
      blocks > max_managed_bytes / kBlockBytes) {
    ResidencyReplay refused;
    refused.limit_bytes = limit_bytes;
    const std::uint64_t covered = blocks > UINT64_MAX / kBlockBytes ? UINT64_MAX : blocks * kBlockBytes;
    refused.error = fmt::format(
        "its managed ranges cover {} of address space (in 2 MB blocks, each counted once), more than "
        "the {} a replay holds",
        format_bytes(covered), format_bytes(max_managed_bytes));
    return refused;
  }
  TimeOrderedResidency replay(limit_bytes, 0);
  Timestamp origin = UINT64_MAX;
  for (const Migration& migration : trace.migrations) {
    if (migration.start != 0) origin = std::min(origin, migration.start);  // 0: no time known
  }
  const bool with_timeline = timeline != nullptr && interval_ns != 0 && origin != UINT64_MAX;
  if (with_timeline) replay.keep_timeline(origin, interval_ns);
  // Ranges first: at equal times an allocation precedes the migrations into it.
  for (const RangeEvent& range : trace.ranges) replay.on_range(range);
  for (const Migration& migration : trace.migrations) replay.on_migration(migration);
  replay.finish();
  ResidencyReplay out = replay.result();
  for (const ResidentSample& sample : trace.resident_samples)
    out.estimated_peak_bytes = std::max(out.estimated_peak_bytes, sample.estimated_resident_bytes);
  if (!with_timeline) return out;
  timeline->assign(replay.timeline().size(), {});
  for (std::size_t i = 0; i < timeline->size(); ++i) {
    (*timeline)[i].start = i * interval_ns;
    (*timeline)[i].resident_max = replay.timeline()[i];
  }
  // The rest by the interval their time falls in; before the first migration or past the last
  // interval, nothing.
  auto at = [&](Timestamp time) -> ResidencyInterval* {
    if (time < origin) return nullptr;
    const auto index = static_cast<std::size_t>((time - origin) / interval_ns);
    return index < timeline->size() ? &(*timeline)[index] : nullptr;
  };
  for (const Migration& migration : trace.migrations) {
    if (ResidencyInterval* interval = at(migration.end)) {
      (migration.direction == MigrationDirection::host_to_device ? interval->to_gpu_bytes
                                                                 : interval->to_host_bytes) +=
          migration.bytes;
    }
  }
  for (const ResidentSample& sample : trace.resident_samples) {
    if (ResidencyInterval* interval = at(sample.time))
      interval->estimated_max = std::max(interval->estimated_max, sample.estimated_resident_bytes);
  }
  for (const Hint& hint : trace.hints) {
    if (hint.kind == Hint::Kind::prefetch_to_gpu) continue;
    if (ResidencyInterval* interval = at(hint.time)) interval->evictions_asked_bytes += hint.bytes;
  }
  return out;
}

std::string describe(const ResidencyReplay& r) {
  auto percent_of_limit = [&](std::uint64_t bytes) {
    return r.limit_bytes == 0 ? 0.0
                              : 100.0 * (static_cast<double>(bytes) - static_cast<double>(r.limit_bytes)) /
                                    static_cast<double>(r.limit_bytes);
  };
  const double span_s =
      r.last_time > r.first_time ? static_cast<double>(r.last_time - r.first_time) / 1e9 : 0.0;
  std::string out =
      fmt::format("migrations replayed in time order: {} over {:.3f} s\n", r.migrations, span_s);
  out +=
      fmt::format("peak resident: {} ({:+.1f}% of the limit {}), {:.3f} s after the first migration\n",
                  format_bytes(r.peak_bytes), percent_of_limit(r.peak_bytes), format_bytes(r.limit_bytes),
                  r.peak_time > r.first_time ? static_cast<double>(r.peak_time - r.first_time) / 1e9 : 0.0);
  out += fmt::format("time above the limit: {:.3f} s ({:.1f}%), above the limit + 5%: {:.3f} s ({:.1f}%)\n",
                     static_cast<double>(r.over_limit_ns) / 1e9,
                     span_s > 0 ? 100.0 * static_cast<double>(r.over_limit_ns) / 1e9 / span_s : 0.0,
                     static_cast<double>(r.over_limit_5pct_ns) / 1e9,
                     span_s > 0 ? 100.0 * static_cast<double>(r.over_limit_5pct_ns) / 1e9 / span_s : 0.0);
  if (r.out_of_order != 0) {
    out += fmt::format("records that came after later ones had been replayed (applied late): {}\n",
                       r.out_of_order);
  }
  if (r.estimated_peak_bytes != 0) {
    out += fmt::format("the live estimate's peak sample: {} ({:+.1f}% of the limit)\n",
                       format_bytes(r.estimated_peak_bytes), percent_of_limit(r.estimated_peak_bytes));
  }
  return out;
}

}  // namespace deepum::core
