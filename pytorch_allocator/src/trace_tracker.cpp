#include "deepum/pytorch_allocator/trace_tracker.hpp"

#include <dlfcn.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <optional>
#include <sstream>

#include "deepum/config/file_read.hpp"
#include "deepum/pytorch_allocator/elf_symbols.hpp"

namespace deepum::pytorch_allocator {
namespace {

// std::atomic<CUDAAllocator*> c10::cuda::CUDACachingAllocator::allocator, exported by libc10_cuda.so.
constexpr const char* kAllocatorSymbol = "_ZN3c104cuda20CUDACachingAllocator9allocatorE";
// NativeCachingAllocator::attachAllocatorTraceTracker(std::function<void(const
// c10::CachingDeviceAllocator::TraceEntry&)>): a local symbol, in the library's .symtab only.
constexpr const char* kAttachSymbol =
    "_ZN3c104cuda20CUDACachingAllocator6Native22NativeCachingAllocator27attachAllocatorTraceTrackerESt8functi"
    "onIF"
    "vRKNS_22CachingDeviceAllocator10TraceEntryEEE";
// How far into the vtable the method is looked for (it sits at slot 44 in 2.10 and 2.11).
constexpr std::size_t kVtableSlotsSearched = 128;

// c10::CachingDeviceAllocator::TraceEntry in PyTorch 2.10 and 2.11 (136 bytes), read by offset:
// Action action_ @0 (int), DeviceIndex device_ @4 (int8), size_t addr_ @8, shared_ptr context_
// @16, void* stream_ @32, size_t size_ @40, MempoolId_t mempool_ @48 (two unsigned long long).
struct TraceEntryLayout {
  static constexpr std::size_t kAction = 0, kDevice = 4, kAddress = 8, kStream = 32, kSize = 40,
                               kMempool = 48;
  static constexpr int kAlloc = 0, kFreeCompleted = 2;
};

template <typename T>
T field(const void* entry, std::size_t offset) {
  T value{};
  std::memcpy(&value, static_cast<const char*>(entry) + offset, sizeof(T));
  return value;
}

// The opaque TraceEntry the allocator passes; only ever read through field().
struct OpaqueTraceEntry;
using Tracker = std::function<void(const OpaqueTraceEntry&)>;
// A virtual member taking std::function by value: under the Itanium C++ ABI the caller passes the
// address of a temporary it owns and destroys.
using AttachFn = void (*)(void* self, Tracker* tracker);

std::string read_torch_version(const std::string& library_path) {
  constexpr std::size_t kMaxVersionFileBytes = 64 * 1024;  // PyTorch's is a few hundred bytes
  const std::string dir = library_path.substr(0, library_path.rfind('/'));
  std::string error;
  const std::optional<std::string> text =
      config::read_regular_file(dir + "/../version.py", kMaxVersionFileBytes, error);
  if (!text) return {};
  std::istringstream file(*text);
  std::string line;
  while (std::getline(file, line)) {
    if (line.rfind("__version__", 0) != 0) continue;
    const auto open = line.find_first_of("'\"");
    const auto close = line.find_last_of("'\"");
    if (open != std::string::npos && close > open) return line.substr(open + 1, close - open - 1);
  }
  return {};
}

}  // namespace

bool known_trace_entry_layout(const std::string& version) {
  return version.rfind("2.10.", 0) == 0 || version.rfind("2.11.", 0) == 0 || version == "2.10" ||
         version == "2.11";
}

AttachResult attach_block_tracker(BlockEventHandler handler, void* (*lookup)(const char* name)) {
  AttachResult result;
  void* allocator_variable = lookup != nullptr ? lookup(kAllocatorSymbol) : nullptr;
  if (allocator_variable == nullptr) return result;  // not_pytorch
  Dl_info info{};
  if (dladdr(allocator_variable, &info) == 0 || info.dli_fname == nullptr) {
    result.outcome = AttachResult::Outcome::unsupported;
    result.detail = "cannot tell which library holds PyTorch's allocator";
    return result;
  }
  const std::string library = info.dli_fname;
  const std::string version = read_torch_version(library);
  if (!known_trace_entry_layout(version)) {
    result.outcome = AttachResult::Outcome::unsupported;
    result.detail = "PyTorch " + (version.empty() ? std::string("of unknown version") : version) +
                    ": its allocator trace entries are read only for 2.10 and 2.11";
    return result;
  }
  auto* allocator = static_cast<std::atomic<void*>*>(allocator_variable)->load(std::memory_order_acquire);
  if (allocator == nullptr) {
    result.outcome = AttachResult::Outcome::not_ready;
    result.detail = "PyTorch " + version + " has not created its CUDA allocator yet";
    return result;
  }
  const SymbolLookup attach = find_symbol(library, kAttachSymbol);
  if (!attach.value) {
    result.outcome = AttachResult::Outcome::unsupported;
    result.detail = "PyTorch " + version + ": " + attach.error;
    return result;
  }
  const auto method = reinterpret_cast<std::uintptr_t>(info.dli_fbase) + *attach.value;
  void* const* vtable = *static_cast<void* const* const*>(allocator);
  std::size_t slot = 0;
  while (slot < kVtableSlotsSearched && reinterpret_cast<std::uintptr_t>(vtable[slot]) != method) ++slot;
  if (slot == kVtableSlotsSearched) {
    result.outcome = AttachResult::Outcome::unsupported;
    result.detail = "PyTorch " + version +
                    ": the CUDA allocator is not the native caching allocator (PYTORCH_CUDA_ALLOC_CONF "
                    "backend?)";
    return result;
  }
  Tracker tracker = [handler = std::move(handler)](const OpaqueTraceEntry& entry) {
    const void* raw = &entry;
    const int action = field<int>(raw, TraceEntryLayout::kAction);
    if (action != TraceEntryLayout::kAlloc && action != TraceEntryLayout::kFreeCompleted) return;
    // Blocks of private pools (CUDA graphs) follow the graph's own lifetime rules: left alone.
    const auto pool_first = field<std::uint64_t>(raw, TraceEntryLayout::kMempool);
    const auto pool_second = field<std::uint64_t>(raw, TraceEntryLayout::kMempool + 8);
    if (pool_first != 0 || pool_second != 0) return;
    BlockEvent event;
    event.kind = action == TraceEntryLayout::kAlloc ? BlockEvent::Kind::handed_out
                                                    : BlockEvent::Kind::returned_to_cache;
    event.address = field<std::uint64_t>(raw, TraceEntryLayout::kAddress);
    event.bytes = field<std::uint64_t>(raw, TraceEntryLayout::kSize);
    event.stream = field<void*>(raw, TraceEntryLayout::kStream);
    event.device = field<std::int8_t>(raw, TraceEntryLayout::kDevice);
    try {
      handler(event);
    } catch (...) {
      // Never let an exception into PyTorch's allocator.
    }
  };
  reinterpret_cast<AttachFn>(vtable[slot])(allocator, &tracker);
  result.outcome = AttachResult::Outcome::attached;
  result.detail = "PyTorch " + version + " (" + library + ", vtable slot " + std::to_string(slot) + ")";
  return result;
}

}  // namespace deepum::pytorch_allocator
