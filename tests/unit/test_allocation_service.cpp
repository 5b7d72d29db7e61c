// AllocationService with fabricated vendor calls: the limit, rollback on CUDA errors, frees of
// foreign memory, the device view, and many threads allocating at once.
#include <doctest/doctest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "deepum/core/allocation_service.hpp"

using namespace deepum;
using core::InterceptedApi;

namespace {

enum class FakeStatus { ok, oom, driver_error };
constexpr core::StatusCodes<FakeStatus> kCodes{FakeStatus::ok, FakeStatus::oom};
constexpr std::uint64_t kGiB = 1ull << 30;

struct Fixture {
  config::Config config;
  core::Statistics stats;
  core::ManagedRegistry registry;
  core::AllocationService service{config, stats, registry};
  std::uintptr_t next_address = 0x7f0000000000;
  int refusals = 0;

  explicit Fixture(config::SizeSpec limit = config::SizeSpec::of_bytes(4 * kGiB)) {
    config.alloc_limit = limit;
    service.resolve_limits(80 * kGiB);
  }

  FakeStatus allocate(std::uint64_t bytes, std::uintptr_t* base, FakeStatus driver_says = FakeStatus::ok,
                      int device = 0) {
    return service.allocate(
        InterceptedApi::cuda_malloc, bytes, base, kCodes,
        [&](std::uint64_t n, std::uintptr_t* out) {
          if (driver_says != FakeStatus::ok) return driver_says;
          *out = next_address;
          next_address += n;
          return FakeStatus::ok;
        },
        [&](const core::Refusal&) { ++refusals; }, device);
  }

  FakeStatus free(std::uintptr_t base, int* managed_frees, int* foreign_frees) {
    return service.free(
        InterceptedApi::cuda_free, base, kCodes,
        [&](const core::ManagedRange&) {
          ++*managed_frees;
          return FakeStatus::ok;
        },
        [&](std::uintptr_t) {
          ++*foreign_frees;
          return FakeStatus::ok;
        });
  }
};

}  // namespace

TEST_CASE("allocations are admitted up to the limit and refused past it") {
  Fixture f;
  std::uintptr_t a = 0, b = 0, c = 0;
  CHECK(f.allocate(3 * kGiB, &a) == FakeStatus::ok);
  CHECK(f.registry.find_containing(a + 100));
  CHECK(f.allocate(2 * kGiB, &b) == FakeStatus::oom);
  CHECK(f.refusals == 1);
  CHECK(b == 0);
  CHECK(f.allocate(1 * kGiB, &c) == FakeStatus::ok);
  CHECK(f.service.managed_bytes_in_use() == 4 * kGiB);
  const auto view = f.service.device_view();
  CHECK(view.total_bytes == 4 * kGiB);
  CHECK(view.free_bytes == 0);
  const auto snap = f.service.snapshot();
  CHECK(snap.per_api[static_cast<std::size_t>(InterceptedApi::cuda_malloc)].calls == 3);
  CHECK(snap.per_api[static_cast<std::size_t>(InterceptedApi::cuda_malloc)].refused == 1);
  CHECK(snap.peak_managed_bytes == 4 * kGiB);
}

TEST_CASE("a CUDA error from the allocation is returned as is and reserves nothing") {
  Fixture f;
  std::uintptr_t a = 0;
  CHECK(f.allocate(1 * kGiB, &a, FakeStatus::driver_error) == FakeStatus::driver_error);
  CHECK(f.service.managed_bytes_in_use() == 0);
  CHECK(f.registry.live_count() == 0);
  CHECK(f.service.snapshot().per_api[static_cast<std::size_t>(InterceptedApi::cuda_malloc)].failed == 1);
}

TEST_CASE("frees credit the limit; memory deepum did not allocate passes through") {
  Fixture f;
  std::uintptr_t a = 0;
  REQUIRE(f.allocate(4 * kGiB, &a) == FakeStatus::ok);
  int managed = 0, foreign = 0;
  CHECK(f.free(0x1234, &managed, &foreign) == FakeStatus::ok);
  CHECK(foreign == 1);
  CHECK(managed == 0);
  CHECK(f.free(a, &managed, &foreign) == FakeStatus::ok);
  CHECK(managed == 1);
  CHECK(f.service.managed_bytes_in_use() == 0);
  CHECK(f.service.snapshot().passthrough_frees == 1);
  // A second free of the same pointer is no longer ours: the driver reports the real error.
  CHECK(f.free(a, &managed, &foreign) == FakeStatus::ok);
  CHECK(foreign == 2);
}

TEST_CASE("a failed free keeps the range registered and the bytes counted") {
  Fixture f;
  std::uintptr_t a = 0;
  REQUIRE(f.allocate(kGiB, &a) == FakeStatus::ok);
  const auto status = f.service.free(
      InterceptedApi::cuda_free, a, kCodes,
      [](const core::ManagedRange&) { return FakeStatus::driver_error; },
      [](std::uintptr_t) { return FakeStatus::ok; });
  CHECK(status == FakeStatus::driver_error);
  CHECK(f.registry.find_containing(a));
  CHECK(f.service.managed_bytes_in_use() == kGiB);
}

TEST_CASE("percent limits resolve against the device") {
  Fixture f(config::SizeSpec::of_percent(50.0));
  CHECK(f.service.alloc_limit_bytes() == 40 * kGiB);
  CHECK(f.service.resident_limit_bytes() == 80 * kGiB);  // automatic, allocating within the device
}

TEST_CASE("allocating past a device, the automatic resident limit is held below what is free") {
  Fixture f(config::SizeSpec::of_percent(200.0));        // device 0: 80 GiB, free as much
  CHECK(f.service.resident_limit_bytes() == 75 * kGiB);  // a sixteenth kept free
  CHECK(f.service.holds_resident_limit());
  // Device 1 is shared: another process holds 6 GiB of its 16.
  f.service.resolve_limits(1, {10 * kGiB, 16 * kGiB});
  CHECK(f.service.alloc_limit_bytes(1) == 32 * kGiB);
  CHECK(f.service.resident_limit_bytes(1) == 9 * kGiB);
  CHECK(f.service.holds_resident_limit(1));
  Fixture fits(config::SizeSpec::of_percent(50.0));
  CHECK_FALSE(fits.service.holds_resident_limit());  // the whole device: the driver's to page
}

TEST_CASE("every device has its own limits, and a device reset credits only its own") {
  Fixture f(config::SizeSpec::of_percent(50.0));  // device 0: 80 GiB, so 40 GiB
  CHECK(f.service.resolve_limits_once(1, {16 * kGiB, 16 * kGiB}));
  CHECK_FALSE(f.service.resolve_limits_once(1, {16 * kGiB, 16 * kGiB}));  // resolved once
  CHECK(f.service.alloc_limit_bytes(1) == 8 * kGiB);
  CHECK(f.service.devices_used() == std::vector<int>{0, 1});
  std::uintptr_t on_zero = 0, on_one = 0, too_much = 0;
  REQUIRE(f.allocate(30 * kGiB, &on_zero, FakeStatus::ok, 0) == FakeStatus::ok);
  REQUIRE(f.allocate(6 * kGiB, &on_one, FakeStatus::ok, 1) == FakeStatus::ok);
  // Device 1's 8 GiB is nearly gone, whatever device 0 has left.
  CHECK(f.allocate(4 * kGiB, &too_much, FakeStatus::ok, 1) == FakeStatus::oom);
  CHECK(f.service.device_view(1).free_bytes == 2 * kGiB);
  CHECK(f.service.device_view(0).free_bytes == 10 * kGiB);
  // Freed memory goes back to its own device's limit.
  int managed = 0, foreign = 0;
  CHECK(f.free(on_one, &managed, &foreign) == FakeStatus::ok);
  CHECK(f.service.managed_bytes_in_use(1) == 0);
  CHECK(f.service.managed_bytes_in_use(0) == 30 * kGiB);
  // A reset of device 0 frees its memory: forgotten, its limit credited, device 1 untouched.
  REQUIRE(f.allocate(5 * kGiB, &on_one, FakeStatus::ok, 1) == FakeStatus::ok);
  f.service.forget_device(0);
  CHECK(f.service.managed_bytes_in_use(0) == 0);
  CHECK(f.service.peak_managed_bytes(0) == 30 * kGiB);
  CHECK_FALSE(f.registry.find_containing(on_zero).has_value());
  CHECK(f.registry.find_containing(on_one).has_value());
  CHECK(f.service.managed_bytes_in_use(1) == 5 * kGiB);
}

TEST_CASE("a process using device 1 alone reports device 1's limits") {
  config::Config config;
  config.alloc_limit = config::SizeSpec::of_percent(50.0);
  core::Statistics stats;
  core::ManagedRegistry registry;
  core::AllocationService service{config, stats, registry};
  REQUIRE(service.resolve_limits_once(1, {16 * kGiB, 16 * kGiB}));
  const core::StatisticsSnapshot snapshot = service.snapshot();
  CHECK(snapshot.alloc_limit_bytes == 8 * kGiB);
  CHECK(snapshot.device_total_bytes == 16 * kGiB);
  CHECK(snapshot.resident_limit_bytes == service.resident_limit_bytes(1));
  CHECK(snapshot.resident_limit_bytes != 0);
  CHECK(snapshot.devices.empty());  // one device: named once, not per device
}

TEST_CASE("concurrent allocations never exceed the limit together") {
  Fixture f(config::SizeSpec::of_bytes(100 * (1ull << 20)));
  std::atomic<std::uintptr_t> next{0x100000000};
  std::atomic<int> admitted{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i) {
        std::uintptr_t base = 0;
        const auto status = f.service.allocate(
            InterceptedApi::cu_mem_alloc, 1ull << 20, &base, kCodes,
            [&](std::uint64_t n, std::uintptr_t* out) {
              *out = next.fetch_add(n);
              return FakeStatus::ok;
            },
            [](const core::Refusal&) {});
        if (status == FakeStatus::ok) ++admitted;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  CHECK(admitted == 100);
  CHECK(f.service.managed_bytes_in_use() == 100 * (1ull << 20));
  CHECK(f.registry.live_count() == 100);
}
