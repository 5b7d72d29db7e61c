// EventRecorder: where the worker sends every event it handles, for trace files. Called from the
// worker thread only.
#pragma once

#include <string_view>

#include "deepum/core/events.hpp"

namespace deepum::core {

class EventRecorder {
 public:
  virtual ~EventRecorder() = default;
  virtual void function_name(std::uint64_t function, std::string_view name) = 0;
  virtual void launch(const KernelLaunch& launch) = 0;
  virtual void execution(const KernelExecution& execution) = 0;
  virtual void fault(const PageFault& fault) = 0;
  virtual void migration(const Migration& migration) = 0;
  virtual void range(const RangeEvent& range) = 0;
  virtual void hint(const Hint& hint) = 0;
  virtual void resident(const ResidentSample& sample) = 0;
  // What the simulator replays launch-ordered residency from: every operand of a launch, the
  // copies and memsets naming managed memory, and the program's allocator handing buffers out
  // and taking them back.
  virtual void launch_operands(const LaunchOperands& operands) = 0;
  virtual void copy_launch(const CopyLaunch& copy) = 0;
  virtual void buffer_event(const BufferEvent& buffer) = 0;
};

}  // namespace deepum::core
