#include "deepum/core/capture_gate.hpp"

namespace deepum::core {

CaptureGate& capture_gate() noexcept {
  static CaptureGate gate;  // constant-initialised: usable from any hook, even during exit
  return gate;
}

}  // namespace deepum::core
