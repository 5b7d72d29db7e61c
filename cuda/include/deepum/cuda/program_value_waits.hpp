// The process's stream memory waits of the program's (core::ValueWaits), followed with driver
// events: one set for every engine, since a move on any device may be waited for by the work that
// writes a wait's value.
#pragma once

#include <cstdint>

#include "deepum/core/value_waits.hpp"

namespace deepum::cuda {

// Created on first use, never destroyed (hooks run during exit).
core::ValueWaits& program_value_waits();

// At a wait's driver call entry, on the program's thread: `stream_id` of context `context`. A wait
// in a stream capturing into a graph is the graph's, which waits only when launched: not counted.
void program_value_wait_entered(std::uint64_t context, std::uint64_t stream_id) noexcept;
// At the exit of every driver call whose entry the tracer saw, on its thread.
void program_value_wait_enqueued() noexcept;

}  // namespace deepum::cuda
