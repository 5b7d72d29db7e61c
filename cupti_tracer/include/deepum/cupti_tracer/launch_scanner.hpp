// What a kernel launch's arguments point at: the scanner finds the managed pointers among a
// launch's argument bytes, and LayoutCache remembers each function's parameter layout.
//
// Arguments reach the driver in one of two forms:
// - kernelParams: parameter i is copied from kernelParams[i]; its size comes from the function's
//   layout (cuFuncGetParamInfo). Parameters smaller than 8 bytes cannot hold a pointer; larger ones
//   (structs) are read word by word at the 8-byte aligned offsets of the packed argument buffer
//   (a pointer member of a struct is 8-byte aligned there, since the struct is).
// - extra = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &size, END}: one
//   packed buffer, laid out as on the device. cuBLAS's nvjet GEMM kernels launch this way. The
//   whole buffer is read in 8-byte aligned words; no layout is needed.
// Every word inside a managed range counts, deduplicated, in order of first appearance.
//
// No CUDA headers: functions are opaque 64-bit ids, and the tests fabricate everything.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <unordered_map>
#include <vector>

#include "deepum/core/events.hpp"

namespace deepum::cupti_tracer {

// The most parameter bytes a kernel can take (CUDA 12.1+; 4 KiB before).
inline constexpr std::size_t kMaxParamBytes = 32764;

// ---- Parameter layouts ------------------------------------------------------------------------

struct ParamSlot {
  std::uint32_t offset = 0;
  std::uint32_t size = 0;
  friend bool operator==(const ParamSlot&, const ParamSlot&) = default;
};

enum class LayoutStatus : std::uint8_t {
  known,    // params holds every parameter (possibly none)
  unknown,  // the driver would not say (old driver, no cuFuncGetParamInfo, foreign handle)
};

// Which driver call gave the layout.
enum class LayoutSource : std::uint8_t { none, function, kernel, graph };

struct ParamLayout {
  std::uint64_t function = 0;
  std::uint64_t generation = 0;  // LayoutCache generation it was computed in
  std::uint32_t attempts = 1;    // computations so far in this generation (unknown ones are retried)
  LayoutStatus status = LayoutStatus::unknown;
  LayoutSource source = LayoutSource::none;
  std::vector<ParamSlot> params;
  // Set by the first launch that reports the function's name (see FunctionLayouts::first_launch).
  mutable std::atomic<bool> named{false};
};

enum class ParamQuery : std::uint8_t {
  ok,        // offset and size filled
  past_end,  // no parameter with this index (CUDA_ERROR_INVALID_VALUE)
  failed,    // any other error
};

// Parameter i of one function: cuFuncGetParamInfo or cuKernelGetParamInfo behind a pointer.
struct ParamInfoSource {
  void* context = nullptr;
  ParamQuery (*query)(void* context, std::size_t index, std::size_t* offset,
                      std::size_t* size) noexcept = nullptr;
};

// Queries parameters 0, 1, 2, ... until the source says past_end or failed, or a parameter is
// implausible (overlaps the previous one, or ends past kMaxParamBytes): the layout ends there.
// unknown only when not even parameter 0 could be asked about (failed, or no source).
LayoutStatus build_param_layout(ParamInfoSource source, std::vector<ParamSlot>& out);

// ---- Managed pointers -------------------------------------------------------------------------

// [low, high): every managed range lies inside; words outside are rejected without a lookup.
struct AddressBounds {
  std::uint64_t low = 0x10000;                  // below: small integers, null
  std::uint64_t high = std::uint64_t{1} << 57;  // above: not a user-space address
};

// "Is this word a managed pointer?" In production: ManagedRegistry::find_containing.
class ManagedLookup {
 public:
  virtual ~ManagedLookup() = default;
  // Called on the application thread for each candidate word of each launch: thread-safe, no
  // allocation, no CUDA call.
  virtual bool contains(std::uint64_t address) const noexcept = 0;
  // Asked once per launch. Tighter bounds (lowest base, highest end of the live ranges) skip most
  // lookups; the default only excludes what cannot be a user pointer.
  virtual AddressBounds bounds() const noexcept { return {}; }
  // Bytes from `address` to the end of the buffer holding it, where the program's allocator says
  // (see core::LiveBuffers); 0 unknown. Asked once per pointer kept.
  virtual std::uint64_t buffer_bytes(std::uint64_t /*address*/) const noexcept { return 0; }
};

// Collects distinct managed pointers in order of first appearance, without allocating.
class PointerCollector {
 public:
  // Distinct pointers remembered (for dedupe, the key, and the evictor): a foreach kernel's tensor
  // lists hold up to 150 (PyTorch's multi_tensor_apply: 30 tensors in each of 5 lists).
  static constexpr std::size_t kCapacity = 256;

  explicit PointerCollector(const ManagedLookup& managed) noexcept
      : managed_(managed), bounds_(managed.bounds()) {}

  void consider(std::uint64_t word) noexcept;
  std::span<const std::uint64_t> found() const noexcept { return {found_.data(), count_}; }
  // More distinct pointers than kCapacity were seen (the extras are lost, and hashed as a count).
  std::size_t overflow() const noexcept { return overflow_; }
  std::size_t lookups() const noexcept { return lookups_; }

 private:
  const ManagedLookup& managed_;
  AddressBounds bounds_;
  std::array<std::uint64_t, kCapacity> found_{};
  std::size_t count_ = 0;
  std::size_t overflow_ = 0;
  std::size_t lookups_ = 0;
};

// Reads every 8-byte word of the parameters in `layout`, parameter i from kernel_params[i].
void scan_kernel_params(std::span<const ParamSlot> layout, const void* const* kernel_params,
                        PointerCollector& collector) noexcept;
// Reads every 8-byte aligned word of a packed argument buffer (at most kMaxParamBytes).
void scan_packed_buffer(const void* buffer, std::size_t bytes, PointerCollector& collector) noexcept;

// The packed buffer of a launch's `extra` array, if it names one.
struct PackedArguments {
  const void* buffer = nullptr;
  std::size_t bytes = 0;
};
// nullopt-like: buffer == nullptr when `extra` is null or holds no BUFFER_POINTER/BUFFER_SIZE.
PackedArguments parse_launch_extra(const void* const* extra) noexcept;

// execution_key: stable across iterations of the same step. Hash of the function, the grid and
// block shapes, and the managed pointer values in order.
std::uint64_t execution_key(std::uint64_t function, const std::array<std::uint32_t, 3>& grid,
                            const std::array<std::uint32_t, 3>& block,
                            std::span<const std::uint64_t> pointers, std::size_t overflow = 0) noexcept;

// One launch as the callback sees it.
struct LaunchArguments {
  std::uint64_t function = 0;
  std::uint64_t stream = 0;
  std::array<std::uint32_t, 3> grid{};
  std::array<std::uint32_t, 3> block{};
  const void* const* kernel_params = nullptr;
  const void* const* extra = nullptr;
};

enum class ScanPath : std::uint8_t {
  none,           // no arguments given
  kernel_params,  // scanned through the layout
  packed_buffer,  // scanned the extra buffer
  no_layout,      // kernel_params given but the layout is unknown: nothing scanned
};

struct ScanOutcome {
  ScanPath path = ScanPath::none;
  std::size_t distinct_pointers = 0;  // including those past KernelLaunch::kMaxPointers
  std::size_t lookups = 0;            // ManagedLookup::contains calls
};

// Every pointer a scan found, where there are more than KernelLaunch keeps (see
// core::LaunchPointers): filled on the launching thread, read during its callback.
struct AllLaunchPointers {
  std::array<std::uint64_t, PointerCollector::kCapacity> pointers{}, extents{};
  std::size_t count = 0;  // 0: the launch keeps them all
  bool complete = false;
  core::LaunchPointers view() const { return {pointers.data(), extents.data(), count, complete}; }
};

// Fills launch.function/stream/grid/block/pointers/pointer_count/pointers_truncated/unnamed_memory/
// execution_key, and `every` (if given) where the launch holds more pointers than it keeps.
// Leaves correlation_id and host_time alone. `layout` may be null (= unknown).
ScanOutcome scan_launch(const LaunchArguments& args, const ParamLayout* layout, const ManagedLookup& managed,
                        core::KernelLaunch& launch, AllLaunchPointers* every = nullptr) noexcept;

// ---- Layout cache -----------------------------------------------------------------------------

// CUfunction -> ParamLayout. Lookups of a cached function are lock-free (an open-addressing table
// of atomic slots, probed without locks); a miss computes the layout outside any lock and
// publishes it under a mutex. Layouts are immutable once published and live as long as the cache,
// so a pointer from get() stays valid. invalidate_all() (module unload: a handle may be reused for
// another function) makes every layout stale; each is recomputed at its next launch. An unknown
// layout is recomputed at the next launches, up to kMaxAttempts computations (a lazily loaded
// function may answer only once the driver has loaded it).
class LayoutCache {
 public:
  explicit LayoutCache(std::size_t capacity = 16384);
  LayoutCache(const LayoutCache&) = delete;
  LayoutCache& operator=(const LayoutCache&) = delete;
  ~LayoutCache();

  static constexpr std::uint32_t kMaxAttempts = 4;

  struct Lookup {
    const ParamLayout* layout = nullptr;  // null only for function 0
    bool computed = false;                // this call computed and published it
    bool first_sight = false;  // ... and it is the first layout of this function (in this generation)
  };

  // `compute(ParamLayout&)` fills status, source and params; it may throw (then nothing is cached).
  template <typename Compute>
  Lookup get(std::uint64_t function, Compute&& compute);
  // The layout published for `function`, current or stale; nullptr: none. Lock-free.
  const ParamLayout* find(std::uint64_t function) const noexcept;
  // Publishes `layout` for `function`, replacing whatever was there (the handle now names the
  // function `layout` describes). Returns what is published.
  const ParamLayout* put(std::unique_ptr<ParamLayout> layout);

  void invalidate_all() noexcept { generation_.fetch_add(1, std::memory_order_acq_rel); }
  std::uint64_t generation() const noexcept { return generation_.load(std::memory_order_acquire); }
  // Functions with a layout, current or stale.
  std::size_t size() const noexcept { return size_.load(std::memory_order_relaxed); }
  std::size_t capacity() const noexcept { return mask_ + 1; }

 private:
  struct Slot {
    std::atomic<std::uint64_t> key{0};
    std::atomic<const ParamLayout*> layout{nullptr};
  };
  static constexpr std::size_t kMaxProbes = 64;

  // Publishes `fresh` unless a current layout got there first (or, with `replace`, always);
  // returns what is published.
  const ParamLayout* publish(std::unique_ptr<ParamLayout> fresh, bool& published, bool replace = false);
  std::size_t home(std::uint64_t function) const noexcept;

  std::unique_ptr<Slot[]> slots_;
  std::size_t mask_ = 0;
  std::atomic<std::uint64_t> generation_{1};
  std::atomic<std::size_t> size_{0};
  std::atomic<bool> overflow_used_{false};
  mutable std::mutex mutex_;  // guards owned_, overflow_ and slot insertion
  std::vector<std::unique_ptr<ParamLayout>> owned_;
  std::unordered_map<std::uint64_t, const ParamLayout*> overflow_;  // when the table is full
};

template <typename Compute>
LayoutCache::Lookup LayoutCache::get(std::uint64_t function, Compute&& compute) {
  if (function == 0) return {};
  const std::uint64_t current = generation();
  const ParamLayout* cached = find(function);
  const bool current_cached = cached != nullptr && cached->generation == current;
  if (current_cached && (cached->status == LayoutStatus::known || cached->attempts >= kMaxAttempts)) {
    return {cached, false, false};
  }
  auto fresh = std::make_unique<ParamLayout>();
  fresh->function = function;
  fresh->generation = current;
  fresh->attempts = current_cached ? cached->attempts + 1 : 1;
  compute(*fresh);
  const std::uint32_t attempts = fresh->attempts;
  bool published = false;
  const ParamLayout* layout = publish(std::move(fresh), published);
  return {layout, published, published && attempts == 1};
}

}  // namespace deepum::cupti_tracer
