#include "deepum/cuda/move_ranges.hpp"

#include <array>
#include <atomic>
#include <mutex>

#if __has_include(<nvtx3/nvToolsExt.h>)
#include <nvtx3/nvToolsExt.h>
#define DEEPUM_HAVE_NVTX 1
#endif

namespace deepum::cuda {

#ifdef DEEPUM_HAVE_NVTX
namespace {

constexpr auto kKinds = static_cast<std::size_t>(MoveRangeKind::count);
// Shown in Nsight Systems, with a colour each (ARGB).
constexpr std::array<const char*, kKinds> kNames = {
    "deepum: evict to host", "deepum: drop dead memory",  "deepum: prefetch to GPU",
    "deepum: place on GPU",  "deepum: copy swapped back", "deepum: evict (eviction thread)"};
constexpr std::array<std::uint32_t, kKinds> kColors = {0xFF9467BD, 0xFF7F7F7F, 0xFF2CA02C,
                                                       0xFF17BECF, 0xFFE377C2, 0xFF8C564B};

std::atomic<bool> g_started{false};
nvtxDomainHandle_t g_domain = nullptr;
std::array<nvtxStringHandle_t, kKinds> g_names{};

}  // namespace

bool start_move_ranges() noexcept {
  static std::once_flag once;
  std::call_once(once, [] {
    nvtxInitialize(nullptr);
    g_domain = nvtxDomainCreateA("deepum");
    for (std::size_t i = 0; i < kKinds; ++i) g_names[i] = nvtxDomainRegisterStringA(g_domain, kNames[i]);
    g_started.store(true, std::memory_order_release);
  });
  return true;
}

MoveRange::MoveRange(MoveRangeKind kind) noexcept : pushed_(g_started.load(std::memory_order_acquire)) {
  if (!pushed_) return;
  const auto index = static_cast<std::size_t>(kind);
  nvtxEventAttributes_t attributes{};
  attributes.version = NVTX_VERSION;
  attributes.size = static_cast<std::uint16_t>(sizeof(nvtxEventAttributes_t));
  attributes.colorType = NVTX_COLOR_ARGB;
  attributes.color = kColors[index];
  attributes.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  attributes.message.registered = g_names[index];
  nvtxDomainRangePushEx(g_domain, &attributes);
}

MoveRange::~MoveRange() {
  if (pushed_) nvtxDomainRangePop(g_domain);
}

#else

bool start_move_ranges() noexcept { return false; }
MoveRange::MoveRange(MoveRangeKind) noexcept {}
MoveRange::~MoveRange() = default;

#endif

}  // namespace deepum::cuda
