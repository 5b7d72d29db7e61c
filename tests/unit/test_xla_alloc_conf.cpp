// Steering XLA's allocator to unified memory at load: given the environment, what deepum sets and
// what it says.
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "deepum/core/xla_alloc_conf.hpp"

using deepum::core::EnvironmentChange;
using deepum::core::LoadedFrameworks;
using deepum::core::physical_allocation_warning;
using deepum::core::plan_xla_steering;
using deepum::core::XlaSteering;

namespace {

XlaSteering plan(const std::map<std::string, std::string>& environment) {
  return plan_xla_steering([&](const char* name) -> const char* {
    const auto it = environment.find(name);
    return it == environment.end() ? nullptr : it->second.c_str();
  });
}

const std::vector<EnvironmentChange> kFullSteering = {{"TF_FORCE_UNIFIED_MEMORY", "1"},
                                                      {"XLA_PYTHON_CLIENT_PREALLOCATE", "false"}};

}  // namespace

TEST_CASE("with nothing set, XLA's BFC allocator is steered to unified memory without preallocation") {
  const XlaSteering steering = plan({{"PATH", "/usr/bin"}});
  CHECK(steering.changes == kFullSteering);
  CHECK(steering.notices.empty());
  CHECK(steering.blocked_by.empty());
  CHECK(describe_changes(steering.changes) ==
        "TF_FORCE_UNIFIED_MEMORY=1, XLA_PYTHON_CLIENT_PREALLOCATE=false");
}

TEST_CASE("the BFC allocator chosen by name is steered as the default is") {
  for (const char* name : {"default", "bfc", "BFC"}) {
    CAPTURE(name);
    CHECK(plan({{"XLA_PYTHON_CLIENT_ALLOCATOR", name}}).changes == kFullSteering);
  }
  CHECK(plan({{"TF_GPU_ALLOCATOR", "cuda_malloc"}}).changes ==
        kFullSteering);  // XLA reads only the async one
}

TEST_CASE("another allocator chosen by the user leaves the environment alone and says so by name") {
  for (const char* name : {"platform", "cuda_async", "vmm", "address", ""}) {
    CAPTURE(name);
    const XlaSteering steering = plan({{"XLA_PYTHON_CLIENT_ALLOCATOR", name}});
    CHECK(steering.changes.empty());
    REQUIRE(steering.notices.size() == 1);
    const std::string setting = std::string("XLA_PYTHON_CLIENT_ALLOCATOR=\"") + name + "\"";
    CHECK(steering.blocked_by == setting);
    CHECK(steering.notices[0].starts_with(setting + ": JAX's memory will not be managed: "));
  }
  const XlaSteering async = plan({{"TF_GPU_ALLOCATOR", "cuda_malloc_async"}});
  CHECK(async.changes.empty());
  CHECK(async.blocked_by == "TF_GPU_ALLOCATOR=\"cuda_malloc_async\"");
  REQUIRE(async.notices.size() == 1);
  CHECK(async.notices[0].find("CUDA's memory pools") != std::string::npos);
}

TEST_CASE("unified memory switched off by the user blocks the steering; switched on, it is kept") {
  for (const char* off : {"0", "false", "FALSE", "no"}) {
    CAPTURE(off);
    const XlaSteering steering = plan({{"TF_FORCE_UNIFIED_MEMORY", off}});
    CHECK(steering.changes.empty());
    CHECK(steering.blocked_by == std::string("TF_FORCE_UNIFIED_MEMORY=\"") + off + "\"");
    REQUIRE(steering.notices.size() == 1);
    CHECK(steering.notices[0].ends_with("unset it to let deepum manage JAX's memory"));
  }
  for (const char* on : {"1", "true", "True"}) {
    CAPTURE(on);
    const XlaSteering steering = plan({{"TF_FORCE_UNIFIED_MEMORY", on}});
    CHECK(steering.changes == std::vector<EnvironmentChange>{{"XLA_PYTHON_CLIENT_PREALLOCATE", "false"}});
    CHECK(steering.notices.empty());
  }
  // Empty is unset to XLA: deepum sets it.
  CHECK(plan({{"TF_FORCE_UNIFIED_MEMORY", ""}}).changes == kFullSteering);
}

TEST_CASE("the user's preallocation setting is kept; preallocating is explained") {
  for (const char* off : {"false", "False", "0"}) {
    CAPTURE(off);
    const XlaSteering steering = plan({{"XLA_PYTHON_CLIENT_PREALLOCATE", off}});
    CHECK(steering.changes == std::vector<EnvironmentChange>{{"TF_FORCE_UNIFIED_MEMORY", "1"}});
    CHECK(steering.notices.empty());
  }
  const XlaSteering on = plan({{"XLA_PYTHON_CLIENT_PREALLOCATE", "true"}});
  CHECK(on.changes == std::vector<EnvironmentChange>{{"TF_FORCE_UNIFIED_MEMORY", "1"}});
  CHECK(on.blocked_by.empty());
  REQUIRE(on.notices.size() == 1);
  CHECK(on.notices[0].starts_with(
      "XLA_PYTHON_CLIENT_PREALLOCATE=\"true\": XLA will take deepum's whole allocation"));
  // An empty value is unset to jaxlib.
  CHECK(plan({{"XLA_PYTHON_CLIENT_PREALLOCATE", ""}}).changes == kFullSteering);
}

TEST_CASE("a blocked plan touches nothing, preallocation included") {
  const XlaSteering steering =
      plan({{"XLA_PYTHON_CLIENT_ALLOCATOR", "platform"}, {"XLA_PYTHON_CLIENT_PREALLOCATE", "true"}});
  CHECK(steering.changes.empty());
  CHECK(steering.notices.size() == 1);
}

TEST_CASE("a notice stays one line whatever the variable held") {
  const XlaSteering steering =
      plan({{"XLA_PYTHON_CLIENT_ALLOCATOR", "platform\n[deepum 1 error] forged" + std::string(500, 'x')}});
  REQUIRE(steering.notices.size() == 1);
  CHECK(steering.notices[0].find('\n') == std::string::npos);
  CHECK(steering.notices[0].find("platform\\n[deepum 1 error] forged") != std::string::npos);
  CHECK(steering.notices[0].find(std::string(201, 'x')) == std::string::npos);
  CHECK(steering.notices[0].find("...\"") != std::string::npos);
}

TEST_CASE("the large cuMemCreate warning names the likely framework and the setting behind it") {
  const std::uint64_t gib = std::uint64_t{1} << 30;
  const std::string blocked =
      physical_allocation_warning(gib, LoadedFrameworks{.jax = true}, "XLA_PYTHON_CLIENT_ALLOCATOR=\"vmm\"");
  CHECK(blocked ==
        "cuMemCreate of 1.00 GiB: physical GPU memory that deepum cannot manage or oversubscribe, likely "
        "JAX's: XLA's allocator, kept off unified memory by XLA_PYTHON_CLIENT_ALLOCATOR=\"vmm\"");
  CHECK(
      physical_allocation_warning(gib, {.jax = true, .pytorch = true}, "").find("TF_FORCE_UNIFIED_MEMORY") !=
      std::string::npos);
  CHECK(physical_allocation_warning(gib, {.pytorch = true, .nccl = true}, "").find("PyTorch's: NCCL") !=
        std::string::npos);
  CHECK(physical_allocation_warning(gib, {.nccl = true}, "").ends_with("likely NCCL's buffers"));
  CHECK(physical_allocation_warning(gib, {}, "").find("does not recognise") != std::string::npos);
}
