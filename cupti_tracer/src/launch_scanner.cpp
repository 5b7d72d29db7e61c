#include "deepum/cupti_tracer/launch_scanner.hpp"

#include <cuda.h>

#include <algorithm>
#include <bit>
#include <cstring>

namespace deepum::cupti_tracer {
namespace {

// The `extra` array's keys (cuda.h), as integers.
constexpr std::uintptr_t kExtraEnd = CU_LAUNCH_PARAM_END_AS_INT;
constexpr std::uintptr_t kExtraBufferPointer = CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT;
constexpr std::uintptr_t kExtraBufferSize = CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT;
// An `extra` array longer than this many name/value pairs is not one we understand.
constexpr std::size_t kMaxExtraPairs = 16;

constexpr std::size_t kWord = sizeof(std::uint64_t);

std::uint64_t mix64(std::uint64_t x) noexcept {  // splitmix64's finaliser
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

std::uint64_t combine(std::uint64_t hash, std::uint64_t value) noexcept {
  return mix64(hash ^ (value + 0x9e3779b97f4a7c15ULL + (hash << 6) + (hash >> 2)));
}

// Whether a freshly computed layout replaces the published one: a newer generation, or another
// try at one that was unknown.
bool supersedes(const ParamLayout& fresh, const ParamLayout& existing) noexcept {
  if (fresh.generation != existing.generation) return fresh.generation > existing.generation;
  return existing.status == LayoutStatus::unknown && fresh.attempts > existing.attempts;
}

std::uint64_t read_word(const unsigned char* at) noexcept {
  std::uint64_t word;
  std::memcpy(&word, at, kWord);
  return word;
}

}  // namespace

LayoutStatus build_param_layout(ParamInfoSource source, std::vector<ParamSlot>& out) {
  out.clear();
  if (source.query == nullptr) return LayoutStatus::unknown;
  std::size_t previous_end = 0;
  for (std::size_t index = 0; index < kMaxParamBytes; ++index) {
    std::size_t offset = 0;
    std::size_t size = 0;
    const ParamQuery answer = source.query(source.context, index, &offset, &size);
    if (answer == ParamQuery::past_end) return LayoutStatus::known;
    const bool plausible = answer == ParamQuery::ok && offset >= previous_end && size <= kMaxParamBytes &&
                           offset <= kMaxParamBytes - size;
    if (!plausible) return index == 0 ? LayoutStatus::unknown : LayoutStatus::known;
    out.push_back({static_cast<std::uint32_t>(offset), static_cast<std::uint32_t>(size)});
    previous_end = offset + size;
  }
  return LayoutStatus::known;
}

void PointerCollector::consider(std::uint64_t word) noexcept {
  if (word < bounds_.low || word >= bounds_.high) return;
  for (std::size_t i = 0; i < count_; ++i) {
    if (found_[i] == word) return;
  }
  ++lookups_;
  if (!managed_.contains(word)) return;
  if (count_ < kCapacity) {
    found_[count_++] = word;
  } else {
    ++overflow_;
  }
}

void scan_kernel_params(std::span<const ParamSlot> layout, const void* const* kernel_params,
                        PointerCollector& collector) noexcept {
  if (kernel_params == nullptr) return;
  for (std::size_t i = 0; i < layout.size(); ++i) {
    const ParamSlot slot = layout[i];
    if (slot.size < kWord) continue;
    const auto* bytes = static_cast<const unsigned char*>(kernel_params[i]);
    if (bytes == nullptr) continue;
    const std::size_t begin = slot.offset;
    const std::size_t end = begin + slot.size;
    // 8-byte aligned offsets of the device-side parameter buffer that lie inside this parameter.
    for (std::size_t at = (begin + kWord - 1) & ~(kWord - 1); at + kWord <= end; at += kWord) {
      collector.consider(read_word(bytes + (at - begin)));
    }
  }
}

void scan_packed_buffer(const void* buffer, std::size_t bytes, PointerCollector& collector) noexcept {
  if (buffer == nullptr) return;
  const auto* data = static_cast<const unsigned char*>(buffer);
  const std::size_t limit = std::min(bytes, kMaxParamBytes);
  for (std::size_t at = 0; at + kWord <= limit; at += kWord) collector.consider(read_word(data + at));
}

PackedArguments parse_launch_extra(const void* const* extra) noexcept {
  if (extra == nullptr) return {};
  const void* buffer = nullptr;
  const std::size_t* size = nullptr;
  for (std::size_t pair = 0; pair < kMaxExtraPairs; ++pair) {
    const auto key = reinterpret_cast<std::uintptr_t>(extra[2 * pair]);
    if (key == kExtraEnd) break;
    const void* value = extra[2 * pair + 1];
    if (key == kExtraBufferPointer) {
      buffer = value;
    } else if (key == kExtraBufferSize) {
      size = static_cast<const std::size_t*>(value);
    }
  }
  if (buffer == nullptr || size == nullptr) return {};
  return {buffer, *size};
}

std::uint64_t execution_key(std::uint64_t function, const std::array<std::uint32_t, 3>& grid,
                            const std::array<std::uint32_t, 3>& block,
                            std::span<const std::uint64_t> pointers, std::size_t overflow) noexcept {
  std::uint64_t hash = combine(0x243f6a8885a308d3ULL, function);
  for (std::uint32_t dim : grid) hash = combine(hash, dim);
  for (std::uint32_t dim : block) hash = combine(hash, dim);
  for (std::uint64_t pointer : pointers) hash = combine(hash, pointer);
  if (overflow != 0) hash = combine(hash, overflow);
  return hash;
}

ScanOutcome scan_launch(const LaunchArguments& args, const ParamLayout* layout, const ManagedLookup& managed,
                        core::KernelLaunch& launch, AllLaunchPointers* every) noexcept {
  launch.function = args.function;
  launch.stream = args.stream;
  launch.grid = args.grid;
  launch.block = args.block;

  ScanOutcome outcome;
  PointerCollector collector(managed);
  if (args.kernel_params != nullptr) {
    if (layout != nullptr && layout->status == LayoutStatus::known) {
      scan_kernel_params(layout->params, args.kernel_params, collector);
      outcome.path = ScanPath::kernel_params;
    } else {
      outcome.path = ScanPath::no_layout;
    }
  } else if (args.extra != nullptr) {
    const PackedArguments packed = parse_launch_extra(args.extra);
    if (packed.buffer != nullptr) {
      scan_packed_buffer(packed.buffer, packed.bytes, collector);
      outcome.path = ScanPath::packed_buffer;
    }
  }
  // Arguments given but not read: the kernel may reach memory no pointer here shows.
  launch.unnamed_memory =
      outcome.path == ScanPath::no_layout ||
      (args.kernel_params == nullptr && args.extra != nullptr && outcome.path == ScanPath::none);

  const std::span<const std::uint64_t> found = collector.found();
  const std::size_t kept = std::min(found.size(), core::KernelLaunch::kMaxPointers);
  std::copy_n(found.begin(), kept, launch.pointers.begin());
  std::fill(launch.pointers.begin() + static_cast<std::ptrdiff_t>(kept), launch.pointers.end(), 0);
  for (std::size_t i = 0; i < kept; ++i) launch.extents[i] = managed.buffer_bytes(launch.pointers[i]);
  std::fill(launch.extents.begin() + static_cast<std::ptrdiff_t>(kept), launch.extents.end(), 0);
  launch.pointer_count = static_cast<std::uint16_t>(kept);
  launch.pointers_truncated = found.size() > kept || collector.overflow() != 0;
  if (every != nullptr) {
    every->count = launch.pointers_truncated ? found.size() : 0;
    every->complete = collector.overflow() == 0;
    std::copy_n(found.begin(), every->count, every->pointers.begin());
    std::copy_n(launch.extents.begin(), kept, every->extents.begin());
    for (std::size_t i = kept; i < every->count; ++i)
      every->extents[i] = managed.buffer_bytes(every->pointers[i]);
  }
  launch.execution_key = execution_key(args.function, args.grid, args.block, found, collector.overflow());
  outcome.distinct_pointers = found.size() + collector.overflow();
  outcome.lookups = collector.lookups();
  return outcome;
}

// ---- LayoutCache ------------------------------------------------------------------------------

LayoutCache::LayoutCache(std::size_t capacity) {
  const std::size_t slots = std::bit_ceil(std::max<std::size_t>(capacity, 16));
  slots_ = std::make_unique<Slot[]>(slots);
  mask_ = slots - 1;
}

LayoutCache::~LayoutCache() = default;

std::size_t LayoutCache::home(std::uint64_t function) const noexcept {
  return static_cast<std::size_t>(mix64(function)) & mask_;
}

const ParamLayout* LayoutCache::find(std::uint64_t function) const noexcept {
  std::size_t index = home(function);
  for (std::size_t probe = 0; probe < kMaxProbes; ++probe, index = (index + 1) & mask_) {
    const std::uint64_t key = slots_[index].key.load(std::memory_order_acquire);
    if (key == function) return slots_[index].layout.load(std::memory_order_acquire);
    if (key == 0) break;
  }
  if (!overflow_used_.load(std::memory_order_acquire)) return nullptr;
  std::lock_guard lock(mutex_);
  auto it = overflow_.find(function);
  return it == overflow_.end() ? nullptr : it->second;
}

const ParamLayout* LayoutCache::put(std::unique_ptr<ParamLayout> layout) {
  layout->generation = generation();
  bool published = false;
  return publish(std::move(layout), published, /*replace=*/true);
}

const ParamLayout* LayoutCache::publish(std::unique_ptr<ParamLayout> fresh, bool& published, bool replace) {
  const std::uint64_t function = fresh->function;
  std::lock_guard lock(mutex_);
  // So the push_back below cannot throw after we commit; doubled, not grown by one, so that
  // publishing n layouts moves O(n) pointers, not O(n^2) (layouts are never freed).
  if (owned_.size() == owned_.capacity()) owned_.reserve(std::max<std::size_t>(64, 2 * owned_.capacity()));

  Slot* slot = nullptr;
  std::size_t index = home(function);
  for (std::size_t probe = 0; probe < kMaxProbes; ++probe, index = (index + 1) & mask_) {
    const std::uint64_t key = slots_[index].key.load(std::memory_order_relaxed);
    if (key == function || key == 0) {
      slot = &slots_[index];
      break;
    }
  }
  const bool in_table = slot != nullptr && slot->key.load(std::memory_order_relaxed) == function;
  const bool room = size_.load(std::memory_order_relaxed) < (mask_ + 1) / 4 * 3;

  if (in_table || (slot != nullptr && room && overflow_.count(function) == 0)) {
    const ParamLayout* existing = slot->layout.load(std::memory_order_relaxed);
    if (existing != nullptr && !replace && !supersedes(*fresh, *existing)) {
      published = false;
      return existing;
    }
    const ParamLayout* layout = fresh.get();
    owned_.push_back(std::move(fresh));
    slot->layout.store(layout, std::memory_order_release);
    if (!in_table) {
      slot->key.store(function, std::memory_order_release);  // after the layout: readers see both
      size_.fetch_add(1, std::memory_order_relaxed);
    }
    published = true;
    return layout;
  }

  // The table is full (or the probe sequence is): the overflow map, behind the mutex.
  auto it = overflow_.find(function);
  if (it != overflow_.end() && !replace && !supersedes(*fresh, *it->second)) {
    published = false;
    return it->second;
  }
  overflow_.reserve(overflow_.size() + 1);
  const ParamLayout* layout = fresh.get();
  owned_.push_back(std::move(fresh));
  if (it == overflow_.end()) size_.fetch_add(1, std::memory_order_relaxed);
  overflow_[function] = layout;
  overflow_used_.store(true, std::memory_order_release);
  published = true;
  return layout;
}

}  // namespace deepum::cupti_tracer
