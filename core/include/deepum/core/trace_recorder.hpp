// TraceRecorder: writes everything the worker handles to the two trace files of `trace_file`:
// PREFIX.dtrace (compact, replayable) and PREFIX.perfetto.json (for people). Worker thread only.
#pragma once

#include <string>

#include "deepum/core/event_recorder.hpp"
#include "deepum/core/output_file.hpp"  // expand_process_id, for the trace_file prefix
#include "deepum/core/perfetto_writer.hpp"
#include "deepum/core/trace_file.hpp"

namespace deepum::core {

class TraceRecorder final : public EventRecorder {
 public:
  // Opens both files; an empty string on success, else why not (deepum then traces to no file).
  std::string open(const std::string& prefix, const TraceMetadata& metadata);
  // Ends both files properly (end record, closing brackets). Returns what went wrong, if anything.
  std::string finish();

  void function_name(std::uint64_t function, std::string_view name) override;
  void launch(const KernelLaunch& launch) override;
  void execution(const KernelExecution& execution) override;
  void fault(const PageFault& fault) override;
  void migration(const Migration& migration) override;
  void range(const RangeEvent& range) override;
  void hint(const Hint& hint) override;
  void resident(const ResidentSample& sample) override;
  // The compact trace only: the Perfetto JSON shows launches and copies already.
  void launch_operands(const LaunchOperands& operands) override;
  void copy_launch(const CopyLaunch& copy) override;
  void buffer_event(const BufferEvent& buffer) override;

  const std::string& compact_path() const { return compact_path_; }
  const std::string& perfetto_path() const { return perfetto_path_; }

 private:
  template <typename Event>
  void write_both(const Event& event) {
    compact_.write(event);
    perfetto_.write(event);
  }

  TraceWriter compact_;
  PerfettoJsonWriter perfetto_;
  std::string compact_path_;
  std::string perfetto_path_;
};

}  // namespace deepum::core
