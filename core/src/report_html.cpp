// render_report_html(): the report as one HTML page with inline SVG plots. Nothing is fetched and
// nothing runs: it opens the same in any browser, offline. Sections keep their ids (verdict,
// residency, time-split, kernel-stalls, program-thread, counters) whatever the input holds; a
// section without its input says which file would give it.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "deepum/core/exit_report.hpp"
#include "deepum/core/run_report.hpp"
#include "deepum/core/statistics.hpp"

namespace deepum::core {

namespace {

// Text for HTML and SVG: markup characters escaped, control characters and bytes that are not
// UTF-8 replaced (kernel names come from the traced program).
std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '&')
      out += "&amp;";
    else if (c == '"')
      out += "&quot;";
    else if (c == '\'')
      out += "&#39;";
    else if (c < 0x20 || c == 0x7f)
      out += "\xEF\xBF\xBD";
    else if (c < 0x80)
      out += static_cast<char>(c);
    else {
      const std::size_t length = c >= 0xF0 && c < 0xF5 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c < 0xE0 ? 2 : 0;
      bool valid = length != 0 && i + length <= text.size();
      for (std::size_t k = 1; valid && k < length; ++k)
        valid = (static_cast<unsigned char>(text[i + k]) & 0xC0) == 0x80;
      if (valid) {
        out.append(text.substr(i, length));
        i += length - 1;
      } else {
        out += "\xEF\xBF\xBD";
      }
    }
  }
  return out;
}

std::string shorten(const std::string& name, std::size_t most) {
  return name.size() <= most ? name : name.substr(0, most - 3) + "...";
}

// A round step for about `count` ticks up to `top`: 1, 2 or 5 times a power of ten.
double tick_step(double top, int count) {
  if (top <= 0) return 1;
  const double raw = top / count;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * power >= raw) return m * power;
  }
  return 10 * power;
}

std::string number(double value) {
  if (value == 0) return "0";
  if (std::fabs(value) >= 100) return fmt::format("{:.0f}", value);
  if (std::fabs(value) >= 1) return fmt::format("{:.3g}", value);
  return fmt::format("{:.2g}", value);
}

// A chart's frame: plot area, axes with ticks, labels. Coordinates in SVG user units.
class Chart {
 public:
  Chart(std::string label, double width, double height, double x_max, double y_min, double y_max)
      : label_(std::move(label)),
        width_(width),
        height_(height),
        x_max_(x_max > 0 ? x_max : 1),
        y_min_(y_min),
        y_max_(y_max > y_min ? y_max : y_min + 1) {}

  double x(double value) const { return kLeft + (width_ - kLeft - kRight) * value / x_max_; }
  double y(double value) const {
    return kTop + (height_ - kTop - kBottom) * (1 - (value - y_min_) / (y_max_ - y_min_));
  }
  void add(const std::string& element) { body_ += element; }
  void hide_x_ticks() { x_ticks_ = false; }  // the bars name their own places
  void polyline(const std::vector<std::pair<double, double>>& points, const std::string& style) {
    std::string coords;
    for (const auto& [px, py] : points) coords += fmt::format("{:.1f},{:.1f} ", x(px), y(py));
    add(fmt::format(R"(<polyline fill="none" {} points="{}"/>)", style, coords));
  }
  void hline(double value, const std::string& style, const std::string& text) {
    add(fmt::format(R"(<line x1="{:.1f}" x2="{:.1f}" y1="{:.1f}" y2="{:.1f}" {}/>)", x(0), x(x_max_),
                    y(value), y(value), style));
    add(fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="end" class="note">{}</text>)", x(x_max_) - 4,
                    y(value) - 4, escape(text)));
  }
  void bar(double x0, double x1, double v0, double v1, const std::string& fill) {
    const double top = std::min(y(v0), y(v1)), bottom = std::max(y(v0), y(v1));
    add(fmt::format(R"(<rect x="{:.1f}" y="{:.1f}" width="{:.2f}" height="{:.2f}" fill="{}"/>)", x(x0), top,
                    std::max(0.5, x(x1) - x(x0)), bottom - top, fill));
  }
  std::string svg(const std::string& x_label, const std::string& y_label) const {
    std::string axes =
        fmt::format(R"(<line x1="{0:.1f}" x2="{0:.1f}" y1="{1:.1f}" y2="{2:.1f}" class="axis"/>)", x(0),
                    y(y_max_), y(y_min_));
    axes += fmt::format(R"(<line x1="{0:.1f}" x2="{1:.1f}" y1="{2:.1f}" y2="{2:.1f}" class="axis"/>)", x(0),
                        x(x_max_), y(std::max(0.0, y_min_)));
    const double xs = tick_step(x_max_, 8), ys = tick_step(std::max(y_max_, -y_min_), 4);
    for (int k = 0; x_ticks_ && k * xs <= x_max_ * 1.0001; ++k)
      axes += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="middle">{}</text>)", x(k * xs),
                          height_ - kBottom + 16, number(k * xs));
    for (auto k = static_cast<int>(std::ceil(y_min_ / ys - 1e-9)); k * ys <= y_max_ * 1.0001; ++k)
      axes += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="end">{}</text>)", kLeft - 6,
                          y(k * ys) + 4, number(k * ys));
    axes += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="middle">{}</text>)", x(x_max_ / 2),
                        height_ - 6, escape(x_label));
    const double middle = y((y_min_ + y_max_) / 2);
    axes += fmt::format(
        R"svg(<text x="14" y="{0:.1f}" transform="rotate(-90 14 {0:.1f})" text-anchor="middle">{1}</text>)svg",
        middle, escape(y_label));
    return fmt::format(R"(<svg class="chart" viewBox="0 0 {} {}" role="img" aria-label="{}">{}{}</svg>)",
                       width_, height_, escape(label_), axes, body_);
  }

 private:
  static constexpr double kLeft = 64, kRight = 16, kTop = 12, kBottom = 40;
  std::string label_;
  double width_, height_, x_max_, y_min_, y_max_;
  std::string body_;
  bool x_ticks_ = true;
};

std::string legend(std::initializer_list<std::pair<const char*, const char*>> items) {
  std::string out = R"(<p class="legend">)";
  for (const auto& [color, text] : items)
    out += fmt::format(R"(<span><i style="background:{}"></i>{}</span>)", color, escape(text));
  return out + "</p>";
}

std::string missing(std::string_view what) {
  return fmt::format(R"(<p class="missing">{}</p>)", escape(what));
}

double seconds(Timestamp ns) { return static_cast<double>(ns) / 1e9; }
// Sizes on an axis: in GiB, or in MiB where the largest is under a GiB.
struct ByteUnit {
  double bytes;
  const char* name;
  double of(std::uint64_t value) const { return static_cast<double>(value) / bytes; }
};
ByteUnit unit_for(std::uint64_t largest) {
  constexpr double kMiB = 1024.0 * 1024.0;
  return static_cast<double>(largest) >= 1024 * kMiB ? ByteUnit{1024 * kMiB, "GiB"} : ByteUnit{kMiB, "MiB"};
}

// ---- sections --------------------------------------------------------------------------------

std::string verdict_section(const std::optional<TraceAnalysis>& trace,
                            const std::optional<StatsView>& stats) {
  std::string out = R"(<section id="verdict"><h2>Verdict</h2>)";
  if (stats && !stats->verdict_text.empty()) {
    out += fmt::format(R"(<p class="verdict">{}</p><p class="note">cause: <code>{}</code></p>)",
                       escape(stats->verdict_text), escape(stats->verdict_cause));
  } else {
    out += missing("The verdict comes from the statistics file (stats_file, DEEPUM_STATS_FILE).");
  }
  std::string facts;
  if (stats) {
    facts += fmt::format("<li>{}; configuration: {}</li>", escape(stats->process), escape(stats->config));
    facts += fmt::format("<li>run {}; peak managed {}; resident limit {}; GPU {}</li>",
                         format_duration(stats->run_ns), format_bytes(stats->peak_managed_bytes),
                         format_bytes(stats->resident_limit_bytes), format_bytes(stats->device_total_bytes));
  }
  if (trace) {
    std::string device;
    if (auto it = trace->metadata.find("device_name"); it != trace->metadata.end())
      device = ", " + it->second;
    facts += fmt::format("<li>trace {}: {} launches over {}{}</li>", escape(trace->path), trace->launches,
                         format_duration(trace->span_ns), escape(device));
  }
  if (stats) facts += fmt::format("<li>statistics {}</li>", escape(stats->path));
  return out + "<ul>" + facts + "</ul></section>";
}

std::string residency_chart(const TraceAnalysis& a) {
  std::uint64_t top = a.limit_bytes;
  for (const ReportInterval& i : a.timeline) top = std::max({top, i.resident_max, i.estimated_max});
  const ByteUnit unit = unit_for(top);
  Chart chart("residency over time", 960, 280, seconds(a.span_ns), 0, unit.of(top) * 1.1);
  std::vector<std::pair<double, double>> resident, estimated;
  for (std::size_t k = 0; k < a.timeline.size(); ++k) {
    const double t = seconds(k * a.interval_ns);
    if (a.timeline[k].resident_max != 0) resident.emplace_back(t, unit.of(a.timeline[k].resident_max));
    if (a.timeline[k].estimated_max != 0) estimated.emplace_back(t, unit.of(a.timeline[k].estimated_max));
  }
  chart.polyline(resident, R"(stroke="#1f77b4" stroke-width="1.5")");
  chart.polyline(estimated, R"(stroke="#ff7f0e" stroke-width="1" stroke-dasharray="4 3")");
  if (a.limit_bytes != 0)
    chart.hline(unit.of(a.limit_bytes), R"(stroke="#d62728" stroke-dasharray="6 4")",
                "resident limit " + format_bytes(a.limit_bytes));
  return chart.svg("seconds from the trace's first record", std::string(unit.name) + " on the GPU") +
         legend({{"#1f77b4", "by the driver's migration records in time order"},
                 {"#ff7f0e", "deepum's live estimate"},
                 {"#d62728", "the resident limit"}});
}

std::string moves_chart(const TraceAnalysis& a) {
  std::uint64_t most = 0;
  for (const ReportInterval& i : a.timeline) most = std::max({most, i.to_gpu_bytes, i.to_host_bytes});
  const ByteUnit unit = unit_for(most);
  const double top = unit.of(most);
  Chart chart("moves over time", 960, 220, seconds(a.span_ns), -top * 1.1, top * 1.1);
  for (std::size_t k = 0; k < a.timeline.size(); ++k) {
    const double t0 = seconds(k * a.interval_ns), t1 = seconds((k + 1) * a.interval_ns);
    chart.bar(t0, t1, 0, unit.of(a.timeline[k].to_gpu_bytes), "#2ca02c");
    chart.bar(t0, t1, -unit.of(a.timeline[k].to_host_bytes), 0, "#9467bd");
  }
  return chart.svg("seconds", fmt::format("{} per {}", unit.name, format_duration(a.interval_ns))) +
         legend({{"#2ca02c", "to the GPU (up)"}, {"#9467bd", "to the host (down)"}});
}

std::string activity_chart(const TraceAnalysis& a) {
  Chart chart("GPU activity over time", 960, 200, seconds(a.span_ns), 0, 100);
  const auto percent = [&](Timestamp ns) {
    return std::min(100.0, 100.0 * static_cast<double>(ns) / static_cast<double>(a.interval_ns));
  };
  for (std::size_t k = 0; k < a.timeline.size(); ++k) {
    const double t0 = seconds(k * a.interval_ns), t1 = seconds((k + 1) * a.interval_ns);
    const double busy = percent(a.timeline[k].busy_ns);
    const double waited = std::min(100.0 - busy, percent(a.timeline[k].waited_ns));
    chart.bar(t0, t1, 0, busy, "#1f77b4");
    chart.bar(t0, t1, busy, busy + waited, "#ff7f0e");
  }
  return chart.svg("seconds", "% of each interval") +
         legend({{"#1f77b4", "kernels, copies and memsets running (summed over streams, at most 100%)"},
                 {"#ff7f0e", "waiting after work was runnable"}});
}

std::string residency_section(const std::optional<TraceAnalysis>& trace) {
  std::string out = R"(<section id="residency"><h2>Residency and moves over time</h2>)";
  if (!trace) return out + missing("Needs the trace file (trace_file, DEEPUM_TRACE_FILE).") + "</section>";
  if (trace->timeline.empty()) return out + missing("The trace holds no timed records.") + "</section>";
  if (!trace->residency.error.empty()) {
    out += missing("Residency was not replayed: " + trace->residency.error);
  } else if (trace->migrations == 0) {
    out += missing("The trace holds no migration records (tracing full records them): no residency to draw.");
  } else {
    out += residency_chart(*trace);
    out += fmt::format(R"(<p class="note">peak {} by the records in time order; over the limit {}</p>)",
                       format_bytes(trace->residency.peak_bytes),
                       format_duration(trace->residency.over_limit_ns));
  }
  if (trace->migrations != 0) out += moves_chart(*trace);
  return out + activity_chart(*trace) + "</section>";
}

// Horizontal bars: one row per figure, its length against the longest.
std::string bar_rows(const std::string& label,
                     const std::vector<std::tuple<std::string, double, std::string>>& rows, double of) {
  const double row = 26, width = 960, left = 330, right = 140;
  double top = of;
  for (const auto& r : rows) top = std::max(top, std::get<1>(r));
  std::string body;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& [name, value, color] = rows[i];
    const double y = 8 + row * static_cast<double>(i);
    const double length = top > 0 ? (width - left - right) * value / top : 0;
    body += fmt::format(R"(<text x="{:.0f}" y="{:.1f}" text-anchor="end">{}</text>)", left - 8, y + 15,
                        escape(name));
    body += fmt::format(R"(<rect x="{:.0f}" y="{:.1f}" width="{:.1f}" height="18" fill="{}"/>)", left, y,
                        std::max(length, 0.5), color);
    body += fmt::format(R"(<text x="{:.1f}" y="{:.1f}">{}{}</text>)", left + length + 6, y + 15,
                        number(value) + " s",
                        of > 0 ? fmt::format(" ({:.0f}%)", 100.0 * value / of) : std::string());
  }
  return fmt::format(R"(<svg class="chart" viewBox="0 0 {} {:.0f}" role="img" aria-label="{}">{}</svg>)",
                     width, 16 + row * static_cast<double>(rows.size()), escape(label), body);
}

std::string time_split_section(const std::optional<TraceAnalysis>& trace,
                               const std::optional<StatsView>& stats) {
  std::string out = R"(<section id="time-split"><h2>Where the time went</h2>)";
  const GpuTime* gpu = stats && stats->gpu.executions != 0 ? &stats->gpu : trace ? &trace->gpu : nullptr;
  const double run = stats ? seconds(stats->run_ns) : trace ? seconds(trace->span_ns) : 0;
  std::vector<std::tuple<std::string, double, std::string>> rows;
  rows.emplace_back(stats ? "the run (deepum's first hook to exit)" : "the trace (first to last record)", run,
                    "#7f7f7f");
  if (gpu != nullptr && gpu->executions != 0) {
    rows.emplace_back("GPU: kernels, copies, memsets ran", seconds(gpu->busy_ns), "#1f77b4");
    rows.emplace_back("GPU: waited after work was runnable", seconds(gpu->waited_ns), "#ff7f0e");
    rows.emplace_back("GPU: served page faults", seconds(gpu->fault_ns), "#d62728");
  }
  if (stats && stats->timed_launches) {
    rows.emplace_back("program thread: inside deepum", seconds(stats->callbacks_ns), "#8c564b");
    rows.emplace_back("... in the driver's move calls", seconds(stats->move_calls_ns), "#c49c94");
    rows.emplace_back("... copying swapped blocks back", seconds(stats->host_copy_back_ns), "#e377c2");
  }
  if (rows.size() == 1)
    return out + missing("Needs kernel records (tracing full) or the statistics file.") + "</section>";
  out += bar_rows("where the time went", rows, run);
  out +=
      R"(<p class="note">GPU figures are summed over streams (several streams can exceed the run). A wait )"
      R"(runs from the later of the launch call and the end of the work before it in its stream to the )"
      R"(start: a few microseconds natively, mostly deepum's moves under a resident limit.</p>)";
  return out + "</section>";
}

std::string kernel_stalls_section(const std::optional<TraceAnalysis>& trace) {
  std::string out = R"(<section id="kernel-stalls"><h2>Kernels that waited or faulted the most</h2>)";
  if (!trace) return out + missing("Needs the trace file (trace_file, DEEPUM_TRACE_FILE).") + "</section>";
  if (trace->kernels.empty()) return out + missing("The trace holds no kernel executions.") + "</section>";
  const double width = 960, left = 380, row = 22;
  double top = 0;
  for (const KernelCost& k : trace->kernels) top = std::max(top, seconds(k.stall_ns()));
  std::string body;
  for (std::size_t i = 0; i < trace->kernels.size(); ++i) {
    const KernelCost& k = trace->kernels[i];
    const double y = 6 + row * static_cast<double>(i);
    const double scale = top > 0 ? (width - left - 120) / top : 0;
    const double waited = seconds(k.waited_ns) * scale, faulted = seconds(k.fault_ns) * scale;
    body += fmt::format(R"(<text x="{:.0f}" y="{:.1f}" text-anchor="end">{}</text>)", left - 8, y + 13,
                        escape(shorten(k.name, 56)));
    body += fmt::format(R"(<rect x="{:.0f}" y="{:.1f}" width="{:.1f}" height="15" fill="#ff7f0e"/>)", left, y,
                        std::max(waited, 0.5));
    body += fmt::format(R"(<rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="15" fill="#d62728"/>)",
                        left + waited, y, faulted);
    body += fmt::format(R"(<text x="{:.1f}" y="{:.1f}">{}</text>)", left + waited + faulted + 6, y + 13,
                        format_duration(k.stall_ns()));
  }
  out += fmt::format(
      R"(<svg class="chart" viewBox="0 0 {} {:.0f}" role="img" aria-label="kernel stalls">{}</svg>)", width,
      12 + row * static_cast<double>(trace->kernels.size()), body);
  out += legend({{"#ff7f0e", "waited after runnable (before starting)"},
                 {"#d62728", "fault groups served while it ran"}});
  out +=
      "<table><tr><th>kernel</th><th>runs</th><th>ran</th><th>waited</th><th>faults</th><th>fault "
      "time</th></tr>";
  for (const KernelCost& k : trace->kernels) {
    out += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                       escape(k.name), k.executions, format_duration(k.busy_ns), format_duration(k.waited_ns),
                       k.faults, format_duration(k.fault_ns));
  }
  return out + "</table></section>";
}

std::string program_thread_section(const std::optional<StatsView>& stats) {
  std::string out = R"(<section id="program-thread"><h2>The program's thread in deepum, per launch</h2>)";
  if (!stats || !stats->timed_launches || stats->launch_callback.count == 0)
    return out + missing("Needs the statistics file of a traced run (stats_file, DEEPUM_STATS_FILE).") +
           "</section>";
  const LatencySummary& l = stats->launch_callback;
  double top = 0;
  for (const auto& [bound, count] : l.buckets) top = std::max(top, static_cast<double>(count));
  Chart chart("launch time histogram", 960, 240, static_cast<double>(l.buckets.size()), 0, top * 1.1);
  chart.hide_x_ticks();
  for (std::size_t i = 0; i < l.buckets.size(); ++i) {
    chart.bar(static_cast<double>(i) + 0.1, static_cast<double>(i) + 0.9, 0,
              static_cast<double>(l.buckets[i].second), "#8c564b");
    chart.add(fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="middle" class="note">&lt;{}</text>)",
                          chart.x(static_cast<double>(i) + 0.5), chart.y(0) + 16,
                          escape(format_duration(l.buckets[i].first))));
  }
  out += chart.svg("launches by time in deepum (bucket upper bounds)", "launches");
  out += fmt::format(R"(<p class="note">{} launches; median {}, p99 {}, most {}; in all {}</p>)", l.count,
                     format_duration(l.p50_ns), format_duration(l.p99_ns), format_duration(l.max_ns),
                     format_duration(l.total_ns));
  return out + "</section>";
}

std::string counters_section(const std::optional<StatsView>& stats) {
  std::string out = R"(<section id="counters"><h2>Every counter</h2>)";
  if (!stats)
    return out + missing("Needs the statistics file (stats_file, DEEPUM_STATS_FILE).") + "</section>";
  out += R"(<p class="note">Fields of the statistics file: docs/stats-format.md in deepum's sources.</p>)";
  out += "<table class=\"counters\"><tr><th>field</th><th>value</th></tr>";
  for (const auto& [path, value] : stats->fields)
    out += fmt::format("<tr><td><code>{}</code></td><td>{}</td></tr>", escape(path), escape(value));
  return out + "</table></section>";
}

constexpr std::string_view kStyle = R"(
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;max-width:1000px;margin:2em auto;padding:0 1em;color:#222}
h1{font-size:1.6em}h2{font-size:1.2em;border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:2em}
.verdict{font-size:1.15em;background:#fff8e5;border-left:4px solid #f0a500;padding:.6em .8em}
.missing{color:#777;font-style:italic}.note{color:#555;font-size:.9em}
svg.chart{width:100%;height:auto;font-size:11px;margin:.5em 0}svg .axis{stroke:#444}
svg text{fill:#333}.legend span{margin-right:1.5em;font-size:.9em}
.legend i{display:inline-block;width:.9em;height:.9em;margin-right:.4em;vertical-align:middle}
table{border-collapse:collapse;font-size:.85em}td,th{border-bottom:1px solid #eee;padding:2px 8px;text-align:left}
td:nth-child(n+2){text-align:right}table.counters td:nth-child(2){text-align:left}
)";

}  // namespace

std::string render_report_html(const std::optional<TraceAnalysis>& trace,
                               const std::optional<StatsView>& stats) {
  std::string title = "deepum report";
  if (stats && !stats->process.empty()) {
    title += ": " + stats->process;
  } else if (trace) {
    if (auto it = trace->metadata.find("command_line"); it != trace->metadata.end())
      title += ": " + it->second;
  }
  std::string html = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">";
  html += fmt::format("<title>{}</title><style>{}</style></head><body>", escape(shorten(title, 160)), kStyle);
  html += fmt::format("<h1>{}</h1>", escape(shorten(title, 160)));
  html += verdict_section(trace, stats);
  html += residency_section(trace);
  html += time_split_section(trace, stats);
  html += kernel_stalls_section(trace);
  html += program_thread_section(stats);
  html += counters_section(stats);
  return html + "</body></html>\n";
}

}  // namespace deepum::core
