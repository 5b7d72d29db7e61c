// Interposers for NCCL's calls that hand it buffers (nccl.h, 2.32). NCCL's kernels reach those
// buffers through NCCL's own structures, never through their parameters, so the buffers are named
// before the real call, on its stream, as a launch's are (core/indirect_kernels.hpp); the kernels
// the call launches then pass the launch callback untouched (see PipelineSink::before_collective).
// The types are NCCL's, spelt as their
// ABI is (enums are ints, handles pointers), so that no NCCL header is needed to build.
#include <cstddef>
#include <cstdint>

#include "deepum/core/indirect_kernels.hpp"
#include "deepum/cuda/real_function.hpp"
#include "deepum/cuda/tracing_session.hpp"
#include "interposer_support.hpp"

#define DEEPUM_EXPORT extern "C" __attribute__((visibility("default")))

namespace deepum::preload {
namespace {

using core::Collective;
using cuda::Library;
using cuda::RealFunction;

using Result = int;          // ncclResult_t
using DataType = int;        // ncclDataType_t
using RedOp = int;           // ncclRedOp_t
using Comm = void*;          // ncclComm_t
using Stream = void*;        // cudaStream_t
using Config = const void*;  // const ncclCollConfig_t*

// What NCCL itself returns when a system call or library it needs fails: the program called into
// NCCL, so it is loaded; this answers only if it cannot be found.
constexpr Result kSystemError = 2;

using AllReduceFn = Result (*)(const void*, void*, std::size_t, DataType, RedOp, Comm, Stream);
using RootedFn = Result (*)(const void*, void*, std::size_t, DataType, int, Comm,
                            Stream);  // broadcast, gather, scatter
using ReduceFn = Result (*)(const void*, void*, std::size_t, DataType, RedOp, int, Comm, Stream);
using GatherAllFn = Result (*)(const void*, void*, std::size_t, DataType, Comm,
                               Stream);  // all-gather, all-to-all
using BcastFn = Result (*)(void*, std::size_t, DataType, int, Comm, Stream);
using PeerFn = Result (*)(const void*, std::size_t, DataType, int, Comm, Stream);  // send, recv
using AllReduceConfigFn = Result (*)(const void*, void*, std::size_t, DataType, RedOp, Comm, Stream, Config);
using RootedConfigFn = Result (*)(const void*, void*, std::size_t, DataType, int, Comm, Stream, Config);
using ReduceConfigFn = Result (*)(const void*, void*, std::size_t, DataType, RedOp, int, Comm, Stream,
                                  Config);
using GatherAllConfigFn = Result (*)(const void*, void*, std::size_t, DataType, Comm, Stream, Config);

RealFunction<AllReduceFn> real_all_reduce{"ncclAllReduce", Library::nccl};
RealFunction<AllReduceFn> real_reduce_scatter{"ncclReduceScatter", Library::nccl};
RealFunction<RootedFn> real_broadcast{"ncclBroadcast", Library::nccl};
RealFunction<RootedFn> real_gather{"ncclGather", Library::nccl};
RealFunction<RootedFn> real_scatter{"ncclScatter", Library::nccl};
RealFunction<ReduceFn> real_reduce{"ncclReduce", Library::nccl};
RealFunction<GatherAllFn> real_all_gather{"ncclAllGather", Library::nccl};
RealFunction<GatherAllFn> real_all_to_all{"ncclAlltoAll", Library::nccl};
RealFunction<BcastFn> real_bcast{"ncclBcast", Library::nccl};
RealFunction<PeerFn> real_send{"ncclSend", Library::nccl};
RealFunction<PeerFn> real_recv{"ncclRecv", Library::nccl};
RealFunction<AllReduceConfigFn> real_all_reduce_config{"ncclAllReduceConfig", Library::nccl};
RealFunction<AllReduceConfigFn> real_reduce_scatter_config{"ncclReduceScatterConfig", Library::nccl};
RealFunction<RootedConfigFn> real_broadcast_config{"ncclBroadcastConfig", Library::nccl};
RealFunction<RootedConfigFn> real_gather_config{"ncclGatherConfig", Library::nccl};
RealFunction<RootedConfigFn> real_scatter_config{"ncclScatterConfig", Library::nccl};
RealFunction<ReduceConfigFn> real_reduce_config{"ncclReduceConfig", Library::nccl};
RealFunction<GatherAllConfigFn> real_all_gather_config{"ncclAllGatherConfig", Library::nccl};
RealFunction<GatherAllConfigFn> real_all_to_all_config{"ncclAlltoAllConfig", Library::nccl};
RealFunction<Result (*)()> real_group_end{"ncclGroupEnd", Library::nccl};
RealFunction<Result (*)(Comm, int*)> real_comm_count{"ncclCommCount", Library::nccl};

// The communicator's size where the call's extent depends on it; 0 where it does not or is unknown.
int ranks_for(Collective call, Comm comm) {
  switch (call) {
    case Collective::all_gather:
    case Collective::reduce_scatter:
    case Collective::all_to_all:
    case Collective::gather:
    case Collective::scatter: {
      int ranks = 0;
      auto count = real_comm_count.get();
      return count != nullptr && count(comm, &ranks) == 0 ? ranks : 0;
    }
    default:
      return 0;
  }
}

// Names the call's buffers before it, then makes the real call with the thread marked as inside
// one (its kernels launch there, or at the group's end).
template <typename Fn, typename... Args>
Result around(Collective call, const void* send, const void* recv, std::size_t count, DataType type,
              Comm comm, Stream stream, Fn real, Args... args) {
  if (real == nullptr) return kSystemError;
  if (const core::Session* session = core::Session::if_created(); session != nullptr && session->active()) {
    const auto address = [](const void* p) {
      return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(p));
    };
    cuda::before_collective(
        core::collective_buffers(call, address(send), address(recv), count, type, ranks_for(call, comm)),
        address(stream));
  }
  const core::CollectiveCallScope inside;
  return real(args...);
}

}  // namespace
}  // namespace deepum::preload

using namespace deepum::preload;  // NOLINT: the exports below are the shim over that namespace

DEEPUM_EXPORT Result ncclAllReduce(const void* send, void* recv, std::size_t count, DataType type, RedOp op,
                                   Comm comm, Stream stream) {
  return around(Collective::all_reduce, send, recv, count, type, comm, stream, real_all_reduce.get(), send,
                recv, count, type, op, comm, stream);
}

DEEPUM_EXPORT Result ncclReduceScatter(const void* send, void* recv, std::size_t count, DataType type,
                                       RedOp op, Comm comm, Stream stream) {
  return around(Collective::reduce_scatter, send, recv, count, type, comm, stream, real_reduce_scatter.get(),
                send, recv, count, type, op, comm, stream);
}

DEEPUM_EXPORT Result ncclBroadcast(const void* send, void* recv, std::size_t count, DataType type, int root,
                                   Comm comm, Stream stream) {
  return around(Collective::broadcast, send, recv, count, type, comm, stream, real_broadcast.get(), send,
                recv, count, type, root, comm, stream);
}

DEEPUM_EXPORT Result ncclBcast(void* buffer, std::size_t count, DataType type, int root, Comm comm,
                               Stream stream) {
  return around(Collective::broadcast, buffer, buffer, count, type, comm, stream, real_bcast.get(), buffer,
                count, type, root, comm, stream);
}

DEEPUM_EXPORT Result ncclReduce(const void* send, void* recv, std::size_t count, DataType type, RedOp op,
                                int root, Comm comm, Stream stream) {
  return around(Collective::reduce, send, recv, count, type, comm, stream, real_reduce.get(), send, recv,
                count, type, op, root, comm, stream);
}

DEEPUM_EXPORT Result ncclAllGather(const void* send, void* recv, std::size_t count, DataType type, Comm comm,
                                   Stream stream) {
  return around(Collective::all_gather, send, recv, count, type, comm, stream, real_all_gather.get(), send,
                recv, count, type, comm, stream);
}

DEEPUM_EXPORT Result ncclAlltoAll(const void* send, void* recv, std::size_t count, DataType type, Comm comm,
                                  Stream stream) {
  return around(Collective::all_to_all, send, recv, count, type, comm, stream, real_all_to_all.get(), send,
                recv, count, type, comm, stream);
}

DEEPUM_EXPORT Result ncclGather(const void* send, void* recv, std::size_t count, DataType type, int root,
                                Comm comm, Stream stream) {
  return around(Collective::gather, send, recv, count, type, comm, stream, real_gather.get(), send, recv,
                count, type, root, comm, stream);
}

DEEPUM_EXPORT Result ncclScatter(const void* send, void* recv, std::size_t count, DataType type, int root,
                                 Comm comm, Stream stream) {
  return around(Collective::scatter, send, recv, count, type, comm, stream, real_scatter.get(), send, recv,
                count, type, root, comm, stream);
}

DEEPUM_EXPORT Result ncclSend(const void* send, std::size_t count, DataType type, int peer, Comm comm,
                              Stream stream) {
  return around(Collective::send, send, nullptr, count, type, comm, stream, real_send.get(), send, count,
                type, peer, comm, stream);
}

DEEPUM_EXPORT Result ncclRecv(void* recv, std::size_t count, DataType type, int peer, Comm comm,
                              Stream stream) {
  return around(Collective::recv, nullptr, recv, count, type, comm, stream, real_recv.get(), recv, count,
                type, peer, comm, stream);
}

DEEPUM_EXPORT Result ncclAllReduceConfig(const void* send, void* recv, std::size_t count, DataType type,
                                         RedOp op, Comm comm, Stream stream, Config config) {
  return around(Collective::all_reduce, send, recv, count, type, comm, stream, real_all_reduce_config.get(),
                send, recv, count, type, op, comm, stream, config);
}

DEEPUM_EXPORT Result ncclReduceScatterConfig(const void* send, void* recv, std::size_t count, DataType type,
                                             RedOp op, Comm comm, Stream stream, Config config) {
  return around(Collective::reduce_scatter, send, recv, count, type, comm, stream,
                real_reduce_scatter_config.get(), send, recv, count, type, op, comm, stream, config);
}

DEEPUM_EXPORT Result ncclBroadcastConfig(const void* send, void* recv, std::size_t count, DataType type,
                                         int root, Comm comm, Stream stream, Config config) {
  return around(Collective::broadcast, send, recv, count, type, comm, stream, real_broadcast_config.get(),
                send, recv, count, type, root, comm, stream, config);
}

DEEPUM_EXPORT Result ncclReduceConfig(const void* send, void* recv, std::size_t count, DataType type,
                                      RedOp op, int root, Comm comm, Stream stream, Config config) {
  return around(Collective::reduce, send, recv, count, type, comm, stream, real_reduce_config.get(), send,
                recv, count, type, op, root, comm, stream, config);
}

DEEPUM_EXPORT Result ncclAllGatherConfig(const void* send, void* recv, std::size_t count, DataType type,
                                         Comm comm, Stream stream, Config config) {
  return around(Collective::all_gather, send, recv, count, type, comm, stream, real_all_gather_config.get(),
                send, recv, count, type, comm, stream, config);
}

DEEPUM_EXPORT Result ncclAlltoAllConfig(const void* send, void* recv, std::size_t count, DataType type,
                                        Comm comm, Stream stream, Config config) {
  return around(Collective::all_to_all, send, recv, count, type, comm, stream, real_all_to_all_config.get(),
                send, recv, count, type, comm, stream, config);
}

DEEPUM_EXPORT Result ncclGatherConfig(const void* send, void* recv, std::size_t count, DataType type,
                                      int root, Comm comm, Stream stream, Config config) {
  return around(Collective::gather, send, recv, count, type, comm, stream, real_gather_config.get(), send,
                recv, count, type, root, comm, stream, config);
}

DEEPUM_EXPORT Result ncclScatterConfig(const void* send, void* recv, std::size_t count, DataType type,
                                       int root, Comm comm, Stream stream, Config config) {
  return around(Collective::scatter, send, recv, count, type, comm, stream, real_scatter_config.get(), send,
                recv, count, type, root, comm, stream, config);
}

// A group's kernels launch here, for the calls named as they were made.
DEEPUM_EXPORT Result ncclGroupEnd() {
  auto real = real_group_end.get();
  if (real == nullptr) return kSystemError;
  const deepum::core::CollectiveCallScope inside;
  return real();
}
