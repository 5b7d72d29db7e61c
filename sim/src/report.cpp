#include "deepum/sim/report.hpp"

#include <algorithm>
#include <cstdio>

namespace deepum::sim {

std::optional<std::uint64_t> floor_ns(const ReplayReport& report) {
  for (const SimResult& result : report.results) {
    if (result.policy != "oracle") continue;
    // The oracle's bytes at the link's best rate each way: a prefetch, or a pinned copy (what
    // deepum-swap moves by), so no policy, swapping or not, can beat it.
    const MachineModel& m = report.machine;
    const std::uint64_t in =
        transfer_ns(result.stats.h2d_bytes, std::max(m.prefetch_h2d_gb_per_s, m.copy_h2d_gb_per_s));
    const std::uint64_t out =
        transfer_ns(result.stats.d2h_bytes, std::max(m.prefetch_d2h_gb_per_s, m.copy_d2h_gb_per_s));
    // Moves that take turns move the oracle's bytes one way after the other; deepum's copies may
    // not (copies_overlap), and no policy beats the faster way.
    const bool overlap = m.migrations_overlap || m.copies_overlap;
    return std::max(report.compute_ns, overlap ? std::max(in, out) : in + out);
  }
  return std::nullopt;
}

namespace {

std::string fixed(double value, int decimals) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

double ms(std::uint64_t ns) { return static_cast<double>(ns) / 1e6; }
double gib(std::uint64_t bytes) {
  return static_cast<double>(bytes) / static_cast<double>(std::uint64_t{1} << 30);
}

std::string pad(const std::string& text, std::size_t width) {
  return text.size() >= width ? text : std::string(width - text.size(), ' ') + text;
}

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      char escape[8];
      std::snprintf(escape, sizeof escape, "\\u%04x", u);
      out += escape;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace

std::string format_text(const ReplayReport& report) {
  std::string out;
  out += "trace " + report.trace + ": " + std::to_string(report.kernels) + " kernels, " +
         std::to_string(report.iterations) + (report.iterations == 1 ? " iteration" : " iterations") +
         (report.warmup_iterations > 0
              ? " measured after " + std::to_string(report.warmup_iterations) + " of warm-up"
              : std::string()) +
         ", footprint " + fixed(gib(report.footprint_bytes), 2) + " GiB on a GPU of " +
         fixed(gib(report.capacity_bytes), 2) + " GiB (" +
         fixed(static_cast<double>(report.footprint_bytes) / static_cast<double>(report.capacity_bytes), 2) +
         "x)\n";
  const std::size_t w = 12;
  out += "policy            " + pad("step ms", w) + pad("total ms", w) + pad("compute ms", w) +
         pad("stall ms", w) + pad("H2D GiB", w) + pad("D2H GiB", w) + pad("faults", w) + pad("calls", w) +
         pad("x floor", w) + "\n";
  const std::optional<std::uint64_t> floor = floor_ns(report);
  const auto row = [&](const std::string& name, const SimStats& s, bool transfers) {
    std::string line = name + std::string(name.size() < 18 ? 18 - name.size() : 1, ' ');
    line += pad(fixed(ms(s.total_ns) / report.iterations, 3), w) + pad(fixed(ms(s.total_ns), 3), w) +
            pad(fixed(ms(s.compute_ns), 3), w) + pad(fixed(ms(s.stall_ns), 3), w);
    if (transfers) {
      line += pad(fixed(gib(s.h2d_bytes), 3), w) + pad(fixed(gib(s.d2h_bytes), 3), w) +
              pad(std::to_string(s.faults), w) + pad(std::to_string(s.transfer_calls()), w);
    } else {
      line += pad("-", w) + pad("-", w) + pad("-", w) + pad("-", w);
    }
    line += floor && *floor > 0
                ? pad(fixed(static_cast<double>(s.total_ns) / static_cast<double>(*floor), 2), w)
                : pad("-", w);
    return line + "\n";
  };
  if (floor) {
    SimStats f;
    f.total_ns = *floor;
    f.compute_ns = report.compute_ns;
    f.stall_ns = *floor - report.compute_ns;
    out += row("floor", f, false);
  }
  for (const SimResult& result : report.results) out += row(result.policy, result.stats, true);
  for (const SimResult& result : report.results) {
    if (!result.detail.empty()) out += result.policy + ": " + result.detail + "\n";
  }
  for (std::size_t i = 0; i < report.victims.size() && i < report.results.size(); ++i) {
    const VictimCost& v = report.victims[i];
    out += report.results[i].policy + " victims: " + fixed(gib(v.written_bytes), 3) +
           " GiB written to the host; named again within " + std::to_string(VictimCost::kSoon) +
           " operations " + fixed(gib(v.soon_bytes), 3) + " GiB, within " +
           std::to_string(VictimCost::kLater) + " " + fixed(gib(v.within_bytes), 3) + ", later " +
           fixed(gib(v.later_bytes), 3) + ", never " + fixed(gib(v.never_bytes), 3) +
           "; dead before named again " + fixed(gib(v.died_first_bytes), 3) + "\n";
  }
  if (report.belady) {
    out += "belady: the least any victim choice moves at this capacity, " +
           fixed(gib(report.belady->to_gpu_bytes), 3) + " GiB to the GPU and " +
           fixed(gib(report.belady->to_host_bytes), 3) +
           " GiB to the host (dead blocks dropped and placed for nothing)\n";
  }
  return out;
}

std::string format_json(const ReplayReport& report) {
  const auto num = [](std::uint64_t v) { return std::to_string(v); };
  std::string out = "{\n";
  out += "  \"trace\": " + json_string(report.trace) + ",\n";
  out += "  \"kernels\": " + num(report.kernels) + ",\n";
  out += "  \"iterations\": " + num(report.iterations) + ",\n";
  out += "  \"warmup_iterations\": " + num(report.warmup_iterations) + ",\n";
  out += "  \"footprint_bytes\": " + num(report.footprint_bytes) + ",\n";
  out += "  \"capacity_bytes\": " + num(report.capacity_bytes) + ",\n";
  out += "  \"compute_ns\": " + num(report.compute_ns) + ",\n";
  std::string machine = machine_model_json(report.machine);
  std::string indented;
  for (const char c : machine.substr(0, machine.size() - 1)) {
    indented += c;
    if (c == '\n') indented += "  ";
  }
  out += "  \"machine\": " + indented + ",\n";
  const std::optional<std::uint64_t> floor = floor_ns(report);
  out += "  \"floor_ns\": " + (floor ? num(*floor) : std::string("null")) + ",\n";
  out += "  \"floor_step_ns\": " + (floor ? num(*floor / report.iterations) : std::string("null")) + ",\n";
  out += "  \"belady\": " +
         (report.belady ? "{\"to_gpu_bytes\": " + num(report.belady->to_gpu_bytes) +
                              ", \"to_host_bytes\": " + num(report.belady->to_host_bytes) + "}"
                        : std::string("null")) +
         ",\n";
  out += "  \"policies\": [";
  for (std::size_t i = 0; i < report.results.size(); ++i) {
    const SimResult& r = report.results[i];
    const SimStats& s = r.stats;
    out += i == 0 ? "\n" : ",\n";
    out += "    {\"policy\": " + json_string(r.policy) + ", \"detail\": " + json_string(r.detail) +
           ", \"step_ns\": " + num(s.total_ns / report.iterations) + ", \"total_ns\": " + num(s.total_ns) +
           ", \"compute_ns\": " + num(s.compute_ns) + ", \"stall_ns\": " + num(s.stall_ns) +
           ", \"h2d_bytes\": " + num(s.h2d_bytes) + ", \"d2h_bytes\": " + num(s.d2h_bytes) +
           ", \"faults\": " + num(s.faults) + ", \"populate_faults\": " + num(s.populate_faults) +
           ", \"driver_evictions\": " + num(s.driver_evictions) +
           ", \"transfer_calls\": " + num(s.transfer_calls()) +
           ", \"prefetch_calls\": " + num(s.prefetch_calls) + ", \"evict_calls\": " + num(s.evict_calls) +
           ", \"discard_calls\": " + num(s.discard_calls) +
           ", \"prefetched_blocks\": " + num(s.prefetched_blocks) +
           ", \"evicted_blocks\": " + num(s.evicted_blocks) +
           ", \"discarded_blocks\": " + num(s.discarded_blocks) +
           ", \"released_blocks\": " + num(s.released_blocks);
    if (i < report.victims.size()) {
      const VictimCost& v = report.victims[i];
      out += ", \"victims\": {\"written_bytes\": " + num(v.written_bytes) +
             ", \"soon_bytes\": " + num(v.soon_bytes) + ", \"within_bytes\": " + num(v.within_bytes) +
             ", \"later_bytes\": " + num(v.later_bytes) + ", \"never_bytes\": " + num(v.never_bytes) +
             ", \"died_first_bytes\": " + num(v.died_first_bytes) + "}";
    }
    out += "}";
  }
  out += "\n  ]\n}\n";
  return out;
}

}  // namespace deepum::sim
