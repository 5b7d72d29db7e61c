// Driver interposers for what changes under deepum's feet: kernel handles handed out and modules
// unloaded (each kernel's parameter layout is learned here, never inside a CUPTI callback), stream
// captures begun and ended (deepum makes no query or move while one runs), and contexts reset or
// destroyed (deepum's streams and events die with them). Each passes the call through unchanged.
#include <cuda.h>

#include <iterator>

#include "deepum/cuda/tracing_session.hpp"
#include "driver_calls.hpp"
#include "driver_entry_points.hpp"
#include "interposer_support.hpp"

#define DEEPUM_EXPORT extern "C" __attribute__((visibility("default")))

using deepum::core::kNoMaxVersion;
using deepum::core::StreamVariant;

namespace deepum::preload {
namespace {

RealFunction<decltype(&::cuModuleGetFunction)> real_module_get_function{"cuModuleGetFunction",
                                                                        Library::libcuda};
RealFunction<decltype(&::cuLibraryGetKernel)> real_library_get_kernel{"cuLibraryGetKernel", Library::libcuda};
RealFunction<decltype(&::cuKernelGetFunction)> real_kernel_get_function{"cuKernelGetFunction",
                                                                        Library::libcuda};
RealFunction<decltype(&::cuKernelGetLibrary)> real_kernel_get_library{"cuKernelGetLibrary", Library::libcuda};
RealFunction<decltype(&::cuModuleUnload)> real_module_unload{"cuModuleUnload", Library::libcuda};
RealFunction<decltype(&::cuLibraryUnload)> real_library_unload{"cuLibraryUnload", Library::libcuda};
using BeginCapture = CUresult (*)(CUstream, CUstreamCaptureMode);
RealFunction<BeginCapture> real_begin_capture{"cuStreamBeginCapture_v2", Library::libcuda};
RealFunction<BeginCapture> real_begin_capture_ptsz{"cuStreamBeginCapture_v2_ptsz", Library::libcuda};
using BeginCaptureToGraph = CUresult (*)(CUstream, CUgraph, const CUgraphNode*, const CUgraphEdgeData*,
                                         size_t, CUstreamCaptureMode);
RealFunction<BeginCaptureToGraph> real_begin_capture_to_graph{"cuStreamBeginCaptureToGraph",
                                                              Library::libcuda};
RealFunction<BeginCaptureToGraph> real_begin_capture_to_graph_ptsz{"cuStreamBeginCaptureToGraph_ptsz",
                                                                   Library::libcuda};
using EndCapture = CUresult (*)(CUstream, CUgraph*);
RealFunction<EndCapture> real_end_capture{"cuStreamEndCapture", Library::libcuda};
RealFunction<EndCapture> real_end_capture_ptsz{"cuStreamEndCapture_ptsz", Library::libcuda};
RealFunction<decltype(&::cuDevicePrimaryCtxReset_v2)> real_primary_ctx_reset{"cuDevicePrimaryCtxReset_v2",
                                                                             Library::libcuda};
RealFunction<decltype(&::cuCtxDestroy_v2)> real_ctx_destroy{"cuCtxDestroy_v2", Library::libcuda};

template <typename Handle>
std::uint64_t id_of(Handle handle) {
  return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(handle));
}

// The real function, or the driver's "not found" when libcuda lacks it (an older driver): the
// program then gets the error it would get from that driver.
template <typename Fn, typename... Args>
CUresult call(RealFunction<Fn>& real, Args... args) {
  Fn fn = real.get();
  return fn != nullptr ? fn(args...) : CUDA_ERROR_NOT_FOUND;
}

bool managing() { return managing_session() != nullptr; }

// A capture begins: deepum's queries end and its moves settle first (cuda::before_stream_capture);
// if the driver refuses it, nothing began.
template <typename Begin>
CUresult begin_capture(Begin&& begin) {
  const bool managed = managing();
  if (managed) cuda::before_stream_capture();
  const CUresult result = begin();
  if (managed && result != CUDA_SUCCESS) cuda::after_stream_capture();
  return result;
}

// The capture ends whether its graph is valid or was invalidated; other errors leave it running.
CUresult end_capture(CUresult result) {
  if ((result == CUDA_SUCCESS || result == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED) && managing())
    cuda::after_stream_capture();
  return result;
}

}  // namespace
}  // namespace deepum::preload

using namespace deepum::preload;  // NOLINT: the exports below are the shim over that namespace

DEEPUM_EXPORT CUresult cuModuleGetFunction(CUfunction* hfunc, CUmodule hmod, const char* name) {
  const CUresult result = call(real_module_get_function, hfunc, hmod, name);
  if (result == CUDA_SUCCESS && hfunc != nullptr && managing())
    deepum::cuda::note_function_handed_out(id_of(*hfunc), /*kernel=*/false, id_of(hmod));
  return result;
}

DEEPUM_EXPORT CUresult cuLibraryGetKernel(CUkernel* pKernel, CUlibrary library, const char* name) {
  const CUresult result = call(real_library_get_kernel, pKernel, library, name);
  if (result == CUDA_SUCCESS && pKernel != nullptr && managing())
    deepum::cuda::note_function_handed_out(id_of(*pKernel), /*kernel=*/true, id_of(library));
  return result;
}

DEEPUM_EXPORT CUresult cuKernelGetFunction(CUfunction* pFunc, CUkernel kernel) {
  const CUresult result = call(real_kernel_get_function, pFunc, kernel);
  if (result == CUDA_SUCCESS && pFunc != nullptr && managing()) {
    // Its library's unload ends it (and its context's reset); no library known: the reset only.
    CUlibrary library = nullptr;
    if (call(real_kernel_get_library, &library, kernel) != CUDA_SUCCESS) library = nullptr;
    deepum::cuda::note_function_handed_out(id_of(*pFunc), /*kernel=*/false, id_of(library));
  }
  return result;
}

DEEPUM_EXPORT CUresult cuModuleUnload(CUmodule hmod) {
  if (managing()) deepum::cuda::note_module_unloading(id_of(hmod));
  return call(real_module_unload, hmod);
}

DEEPUM_EXPORT CUresult cuLibraryUnload(CUlibrary library) {
  if (managing()) deepum::cuda::note_module_unloading(id_of(library));
  return call(real_library_unload, library);
}

DEEPUM_EXPORT CUresult cuStreamBeginCapture_v2(CUstream stream, CUstreamCaptureMode mode) {
  return begin_capture([&] { return call(real_begin_capture, stream, mode); });
}

DEEPUM_EXPORT CUresult cuStreamBeginCapture_v2_ptsz(CUstream stream, CUstreamCaptureMode mode) {
  return begin_capture([&] { return call(real_begin_capture_ptsz, stream, mode); });
}

DEEPUM_EXPORT CUresult cuStreamBeginCaptureToGraph(CUstream stream, CUgraph graph,
                                                   const CUgraphNode* dependencies,
                                                   const CUgraphEdgeData* edges, size_t count,
                                                   CUstreamCaptureMode mode) {
  return begin_capture(
      [&] { return call(real_begin_capture_to_graph, stream, graph, dependencies, edges, count, mode); });
}

DEEPUM_EXPORT CUresult cuStreamBeginCaptureToGraph_ptsz(CUstream stream, CUgraph graph,
                                                        const CUgraphNode* dependencies,
                                                        const CUgraphEdgeData* edges, size_t count,
                                                        CUstreamCaptureMode mode) {
  return begin_capture([&] {
    return call(real_begin_capture_to_graph_ptsz, stream, graph, dependencies, edges, count, mode);
  });
}

DEEPUM_EXPORT CUresult cuStreamEndCapture(CUstream stream, CUgraph* graph) {
  return end_capture(call(real_end_capture, stream, graph));
}

DEEPUM_EXPORT CUresult cuStreamEndCapture_ptsz(CUstream stream, CUgraph* graph) {
  return end_capture(call(real_end_capture_ptsz, stream, graph));
}

DEEPUM_EXPORT CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev) {
  if (managing()) {
    deepum::cuda::before_context_reset(static_cast<int>(dev));
    driver::forget_context_memory(static_cast<int>(dev));
  }
  return call(real_primary_ctx_reset, dev);
}

DEEPUM_EXPORT CUresult cuCtxDestroy_v2(CUcontext ctx) {
  if (managing()) deepum::cuda::before_context_destroy(id_of(ctx));
  return call(real_ctx_destroy, ctx);
}

namespace deepum::preload {

// Every export above, with the names and versions under which the driver hands it out.
const DriverEntryPoint kLifecycleEntryPoints[] = {
    {{"cuModuleGetFunction", "cuModuleGetFunction", 2000, kNoMaxVersion, StreamVariant::not_applicable},
     reinterpret_cast<void*>(&cuModuleGetFunction),
     [](void* fn) { real_module_get_function.set(fn); }},
    {{"cuLibraryGetKernel", "cuLibraryGetKernel", 12000, kNoMaxVersion, StreamVariant::not_applicable},
     reinterpret_cast<void*>(&cuLibraryGetKernel),
     [](void* fn) { real_library_get_kernel.set(fn); }},
    {{"cuKernelGetFunction", "cuKernelGetFunction", 12000, kNoMaxVersion, StreamVariant::not_applicable},
     reinterpret_cast<void*>(&cuKernelGetFunction),
     [](void* fn) { real_kernel_get_function.set(fn); }},
    {{"cuModuleUnload", "cuModuleUnload", 2000, kNoMaxVersion, StreamVariant::not_applicable},
     reinterpret_cast<void*>(&cuModuleUnload),
     [](void* fn) { real_module_unload.set(fn); }},
    {{"cuLibraryUnload", "cuLibraryUnload", 12000, kNoMaxVersion, StreamVariant::not_applicable},
     reinterpret_cast<void*>(&cuLibraryUnload),
     [](void* fn) { real_library_unload.set(fn); }},
    {{"cuStreamBeginCapture_v2", "cuStreamBeginCapture", 10010, kNoMaxVersion, StreamVariant::legacy},
     reinterpret_cast<void*>(&cuStreamBeginCapture_v2),
     [](void* fn) { real_begin_capture.set(fn); }},
    {{"cuStreamBeginCapture_v2_ptsz", "cuStreamBeginCapture", 10010, kNoMaxVersion,
      StreamVariant::per_thread},
     reinterpret_cast<void*>(&cuStreamBeginCapture_v2_ptsz),
     [](void* fn) { real_begin_capture_ptsz.set(fn); }},
    {{"cuStreamBeginCaptureToGraph", "cuStreamBeginCaptureToGraph", 12030, kNoMaxVersion,
      StreamVariant::legacy},
     reinterpret_cast<void*>(&cuStreamBeginCaptureToGraph),
     [](void* fn) { real_begin_capture_to_graph.set(fn); }},
    {{"cuStreamBeginCaptureToGraph_ptsz", "cuStreamBeginCaptureToGraph", 12030, kNoMaxVersion,
      StreamVariant::per_thread},
     reinterpret_cast<void*>(&cuStreamBeginCaptureToGraph_ptsz),
     [](void* fn) { real_begin_capture_to_graph_ptsz.set(fn); }},
    {{"cuStreamEndCapture", "cuStreamEndCapture", 10000, kNoMaxVersion, StreamVariant::legacy},
     reinterpret_cast<void*>(&cuStreamEndCapture),
     [](void* fn) { real_end_capture.set(fn); }},
    {{"cuStreamEndCapture_ptsz", "cuStreamEndCapture", 10000, kNoMaxVersion, StreamVariant::per_thread},
     reinterpret_cast<void*>(&cuStreamEndCapture_ptsz),
     [](void* fn) { real_end_capture_ptsz.set(fn); }},
    {{"cuDevicePrimaryCtxReset_v2", "cuDevicePrimaryCtxReset", 11000, kNoMaxVersion,
      StreamVariant::not_applicable},
     reinterpret_cast<void*>(&cuDevicePrimaryCtxReset_v2),
     [](void* fn) { real_primary_ctx_reset.set(fn); }},
    {{"cuCtxDestroy_v2", "cuCtxDestroy", 4000, kNoMaxVersion, StreamVariant::not_applicable},
     reinterpret_cast<void*>(&cuCtxDestroy_v2),
     [](void* fn) { real_ctx_destroy.set(fn); }},
};

std::span<const DriverEntryPoint> lifecycle_entry_points() { return kLifecycleEntryPoints; }

}  // namespace deepum::preload
