#include "deepum/sim/timeline.hpp"

#include <nlohmann/json.hpp>

namespace deepum::sim {

namespace {

using Json = nlohmann::json;

// The tracks of deepum's own traces: the GPU process, its first stream, a lane of the copies out
// and the discard stream that copies back.
constexpr int kGpuPid = 1;
constexpr int kOperationTid = 10, kToHostTid = 12, kToGpuTid = 14;

double microseconds(Nanoseconds ns) { return static_cast<double>(ns) / 1e3; }

std::string operation_name(const Workload& workload, const KernelStep& step) {
  switch (step.operation) {
    case core::GpuOperation::memcpy:
      return "memcpy (the program's)";
    case core::GpuOperation::memset:
      return "memset";
    case core::GpuOperation::kernel:
      break;
  }
  const auto it = workload.function_names.find(step.function);
  return it != workload.function_names.end() ? it->second : "kernel " + std::to_string(step.function);
}

Json thread_name(int tid, const char* name) {
  return {{"name", "thread_name"}, {"ph", "M"},  {"ts", 0},
          {"pid", kGpuPid},        {"tid", tid}, {"args", {{"name", name}}}};
}

}  // namespace

std::string timeline_json(const Workload& workload, const std::vector<TimelineEvent>& timeline) {
  Json events = Json::array();
  events.push_back({{"name", "process_name"},
                    {"ph", "M"},
                    {"ts", 0},
                    {"pid", kGpuPid},
                    {"args", {{"name", "GPU (deepum-sim)"}}}});
  events.push_back(thread_name(kOperationTid, "the program's operations"));
  events.push_back(thread_name(kToHostTid, "moves to the host"));
  events.push_back(thread_name(kToGpuTid, "moves to the GPU"));
  for (const TimelineEvent& e : timeline) {
    Json event = {
        {"ph", "X"}, {"pid", kGpuPid}, {"ts", microseconds(e.start)}, {"dur", microseconds(e.end - e.start)}};
    if (e.kind == TimelineEvent::Kind::operation) {
      event["name"] = operation_name(workload, workload.kernels[e.kernel]);
      event["tid"] = kOperationTid;
      event["args"] = {{"operation", e.kernel}};
    } else {
      const bool to_gpu = e.kind == TimelineEvent::Kind::to_gpu;
      const char* kind = to_gpu ? "HtoD" : "DtoH";
      event["name"] = std::string("memcpy ") + kind;
      event["tid"] = to_gpu ? kToGpuTid : kToHostTid;
      event["args"] = {{"kind", kind}, {"bytes", e.bytes}, {"decided_before_operation", e.kernel}};
    }
    events.push_back(std::move(event));
  }
  return Json{{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}}.dump() + "\n";
}

}  // namespace deepum::sim
