// The launch scanner: parameter layouts, finding managed pointers among fabricated kernel
// arguments (kernelParams and packed `extra` buffers), execution keys, and the layout cache.
#include <cuda.h>
#include <doctest/doctest.h>
#include <sys/mman.h>

#include <array>
#include <atomic>
#include <cstring>
#include <thread>
#include <utility>
#include <vector>

#include "deepum/core/live_buffers.hpp"
#include "deepum/core/stream_id.hpp"
#include "deepum/cupti_tracer/copy_call.hpp"
#include "deepum/cupti_tracer/launch_scanner.hpp"

using namespace deepum;
using namespace deepum::cupti_tracer;

namespace {

// Managed ranges as [base, base + bytes), plus a count of lookups.
class FakeManaged final : public ManagedLookup {
 public:
  explicit FakeManaged(std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges)
      : ranges_(std::move(ranges)) {}
  bool contains(std::uint64_t address) const noexcept override {
    lookups_.fetch_add(1, std::memory_order_relaxed);
    for (const auto& [base, bytes] : ranges_) {
      if (address - base < bytes) return true;
    }
    return false;
  }
  AddressBounds bounds() const noexcept override { return bounds_; }
  std::uint64_t buffer_bytes(std::uint64_t address) const noexcept override {
    return buffers != nullptr ? buffers->bytes_from(address) : 0;
  }
  void set_bounds(AddressBounds bounds) { bounds_ = bounds; }
  const deepum::core::LiveBuffers* buffers = nullptr;
  std::size_t lookups() const { return lookups_.load(); }

 private:
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges_;
  AddressBounds bounds_{};
  mutable std::atomic<std::size_t> lookups_{0};
};

constexpr std::uint64_t kManagedA = 0x7f1000000000;  // 1 GiB managed range
constexpr std::uint64_t kManagedB = 0x7f2000000000;  // 64 MiB managed range
constexpr std::uint64_t kDevice = 0x7f3000000000;    // plain device memory: not ours

FakeManaged managed_ranges() { return FakeManaged({{kManagedA, 1ull << 30}, {kManagedB, 64ull << 20}}); }

// A fabricated parameter layout, answered like cuFuncGetParamInfo.
struct FakeParams {
  std::vector<ParamSlot> slots;
  std::size_t fail_at = SIZE_MAX;  // this index answers `failed`
  std::size_t calls = 0;
};

ParamQuery fake_query(void* context, std::size_t index, std::size_t* offset, std::size_t* size) noexcept {
  auto* params = static_cast<FakeParams*>(context);
  ++params->calls;
  if (index == params->fail_at) return ParamQuery::failed;
  if (index >= params->slots.size()) return ParamQuery::past_end;
  *offset = params->slots[index].offset;
  *size = params->slots[index].size;
  return ParamQuery::ok;
}

template <typename T>
void put(std::vector<unsigned char>& buffer, std::size_t offset, const T& value) {
  if (buffer.size() < offset + sizeof(T)) buffer.resize(offset + sizeof(T));
  std::memcpy(buffer.data() + offset, &value, sizeof(T));
}

void* extra_key(std::uintptr_t key) { return reinterpret_cast<void*>(key); }

struct Pair {  // a struct parameter holding a pointer after an int
  std::int32_t n;
  std::uint64_t pointer;
  std::uint64_t other;
};

}  // namespace

TEST_CASE("build_param_layout reads parameters until the driver says there are no more") {
  FakeParams params{{{0, 8}, {8, 4}, {16, 24}}};
  std::vector<ParamSlot> layout;
  CHECK(build_param_layout({&params, &fake_query}, layout) == LayoutStatus::known);
  CHECK(layout == params.slots);

  FakeParams none{};
  CHECK(build_param_layout({&none, &fake_query}, layout) == LayoutStatus::known);
  CHECK(layout.empty());
}

TEST_CASE("build_param_layout ends the layout where the driver fails or answers nonsense") {
  std::vector<ParamSlot> layout;
  FakeParams fails_first{{{0, 8}}, 0};
  CHECK(build_param_layout({&fails_first, &fake_query}, layout) == LayoutStatus::unknown);
  CHECK(layout.empty());

  FakeParams fails_later{{{0, 8}, {8, 8}, {16, 8}}, 2};
  CHECK(build_param_layout({&fails_later, &fake_query}, layout) == LayoutStatus::known);
  CHECK(layout.size() == 2);

  FakeParams overlapping{{{0, 8}, {4, 8}}};
  CHECK(build_param_layout({&overlapping, &fake_query}, layout) == LayoutStatus::known);
  CHECK(layout.size() == 1);

  FakeParams too_big{{{0, 8}, {8, kMaxParamBytes}}};
  CHECK(build_param_layout({&too_big, &fake_query}, layout) == LayoutStatus::known);
  CHECK(layout.size() == 1);

  CHECK(build_param_layout({}, layout) == LayoutStatus::unknown);
}

TEST_CASE("kernelParams: pointers found in 8-byte parameters and inside structs, small ones skipped") {
  FakeManaged managed = managed_ranges();
  // f(int n, float* a, float* dev, Pair p, float* a_again, short s, float* b)
  const std::int32_t n = 5;
  const std::uint64_t a = kManagedA + 0x100;
  const std::uint64_t dev = kDevice + 0x40;
  const Pair pair{7, kManagedB + 0x2000, 0};
  const std::uint64_t a_again = a;
  const std::int16_t s = 1;
  const std::uint64_t b = kManagedB;
  const std::vector<ParamSlot> layout = {{0, 4}, {8, 8}, {16, 8}, {24, 24}, {48, 8}, {56, 2}, {64, 8}};
  const void* args[] = {&n, &a, &dev, &pair, &a_again, &s, &b};

  PointerCollector collector(managed);
  scan_kernel_params(layout, args, collector);
  const auto found = collector.found();
  REQUIRE(found.size() == 3);
  CHECK(found[0] == a);
  CHECK(found[1] == kManagedB + 0x2000);  // the struct's member at +8
  CHECK(found[2] == b);                   // a_again was a duplicate
}

TEST_CASE("A parameter narrower than 8 bytes never yields a pointer, whatever its bits") {
  FakeManaged managed = managed_ranges();
  // A 4-byte parameter whose neighbour bytes would form a managed address if read as a word.
  const std::uint32_t low = static_cast<std::uint32_t>(kManagedA & 0xffffffffu);
  const std::vector<ParamSlot> layout = {{0, 4}};
  const void* args[] = {&low};
  PointerCollector collector(managed);
  scan_kernel_params(layout, args, collector);
  CHECK(collector.found().empty());
  CHECK(managed.lookups() == 0);
}

TEST_CASE("Struct parameters at 4-byte offsets are read at the buffer's 8-byte boundaries") {
  FakeManaged managed = managed_ranges();
  // f(int n, S s) with S = {int x; int y; uint64 ptr...} laid out from offset 4 with 4-byte alignment:
  // only absolute offsets 8 and 16 hold whole aligned words inside s (bytes [4, 28)).
  std::vector<unsigned char> s_bytes(24, 0);
  put<std::uint64_t>(s_bytes, 4, kManagedA + 8);  // absolute offset 8
  put<std::uint64_t>(s_bytes, 12, kManagedB);     // absolute offset 16
  const std::int32_t n = 1;
  const std::vector<ParamSlot> layout = {{0, 4}, {4, 24}};
  const void* args[] = {&n, s_bytes.data()};
  PointerCollector collector(managed);
  scan_kernel_params(layout, args, collector);
  const auto found = collector.found();
  REQUIRE(found.size() == 2);
  CHECK(found[0] == kManagedA + 8);
  CHECK(found[1] == kManagedB);
}

TEST_CASE("Null kernelParams entries and null arrays are skipped") {
  FakeManaged managed = managed_ranges();
  const std::uint64_t a = kManagedA;
  const std::vector<ParamSlot> layout = {{0, 8}, {8, 8}};
  const void* args[] = {nullptr, &a};
  PointerCollector collector(managed);
  scan_kernel_params(layout, args, collector);
  CHECK(collector.found().size() == 1);
  scan_kernel_params(layout, nullptr, collector);
  CHECK(collector.found().size() == 1);
}

TEST_CASE("Packed `extra` buffers (cuBLAS nvjet style) are scanned whole, word by word") {
  FakeManaged managed = managed_ranges();
  std::vector<unsigned char> buffer(200, 0);
  put<std::uint64_t>(buffer, 0, kManagedA);         // A
  put<std::uint64_t>(buffer, 8, kDevice);           // workspace: not managed
  put<std::uint32_t>(buffer, 16, 1024);             // m
  put<std::uint32_t>(buffer, 20, 1024);             // n
  put<std::uint64_t>(buffer, 64, kManagedB + 16);   // B deep inside a descriptor struct
  put<std::uint64_t>(buffer, 192, kManagedA + 64);  // C, last word
  std::size_t size = buffer.size();
  void* extra[] = {extra_key(CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT), buffer.data(),
                   extra_key(CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT), &size,
                   extra_key(CU_LAUNCH_PARAM_END_AS_INT)};

  const PackedArguments packed = parse_launch_extra(extra);
  CHECK(packed.buffer == buffer.data());
  CHECK(packed.bytes == 200);

  PointerCollector collector(managed);
  scan_packed_buffer(packed.buffer, packed.bytes, collector);
  const auto found = collector.found();
  REQUIRE(found.size() == 3);
  CHECK(found[0] == kManagedA);
  CHECK(found[1] == kManagedB + 16);
  CHECK(found[2] == kManagedA + 64);
}

TEST_CASE("parse_launch_extra: either order, and nothing without both pointer and size") {
  unsigned char buffer[16] = {};
  std::size_t size = sizeof(buffer);
  void* size_first[] = {extra_key(CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT), &size,
                        extra_key(CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT), buffer, nullptr};
  CHECK(parse_launch_extra(size_first).buffer == buffer);
  CHECK(parse_launch_extra(size_first).bytes == sizeof(buffer));

  void* no_size[] = {extra_key(CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT), buffer, nullptr};
  CHECK(parse_launch_extra(no_size).buffer == nullptr);
  void* empty[] = {nullptr};
  CHECK(parse_launch_extra(empty).buffer == nullptr);
  CHECK(parse_launch_extra(nullptr).buffer == nullptr);
}

TEST_CASE("Packed buffers: a trailing partial word is not read, and the scan stops at the param limit") {
  FakeManaged managed = managed_ranges();
  std::vector<unsigned char> buffer(kMaxParamBytes + 64, 0);
  put<std::uint64_t>(buffer, 8, kManagedA);
  put<std::uint64_t>(buffer, kMaxParamBytes + 8, kManagedB);  // past the limit
  PointerCollector collector(managed);
  scan_packed_buffer(buffer.data(), 12, collector);  // words at 0 only (8..16 is partial)
  CHECK(collector.found().empty());
  scan_packed_buffer(buffer.data(), buffer.size(), collector);
  REQUIRE(collector.found().size() == 1);
  CHECK(collector.found()[0] == kManagedA);
}

TEST_CASE("Words outside the lookup's bounds are rejected without a lookup; duplicates looked up once") {
  FakeManaged managed = managed_ranges();
  managed.set_bounds({kManagedA, kManagedB + (64ull << 20)});
  std::vector<unsigned char> buffer;
  put<std::uint64_t>(buffer, 0, 0);                          // null
  put<std::uint64_t>(buffer, 8, 42);                         // a small integer
  put<std::uint64_t>(buffer, 16, kManagedA - 8);             // just below the bounds
  put<std::uint64_t>(buffer, 24, kDevice);                   // above the bounds
  put<std::uint64_t>(buffer, 32, kManagedA + 4);             // looked up: yes
  put<std::uint64_t>(buffer, 40, kManagedA + 4);             // duplicate: no lookup
  put<std::uint64_t>(buffer, 48, kManagedA + (1ull << 30));  // in bounds, between ranges: looked up, no
  put<std::uint64_t>(buffer, 56, kManagedA + (1ull << 30));  // the same non-pointer: looked up again
  PointerCollector collector(managed);
  scan_packed_buffer(buffer.data(), buffer.size(), collector);
  CHECK(collector.found().size() == 1);
  CHECK(managed.lookups() == 3);
  CHECK(collector.lookups() == 3);
}

TEST_CASE("scan_launch fills the launch: pointers, shape, key; kernelParams and extra agree") {
  FakeManaged managed = managed_ranges();
  const std::uint64_t a = kManagedA + 0x1000;
  const std::uint64_t b = kManagedB + 0x80;
  const std::int32_t n = 3;
  const void* args[] = {&a, &n, &b};
  ParamLayout layout;
  layout.status = LayoutStatus::known;
  layout.params = {{0, 8}, {8, 4}, {16, 8}};

  LaunchArguments launch_args;
  launch_args.function = 0xabc000;
  launch_args.stream = 0x5000;
  launch_args.grid = {64, 2, 1};
  launch_args.block = {256, 1, 1};
  launch_args.kernel_params = args;

  core::KernelLaunch launch;
  launch.correlation_id = 17;
  launch.host_time = 1234;
  const ScanOutcome outcome = scan_launch(launch_args, &layout, managed, launch);
  CHECK(outcome.path == ScanPath::kernel_params);
  CHECK(outcome.distinct_pointers == 2);
  CHECK(launch.correlation_id == 17);  // left alone
  CHECK(launch.host_time == 1234);
  CHECK(launch.function == 0xabc000);
  CHECK(launch.stream == 0x5000);
  CHECK(launch.grid == std::array<std::uint32_t, 3>{64, 2, 1});
  CHECK(launch.block == std::array<std::uint32_t, 3>{256, 1, 1});
  CHECK(launch.pointer_count == 2);
  CHECK_FALSE(launch.pointers_truncated);
  CHECK(launch.pointers[0] == a);
  CHECK(launch.pointers[1] == b);
  CHECK(launch.pointers[2] == 0);
  const std::uint64_t expected[] = {a, b};
  CHECK(launch.execution_key == execution_key(0xabc000, {64, 2, 1}, {256, 1, 1}, expected));

  // The same arguments packed into one buffer give the same pointers and the same key.
  std::vector<unsigned char> packed;
  put<std::uint64_t>(packed, 0, a);
  put<std::int32_t>(packed, 8, n);
  put<std::uint64_t>(packed, 16, b);
  std::size_t size = packed.size();
  void* extra[] = {extra_key(CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT), packed.data(),
                   extra_key(CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT), &size, nullptr};
  LaunchArguments packed_args = launch_args;
  packed_args.kernel_params = nullptr;
  packed_args.extra = extra;
  core::KernelLaunch packed_launch;
  CHECK(scan_launch(packed_args, nullptr, managed, packed_launch).path == ScanPath::packed_buffer);
  CHECK(packed_launch.pointer_count == 2);
  CHECK_FALSE(packed_launch.unnamed_memory);
  CHECK(packed_launch.execution_key == launch.execution_key);
  // An `extra` with no buffer deepum can read: the kernel may reach memory nothing here names.
  void* unreadable[] = {nullptr};
  packed_args.extra = unreadable;
  CHECK(scan_launch(packed_args, nullptr, managed, packed_launch).path == ScanPath::none);
  CHECK(packed_launch.unnamed_memory);
}

TEST_CASE("each pointer reaches the end of the live buffer holding it, where the allocator told") {
  FakeManaged managed = managed_ranges();
  deepum::core::LiveBuffers buffers;
  buffers.handed_out(kManagedA, 0x10000);  // a 64 KiB tensor; b's buffer is unknown
  buffers.handed_out(kManagedA + 0x20000, 0x100);
  managed.buffers = &buffers;
  const std::uint64_t a = kManagedA + 0x1000;  // a view into the tensor
  const std::uint64_t b = kManagedB + 0x80;
  const void* args[] = {&a, &b};
  ParamLayout layout;
  layout.status = LayoutStatus::known;
  layout.params = {{0, 8}, {8, 8}};
  LaunchArguments launch_args;
  launch_args.function = 0xabc000;
  launch_args.kernel_params = args;
  core::KernelLaunch launch;
  scan_launch(launch_args, &layout, managed, launch);
  REQUIRE(launch.pointer_count == 2);
  CHECK(launch.extents[0] == 0x10000 - 0x1000);
  CHECK(launch.extents[1] == 0);
  // Taken back by the allocator: unknown again.
  buffers.returned(kManagedA);
  CHECK(buffers.size() == 1);
  scan_launch(launch_args, &layout, managed, launch);
  CHECK(launch.extents[0] == 0);
  CHECK(buffers.bytes_from(kManagedA + 0x20000 + 0xff) == 1);
  CHECK(buffers.bytes_from(kManagedA + 0x20000 + 0x100) == 0);
  // The allocator hands the same address out again, smaller, then splits a larger buffer over it:
  // a pointer at a buffer's start and one inside it get that buffer's end.
  buffers.handed_out(kManagedA, 0x800);
  CHECK(buffers.bytes_from(kManagedA) == 0x800);
  buffers.returned(kManagedA);
  buffers.handed_out(kManagedA - 0x1000, 0x4000);
  CHECK(buffers.bytes_from(kManagedA) == 0x3000);
  CHECK(buffers.bytes_from(kManagedA - 0x1000) == 0x4000);
}

TEST_CASE("scan_launch without a known layout scans nothing but still keys the launch") {
  FakeManaged managed = managed_ranges();
  const std::uint64_t a = kManagedA;
  const void* args[] = {&a};
  LaunchArguments launch_args;
  launch_args.function = 0x1000;
  launch_args.kernel_params = args;
  ParamLayout unknown;  // status unknown
  core::KernelLaunch launch;
  CHECK(scan_launch(launch_args, &unknown, managed, launch).path == ScanPath::no_layout);
  CHECK(scan_launch(launch_args, nullptr, managed, launch).path == ScanPath::no_layout);
  CHECK(launch.pointer_count == 0);
  CHECK(launch.unnamed_memory);  // its arguments were not read
  CHECK(launch.execution_key == execution_key(0x1000, {}, {}, {}));

  LaunchArguments no_args;
  no_args.function = 0x1000;
  CHECK(scan_launch(no_args, nullptr, managed, launch).path == ScanPath::none);
}

TEST_CASE("More managed pointers than KernelLaunch holds: truncated, but all of them keyed") {
  FakeManaged managed = managed_ranges();
  constexpr std::size_t kCount = core::KernelLaunch::kMaxPointers + 6;
  std::vector<unsigned char> buffer;
  for (std::size_t i = 0; i < kCount; ++i) put<std::uint64_t>(buffer, 8 * i, kManagedA + 0x1000 * i);
  std::size_t size = buffer.size();
  void* extra[] = {extra_key(CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT), buffer.data(),
                   extra_key(CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT), &size, nullptr};
  LaunchArguments args;
  args.function = 0x2000;
  args.extra = extra;
  core::KernelLaunch launch;
  const ScanOutcome outcome = scan_launch(args, nullptr, managed, launch);
  CHECK(outcome.distinct_pointers == kCount);
  CHECK(launch.pointer_count == core::KernelLaunch::kMaxPointers);
  CHECK(launch.pointers_truncated);
  CHECK(launch.pointers[core::KernelLaunch::kMaxPointers - 1] ==
        kManagedA + 0x1000 * (core::KernelLaunch::kMaxPointers - 1));

  // Changing only a pointer past the 24 kept ones still changes the key.
  core::KernelLaunch other;
  put<std::uint64_t>(buffer, 8 * (kCount - 1), kManagedB);
  scan_launch(args, nullptr, managed, other);
  CHECK(other.execution_key != launch.execution_key);
}

TEST_CASE("Past the collector's capacity pointers are counted as overflow and truncate") {
  FakeManaged managed = managed_ranges();
  constexpr std::size_t kCount = PointerCollector::kCapacity + 3;
  std::vector<unsigned char> buffer;
  for (std::size_t i = 0; i < kCount; ++i) put<std::uint64_t>(buffer, 8 * i, kManagedA + 0x100 * i);
  PointerCollector collector(managed);
  scan_packed_buffer(buffer.data(), buffer.size(), collector);
  CHECK(collector.found().size() == PointerCollector::kCapacity);
  CHECK(collector.overflow() == 3);
}

TEST_CASE("execution_key depends on the function, the shape, and the pointers and their order") {
  const std::uint64_t p[] = {kManagedA, kManagedB};
  const std::uint64_t swapped[] = {kManagedB, kManagedA};
  const std::uint64_t key = execution_key(1, {1, 1, 1}, {32, 1, 1}, p);
  CHECK(key == execution_key(1, {1, 1, 1}, {32, 1, 1}, p));
  CHECK(key != execution_key(2, {1, 1, 1}, {32, 1, 1}, p));
  CHECK(key != execution_key(1, {2, 1, 1}, {32, 1, 1}, p));
  CHECK(key != execution_key(1, {1, 1, 1}, {64, 1, 1}, p));
  CHECK(key != execution_key(1, {1, 1, 1}, {32, 1, 1}, swapped));
  CHECK(key != execution_key(1, {1, 1, 1}, {32, 1, 1}, std::span<const std::uint64_t>(p, 1)));
  CHECK(key != execution_key(1, {1, 1, 1}, {32, 1, 1}, p, 1));
  // grid and block are not interchangeable
  CHECK(execution_key(1, {32, 1, 1}, {1, 1, 1}, p) != execution_key(1, {1, 1, 1}, {32, 1, 1}, p));
}

// ---- LayoutCache ----

namespace {
void fill_known(ParamLayout& layout, std::size_t params) {
  layout.status = LayoutStatus::known;
  layout.source = LayoutSource::function;
  for (std::size_t i = 0; i < params; ++i) layout.params.push_back({static_cast<std::uint32_t>(8 * i), 8});
}
}  // namespace

TEST_CASE("LayoutCache computes a function's layout once and then finds it") {
  LayoutCache cache(64);
  int computed = 0;
  auto compute = [&](ParamLayout& layout) {
    ++computed;
    fill_known(layout, 3);
  };
  const auto first = cache.get(0x1000, compute);
  REQUIRE(first.layout != nullptr);
  CHECK(first.computed);
  CHECK(first.first_sight);
  CHECK(first.layout->function == 0x1000);
  CHECK(first.layout->params.size() == 3);
  const auto second = cache.get(0x1000, compute);
  CHECK(second.layout == first.layout);
  CHECK_FALSE(second.computed);
  CHECK_FALSE(second.first_sight);
  CHECK(computed == 1);
  CHECK(cache.size() == 1);

  CHECK(cache.get(0, compute).layout == nullptr);  // the null handle is never cached
  CHECK(computed == 1);
}

TEST_CASE("LayoutCache: after invalidate_all each function is recomputed once, old pointers stay valid") {
  LayoutCache cache(64);
  std::size_t params = 2;
  auto compute = [&](ParamLayout& layout) { fill_known(layout, params); };
  const ParamLayout* before = cache.get(0x2000, compute).layout;
  cache.invalidate_all();
  params = 5;  // the handle now names another function
  const auto after = cache.get(0x2000, compute);
  CHECK(after.computed);
  CHECK(after.first_sight);
  CHECK(after.layout != before);
  CHECK(after.layout->params.size() == 5);
  CHECK(before->params.size() == 2);  // still readable by a launch that holds it
  CHECK_FALSE(cache.get(0x2000, compute).computed);
  CHECK(cache.size() == 1);
}

TEST_CASE("LayoutCache retries an unknown layout a few times, naming the function only once") {
  LayoutCache cache(64);
  int computed = 0;
  auto unknown = [&](ParamLayout& layout) {
    ++computed;
    layout.status = LayoutStatus::unknown;
  };
  int first_sights = 0;
  for (int i = 0; i < 10; ++i) first_sights += cache.get(0x3000, unknown).first_sight ? 1 : 0;
  CHECK(computed == static_cast<int>(LayoutCache::kMaxAttempts));
  CHECK(first_sights == 1);

  // A lazily loaded function that answers on its second launch.
  int tries = 0;
  auto answers_late = [&](ParamLayout& layout) {
    if (++tries == 1) {
      layout.status = LayoutStatus::unknown;
    } else {
      fill_known(layout, 1);
    }
  };
  CHECK(cache.get(0x4000, answers_late).layout->status == LayoutStatus::unknown);
  const auto second = cache.get(0x4000, answers_late);
  CHECK(second.layout->status == LayoutStatus::known);
  CHECK(second.computed);
  CHECK_FALSE(second.first_sight);
  CHECK_FALSE(cache.get(0x4000, answers_late).computed);
  CHECK(tries == 2);
}

TEST_CASE("LayoutCache keeps working past its capacity (overflow map)") {
  LayoutCache cache(16);
  auto compute_for = [](std::uint64_t f) {
    return [f](ParamLayout& layout) { fill_known(layout, static_cast<std::size_t>(f % 7)); };
  };
  for (std::uint64_t f = 1; f <= 100; ++f) CHECK(cache.get(f * 0x1000, compute_for(f)).computed);
  CHECK(cache.size() == 100);
  for (std::uint64_t f = 1; f <= 100; ++f) {
    const auto lookup = cache.get(f * 0x1000, compute_for(f));
    CHECK_FALSE(lookup.computed);
    CHECK(lookup.layout->function == f * 0x1000);
    CHECK(lookup.layout->params.size() == f % 7);
  }
  cache.invalidate_all();
  for (std::uint64_t f = 1; f <= 100; ++f) CHECK(cache.get(f * 0x1000, compute_for(f)).first_sight);
  CHECK(cache.size() == 100);
}

TEST_CASE("LayoutCache under concurrent launches: one first sight per function, right layouts") {
  LayoutCache cache(1024);
  constexpr std::uint64_t kFunctions = 500;
  std::atomic<int> first_sights{0};
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 4; ++round) {
        for (std::uint64_t i = 0; i < kFunctions; ++i) {
          const std::uint64_t f = ((i * 7919 + static_cast<std::uint64_t>(t) * 31) % kFunctions + 1) << 12;
          const auto lookup = cache.get(f, [f](ParamLayout& layout) { fill_known(layout, (f >> 12) % 5); });
          if (lookup.first_sight) first_sights.fetch_add(1);
          if (lookup.layout == nullptr || lookup.layout->function != f ||
              lookup.layout->params.size() != (f >> 12) % 5) {
            wrong.fetch_add(1);
          }
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  CHECK(wrong.load() == 0);
  CHECK(first_sights.load() == static_cast<int>(kFunctions));
  CHECK(cache.size() == kFunctions);
}

// ---- copies and memsets at their API entry ----------------------------------------------------

TEST_CASE("a small copy from the host into managed memory is read for the pointers it carries") {
  const FakeManaged managed = managed_ranges();
  // A table as PyTorch builds one in pinned memory: two managed pointers among sizes and offsets.
  std::vector<std::uint64_t> table{kManagedA + 512, 96, kDevice, kManagedB, kManagedA + 512, 7};
  const auto host = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(table.data()));
  const std::uint64_t bytes = table.size() * sizeof(std::uint64_t);
  cuMemcpyHtoDAsync_v2_params to_device{kManagedB + 4096, table.data(), bytes, nullptr};
  const auto call = decode_copy_call(CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2, &to_device);
  REQUIRE(call.has_value());
  CHECK(call->source_may_be_host);
  AllLaunchPointers found;
  REQUIRE(pointers_in_host_source(*call, managed, found));
  CHECK(found.count == 2);  // each once
  CHECK(found.complete);
  CHECK(found.pointers[0] == kManagedA + 512);
  CHECK(found.pointers[1] == kManagedB);

  // The driver's generic copy reads its source by address too.
  cuMemcpyAsync_params generic{kManagedB + 4096, host, bytes, nullptr};
  REQUIRE(pointers_in_host_source(*decode_copy_call(CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync, &generic), managed,
                                  found));
  CHECK(found.count == 2);

  // A table past one chunk (FSDP2's chunk_cat tables grow with the shard): its last words read too.
  std::vector<std::uint64_t> large((40 << 10) / sizeof(std::uint64_t), 3);
  large.back() = kManagedA + 64;
  large[large.size() / 2] = kManagedB;
  cuMemcpyHtoDAsync_v2_params large_copy{kManagedB + 4096, large.data(), large.size() * sizeof(std::uint64_t),
                                         nullptr};
  REQUIRE(pointers_in_host_source(
      *decode_copy_call(CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2, &large_copy), managed, found));
  CHECK(found.count == 2);
  CHECK(found.complete);

  // Not read: into plain device memory, from managed memory, from the device, or too large.
  CopyCall other = *call;
  other.destination = kDevice;
  CHECK_FALSE(pointers_in_host_source(other, managed, found));
  other = *call;
  other.source = kManagedA;
  CHECK_FALSE(pointers_in_host_source(other, managed, found));
  cuMemcpyDtoDAsync_v2_params device_copy{kManagedB, kDevice, 64, nullptr};
  CHECK_FALSE(pointers_in_host_source(
      *decode_copy_call(CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2, &device_copy), managed, found));
  other = *call;
  other.bytes = kMaxPointerTableBytes + 8;
  CHECK_FALSE(pointers_in_host_source(other, managed, found));

  // A source the host cannot read (device memory is mapped that way) is an error, not a crash.
  void* unreadable = mmap(nullptr, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(unreadable != MAP_FAILED);
  other = *call;
  other.source = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(unreadable));
  CHECK_FALSE(pointers_in_host_source(other, managed, found));
  munmap(unreadable, 4096);
}

TEST_CASE("copy and memset calls: operands, bytes and stream from CUPTI's parameter structs") {
  const FakeManaged managed = managed_ranges();
  auto* stream = reinterpret_cast<CUstream>(std::uintptr_t{0x5000});
  const auto stream_id = std::uint64_t{0x5000};
  const auto per_thread = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(CU_STREAM_PER_THREAD));
  std::vector<std::uint32_t> host(16);

  // A synchronous copy out of managed memory into the host: the legacy stream, the source named.
  cuMemcpyDtoH_v2_params to_host{host.data(), kManagedA + 4096, 64};
  auto call = decode_copy_call(CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2, &to_host);
  REQUIRE(call.has_value());
  CHECK(call->operation == core::GpuOperation::memcpy);
  CHECK(call->source == kManagedA + 4096);
  CHECK(call->bytes == 64);
  CHECK(call->stream == 0);
  core::CopyLaunch copy = managed_operands(*call, managed);
  CHECK(copy.operand_count == 1);
  CHECK(copy.operands[0] == kManagedA + 4096);
  CHECK(copy.bytes == 64);

  // cudaMemcpyAsync between two managed buffers, in a stream: both named.
  cuMemcpyAsync_params between{kManagedB, kManagedA, 1 << 20, stream};
  call = decode_copy_call(CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync, &between);
  REQUIRE(call.has_value());
  CHECK(call->stream == stream_id);
  copy = managed_operands(*call, managed);
  CHECK(copy.operand_count == 2);
  CHECK(copy.operands[0] == kManagedB);
  CHECK(copy.operands[1] == kManagedA);

  // Into plain device memory from the host: nothing managed.
  cuMemcpyHtoD_v2_params to_device{kDevice, host.data(), 64};
  call = decode_copy_call(CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2, &to_device);
  REQUIRE(call.has_value());
  CHECK(managed_operands(*call, managed).operand_count == 0);

  // The per-thread default stream: stream 0 of a _ptsz/_ptds call is that thread's stream, with an
  // id of its own in each thread, which the driver's handle comes back from.
  cuMemcpyAsync_ptsz_params per_thread_copy{kManagedA, kManagedB, 8, nullptr};
  call = decode_copy_call(CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync_ptsz, &per_thread_copy);
  REQUIRE(call.has_value());
  const std::uint64_t this_thread = call->stream;
  CHECK(this_thread != per_thread);
  CHECK(core::stream_handle(this_thread) == per_thread);
  cuMemcpy_ptds_params per_thread_sync{kManagedA, kManagedB, 8};
  CHECK(decode_copy_call(CUPTI_DRIVER_TRACE_CBID_cuMemcpy_ptds, &per_thread_sync)->stream == this_thread);
  cuMemcpyAsync_params explicit_per_thread{kManagedA, kManagedB, 8, CU_STREAM_PER_THREAD};
  CHECK(decode_copy_call(CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync, &explicit_per_thread)->stream == this_thread);
  std::uint64_t other_thread = 0;
  std::thread([&] {
    other_thread = decode_copy_call(CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync_ptsz, &per_thread_copy)->stream;
  }).join();
  CHECK(other_thread != this_thread);
  CHECK(core::stream_handle(other_thread) == per_thread);
  // Any other stream is its handle.
  cuMemcpyAsync_params on_stream{kManagedA, kManagedB, 8, stream};
  CHECK(core::stream_handle(decode_copy_call(CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync, &on_stream)->stream) ==
        decode_copy_call(CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync, &on_stream)->stream);

  // Memsets: elements times their size, the destination alone.
  cuMemsetD32Async_params fill{kManagedB + 256, 7u, 1000, stream};
  call = decode_copy_call(CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async, &fill);
  REQUIRE(call.has_value());
  CHECK(call->operation == core::GpuOperation::memset);
  CHECK(call->bytes == 4000);
  CHECK(call->source == 0);
  CHECK(call->stream == stream_id);
  copy = managed_operands(*call, managed);
  CHECK(copy.operand_count == 1);
  CHECK(copy.operands[0] == kManagedB + 256);
  cuMemsetD16_v2_params halves{kManagedA, 1, 10};
  CHECK(decode_copy_call(CUPTI_DRIVER_TRACE_CBID_cuMemsetD16_v2, &halves)->bytes == 20);

  // Every callback listed decodes (the region, peer, batch and array copies and 2-D memsets only
  // as "not decoded": they may write managed memory); others and missing parameters do not.
  std::size_t undecoded = 0;
  for (CUpti_CallbackId cbid : copy_callback_ids()) {
    alignas(16) std::array<unsigned char, 256> any{};  // more than the largest of the structs read
    const auto seen = decode_copy_call(cbid, any.data());
    CHECK(seen.has_value());
    if (seen && !seen->decoded) ++undecoded;
  }
  CHECK(undecoded == 60);
  CUDA_MEMCPY2D_v2 region{};
  cuMemcpy2DAsync_v2_params two_d{&region, stream};
  call = decode_copy_call(CUPTI_DRIVER_TRACE_CBID_cuMemcpy2DAsync_v2, &two_d);
  REQUIRE(call.has_value());
  CHECK_FALSE(call->decoded);
  CHECK(call->destination == 0);
  CHECK(call->stream == reinterpret_cast<std::uintptr_t>(stream));  // its stream alone
  cuMemcpy2D_v2_ptds_params two_d_sync{&region};
  CHECK(decode_copy_call(CUPTI_DRIVER_TRACE_CBID_cuMemcpy2D_v2_ptds, &two_d_sync)->stream == this_thread);
  cuStreamWriteValue32_params write{stream, kManagedA, 1, 0};
  CHECK(decode_copy_call(CUPTI_DRIVER_TRACE_CBID_cuStreamWriteValue32, &write)->stream ==
        reinterpret_cast<std::uintptr_t>(stream));
  CHECK_FALSE(decode_copy_call(CUPTI_DRIVER_TRACE_CBID_cuStreamWriteValue32, &write)->waits_for_value);
  CHECK_FALSE(decode_copy_call(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &between).has_value());
  CHECK_FALSE(decode_copy_call(CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync, nullptr).has_value());
}

TEST_CASE("stream memory operations that wait for a value are told from those that write one") {
  auto* stream = reinterpret_cast<CUstream>(std::uintptr_t{0x5000});
  cuStreamWaitValue32_v2_params wait{stream, 0x9000, 1, CU_STREAM_WAIT_VALUE_GEQ};
  auto call = decode_copy_call(CUPTI_DRIVER_TRACE_CBID_cuStreamWaitValue32_v2, &wait);
  REQUIRE(call.has_value());
  CHECK_FALSE(call->decoded);
  CHECK(call->waits_for_value);
  CHECK(call->stream == reinterpret_cast<std::uintptr_t>(stream));
  cuStreamWaitValue64_ptsz_params wait_per_thread{nullptr, 0x9000, 1, 0};
  call = decode_copy_call(CUPTI_DRIVER_TRACE_CBID_cuStreamWaitValue64_ptsz, &wait_per_thread);
  REQUIRE(call.has_value());
  CHECK(call->waits_for_value);
  CHECK(call->stream == core::stream_id(reinterpret_cast<std::uintptr_t>(CU_STREAM_PER_THREAD)));

  std::array<CUstreamBatchMemOpParams, 3> operations{};
  operations[0].operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
  operations[1].operation = CU_STREAM_MEM_OP_BARRIER;
  operations[2].operation = CU_STREAM_MEM_OP_WRITE_VALUE_64;
  cuStreamBatchMemOp_v2_params writes{stream, 3, operations.data(), 0};
  call = decode_copy_call(CUPTI_DRIVER_TRACE_CBID_cuStreamBatchMemOp_v2, &writes);
  REQUIRE(call.has_value());
  CHECK_FALSE(call->waits_for_value);
  operations[1].operation = CU_STREAM_MEM_OP_WAIT_VALUE_64;
  CHECK(decode_copy_call(CUPTI_DRIVER_TRACE_CBID_cuStreamBatchMemOp_v2, &writes)->waits_for_value);
  // Parameters the host cannot read, or more than are read: taken to wait.
  cuStreamBatchMemOp_v2_params unreadable{stream, 2, reinterpret_cast<CUstreamBatchMemOpParams*>(8), 0};
  CHECK(decode_copy_call(CUPTI_DRIVER_TRACE_CBID_cuStreamBatchMemOp_v2, &unreadable)->waits_for_value);
  cuStreamBatchMemOp_v2_params many{stream, 100000, operations.data(), 0};
  CHECK(decode_copy_call(CUPTI_DRIVER_TRACE_CBID_cuStreamBatchMemOp_v2, &many)->waits_for_value);
  cuStreamBatchMemOp_v2_params none{stream, 0, nullptr, 0};
  CHECK_FALSE(decode_copy_call(CUPTI_DRIVER_TRACE_CBID_cuStreamBatchMemOp_v2, &none)->waits_for_value);
}
