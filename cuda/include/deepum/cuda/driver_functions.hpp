// The CUDA driver functions deepum itself calls (never through its own interposers), resolved
// lazily from libcuda, one definition each for the whole library.
#pragma once

#include <cuda.h>

#include "deepum/cuda/real_function.hpp"

namespace deepum::cuda::driver {

inline RealFunction<decltype(&::cuCtxCreate_v4)> ctx_create{"cuCtxCreate_v4", Library::libcuda};
inline RealFunction<decltype(&::cuCtxGetCurrent)> ctx_get_current{"cuCtxGetCurrent", Library::libcuda};
inline RealFunction<decltype(&::cuCtxGetId)> ctx_get_id{"cuCtxGetId", Library::libcuda};
inline RealFunction<decltype(&::cuCtxGetDevice)> ctx_get_device{"cuCtxGetDevice", Library::libcuda};
inline RealFunction<decltype(&::cuCtxSetCurrent)> ctx_set_current{"cuCtxSetCurrent", Library::libcuda};
inline RealFunction<decltype(&::cuMemDiscardAndPrefetchBatchAsync)> discard_and_prefetch{
    "cuMemDiscardAndPrefetchBatchAsync", Library::libcuda};
inline RealFunction<decltype(&::cuMemDiscardBatchAsync)> discard_batch{"cuMemDiscardBatchAsync",
                                                                       Library::libcuda};
inline RealFunction<decltype(&::cuEventCreate)> event_create{"cuEventCreate", Library::libcuda};
inline RealFunction<decltype(&::cuEventDestroy_v2)> event_destroy{"cuEventDestroy_v2", Library::libcuda};
inline RealFunction<decltype(&::cuEventQuery)> event_query{"cuEventQuery", Library::libcuda};
inline RealFunction<decltype(&::cuEventSynchronize)> event_synchronize{"cuEventSynchronize",
                                                                       Library::libcuda};
inline RealFunction<decltype(&::cuEventElapsedTime_v2)> event_elapsed_time{"cuEventElapsedTime_v2",
                                                                           Library::libcuda};
inline RealFunction<decltype(&::cuEventRecord)> event_record{"cuEventRecord", Library::libcuda};
inline RealFunction<decltype(&::cuGetErrorName)> get_error_name{"cuGetErrorName", Library::libcuda};
inline RealFunction<decltype(&::cuLaunchKernel)> launch_kernel{"cuLaunchKernel", Library::libcuda};
inline RealFunction<decltype(&::cuMemAlloc_v2)> mem_alloc{"cuMemAlloc_v2", Library::libcuda};
inline RealFunction<decltype(&::cuMemAdvise_v2)> mem_advise{"cuMemAdvise_v2", Library::libcuda};
inline RealFunction<decltype(&::cuMemGetInfo_v2)> mem_get_info{"cuMemGetInfo_v2", Library::libcuda};
inline RealFunction<decltype(&::cuMemHostAlloc)> mem_host_alloc{"cuMemHostAlloc", Library::libcuda};
inline RealFunction<decltype(&::cuMemFreeHost)> mem_free_host{"cuMemFreeHost", Library::libcuda};
inline RealFunction<decltype(&::cuMemHostRegister_v2)> mem_host_register{"cuMemHostRegister_v2",
                                                                         Library::libcuda};
inline RealFunction<decltype(&::cuMemHostUnregister)> mem_host_unregister{"cuMemHostUnregister",
                                                                          Library::libcuda};
inline RealFunction<decltype(&::cuMemcpyDtoHAsync_v2)> memcpy_dtoh_async{"cuMemcpyDtoHAsync_v2",
                                                                         Library::libcuda};
inline RealFunction<decltype(&::cuMemcpyAsync)> memcpy_async{"cuMemcpyAsync", Library::libcuda};
inline RealFunction<decltype(&::cuMemcpyBatchAsync_v2)> memcpy_batch_async{"cuMemcpyBatchAsync_v2",
                                                                           Library::libcuda};
inline RealFunction<decltype(&::cuMemcpyHtoDAsync_v2)> memcpy_htod_async{"cuMemcpyHtoDAsync_v2",
                                                                         Library::libcuda};
inline RealFunction<decltype(&::cuMemPrefetchAsync_v2)> prefetch_async{"cuMemPrefetchAsync_v2",
                                                                       Library::libcuda};
inline RealFunction<decltype(&::cuMemPrefetchBatchAsync)> prefetch_batch{"cuMemPrefetchBatchAsync",
                                                                         Library::libcuda};
inline RealFunction<decltype(&::cuModuleGetFunction)> module_get_function{"cuModuleGetFunction",
                                                                          Library::libcuda};
inline RealFunction<decltype(&::cuModuleLoadData)> module_load_data{"cuModuleLoadData", Library::libcuda};
inline RealFunction<decltype(&::cuStreamCreate)> stream_create{"cuStreamCreate", Library::libcuda};
inline RealFunction<decltype(&::cuStreamDestroy_v2)> stream_destroy{"cuStreamDestroy_v2", Library::libcuda};
inline RealFunction<decltype(&::cuStreamIsCapturing)> stream_is_capturing{"cuStreamIsCapturing",
                                                                          Library::libcuda};
inline RealFunction<decltype(&::cuStreamSynchronize)> stream_synchronize{"cuStreamSynchronize",
                                                                         Library::libcuda};
inline RealFunction<decltype(&::cuStreamWaitEvent)> stream_wait_event{"cuStreamWaitEvent", Library::libcuda};

}  // namespace deepum::cuda::driver
