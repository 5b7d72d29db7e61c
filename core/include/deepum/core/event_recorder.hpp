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
};

}  // namespace deepum::core
