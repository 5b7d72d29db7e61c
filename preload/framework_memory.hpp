// Frameworks' memory as deepum sees it: XLA's allocator steered to unified memory at load, and
// what deepum says, once the process uses CUDA, about memory it cannot manage and why.
#pragma once

#include <cstdint>

#include "deepum/core/session.hpp"

namespace deepum::preload {

// In the library constructor, before the program reads its environment and before any thread
// of deepum's exists: sets XLA's allocator variables the user left unset (see
// core/xla_alloc_conf.hpp), when deepum's configuration will have it manage memory.
void steer_xla_allocator_at_load();

// Once, when the first device's limits are resolved: why JAX's memory will not be managed (the
// user's setting, by name), or what the user's preallocation will cost.
void say_framework_notices(core::Session& session);

// After cuMemAllocManaged memory became deepum's: says once that the program's unified memory
// (XLA's pool, where deepum steered XLA at load) is managed.
void note_program_managed_allocation(core::Session& session);

// Before a cuMemCreate passes through: says once that its memory stays physical, and warns once,
// at the first large one, naming the likely framework and the setting behind it.
void note_physical_allocation(core::Session& session, std::uint64_t bytes);

}  // namespace deepum::preload
