// The real driver functions deepum itself calls, and the stream-ordered free machinery that both
// the runtime (cudaFreeAsync) and the driver (cuMemFreeAsync) interposers use.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <string>

#include "deepum/config/limits.hpp"
#include "deepum/core/managed_registry.hpp"
#include "deepum/cuda/real_function.hpp"

namespace deepum::preload {
using cuda::Library;
using cuda::RealFunction;
}  // namespace deepum::preload

namespace deepum::preload::driver {

inline RealFunction<decltype(&::cuMemAllocManaged)> mem_alloc_managed{"cuMemAllocManaged", Library::libcuda};
inline RealFunction<decltype(&::cuMemFree_v2)> mem_free{"cuMemFree_v2", Library::libcuda};
inline RealFunction<decltype(&::cuMemGetInfo_v2)> mem_get_info{"cuMemGetInfo_v2", Library::libcuda};
inline RealFunction<decltype(&::cuEventCreate)> event_create{"cuEventCreate", Library::libcuda};
inline RealFunction<decltype(&::cuEventRecord)> event_record{"cuEventRecord", Library::libcuda};
inline RealFunction<decltype(&::cuEventQuery)> event_query{"cuEventQuery", Library::libcuda};
inline RealFunction<decltype(&::cuEventDestroy_v2)> event_destroy{"cuEventDestroy_v2", Library::libcuda};
inline RealFunction<decltype(&::cuStreamSynchronize)> stream_synchronize{"cuStreamSynchronize",
                                                                         Library::libcuda};
inline RealFunction<decltype(&::cuStreamIsCapturing)> stream_is_capturing{"cuStreamIsCapturing",
                                                                          Library::libcuda};
inline RealFunction<decltype(&::cuCtxGetDevice)> ctx_get_device{"cuCtxGetDevice", Library::libcuda};

// The device of the current context: whose allocation limit a driver allocation counts against
// (0 where no context is current: the driver then refuses the allocation itself).
int current_device();

// Whether `stream` is being captured into a graph (the legacy stream never is, and asking about it
// during another thread's capture would itself be an error). An allocation there is the graph's
// own (an allocation node): it passes through, physical, and is freed by the graph.
bool capturing(CUstream stream);

// The current context's device memory, free and total; an empty string on success, else the error.
std::string query_device_memory(config::DeviceMemory* memory);

// Frees `range` once the work queued so far in `stream` is done, without blocking the caller:
// an event is recorded in the stream and the memory is released when it has fired. Falls back
// to synchronising the stream if no event can be recorded. On a stream being captured the free is
// refused with the error CUDA gives for memory the graph did not allocate.
CUresult free_after_stream(const core::ManagedRange& range, CUstream stream);

// Releases the deferred frees whose events have fired. Called from allocation and free hooks.
void reap_deferred_frees();
// Before a context reset: the pending frees' events and memory die with it.
void drop_deferred_frees();
// A device's context is reset or destroyed: its memory is freed with it, so its ranges are
// forgotten (the device's limit credited) and the pending frees dropped. Takes locks only.
void forget_context_memory(int device);

// fork(): hold the queue's lock across it; the child drops the parent's pending frees, whose
// events and memory belong to the parent's CUDA context.
void lock_deferred_frees_for_fork();
void unlock_deferred_frees_after_fork(bool in_child);

}  // namespace deepum::preload::driver
