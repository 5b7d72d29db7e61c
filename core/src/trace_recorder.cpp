#include "deepum/core/trace_recorder.hpp"

namespace deepum::core {

std::string TraceRecorder::open(const std::string& prefix, const TraceMetadata& metadata) {
  compact_path_ = prefix + ".dtrace";
  perfetto_path_ = prefix + ".perfetto.json";
  if (!compact_.open(compact_path_)) return compact_.error();
  compact_.write_metadata(metadata);
  if (!perfetto_.open(perfetto_path_)) return perfetto_.error();
  perfetto_.set_metadata(metadata);
  return {};
}

std::string TraceRecorder::finish() {
  std::string errors;
  if (!compact_.finish()) errors += compact_.error();
  if (!perfetto_.finish()) errors += (errors.empty() ? "" : "; ") + perfetto_.error();
  return errors;
}

void TraceRecorder::function_name(std::uint64_t function, std::string_view name) {
  compact_.define_function(function, name);
  perfetto_.define_function(function, name);
}

void TraceRecorder::launch(const KernelLaunch& launch) { write_both(launch); }
void TraceRecorder::execution(const KernelExecution& execution) { write_both(execution); }
void TraceRecorder::fault(const PageFault& fault) { write_both(fault); }
void TraceRecorder::migration(const Migration& migration) { write_both(migration); }
void TraceRecorder::range(const RangeEvent& range) { write_both(range); }
void TraceRecorder::hint(const Hint& hint) { write_both(hint); }
void TraceRecorder::resident(const ResidentSample& sample) { write_both(sample); }
void TraceRecorder::launch_operands(const LaunchOperands& operands) { compact_.write(operands); }
void TraceRecorder::copy_launch(const CopyLaunch& copy) { compact_.write(copy); }
void TraceRecorder::buffer_event(const BufferEvent& buffer) { write_both(buffer); }

}  // namespace deepum::core
