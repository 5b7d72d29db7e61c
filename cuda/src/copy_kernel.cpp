#include "deepum/cuda/copy_kernel.hpp"

#include <array>
#include <string_view>

#include "deepum/core/events.hpp"
#include "deepum/cuda/driver_functions.hpp"

namespace deepum::cuda {
using namespace driver;

namespace {

constexpr unsigned kThreads = 256;
constexpr unsigned kBlocksPerCopy = 32;  // 8,192 threads: 16 loads of 16 bytes each for 2 MB

// Block y copies table[y]: 16 bytes a thread and step, strided over the grid's x. PTX 7.0 for
// sm_70 runs on every GPU that has cuMemDiscardAndPrefetchBatchAsync.
constexpr const char* kPtx = R"(
.version 7.0
.target sm_70
.address_size 64

.visible .entry deepum_copy_within_gpu(
	.param .align 8 .b8 table[384]
)
{
	.reg .pred %p<2>;
	.reg .b32 %r<6>;
	.reg .b64 %rd<14>;

	mov.u32 %r1, %ctaid.y;
	mov.u64 %rd1, table;
	mul.wide.u32 %rd2, %r1, 24;
	add.u64 %rd3, %rd1, %rd2;
	ld.param.u64 %rd4, [%rd3];
	ld.param.u64 %rd5, [%rd3+8];
	ld.param.u64 %rd6, [%rd3+16];
	shr.u64 %rd6, %rd6, 4;
	mov.u32 %r2, %ctaid.x;
	mov.u32 %r3, %ntid.x;
	mov.u32 %r4, %tid.x;
	mov.u32 %r5, %nctaid.x;
	cvt.u64.u32 %rd7, %r4;
	mad.wide.u32 %rd7, %r2, %r3, %rd7;
	mul.wide.u32 %rd8, %r5, %r3;
NEXT:
	setp.ge.u64 %p1, %rd7, %rd6;
	@%p1 bra DONE;
	shl.b64 %rd9, %rd7, 4;
	add.u64 %rd10, %rd5, %rd9;
	ld.global.v2.u64 {%rd11, %rd12}, [%rd10];
	add.u64 %rd13, %rd4, %rd9;
	st.global.v2.u64 [%rd13], {%rd11, %rd12};
	add.u64 %rd7, %rd7, %rd8;
	bra NEXT;
DONE:
	ret;
}
)";

}  // namespace

// The tracer tells the kernel's records apart by this name.
static_assert(std::string_view(kPtx).find(core::kOwnCopyKernelName) != std::string_view::npos);

const char* CopyKernel::ptx() { return kPtx; }

bool CopyKernel::takes(const DeviceCopy& copy) {
  return (copy.destination | copy.source | copy.bytes) % 16 == 0;
}

bool CopyKernel::load() {
  if (asked_) return loaded();
  asked_ = true;
  if (module_load_data.get() == nullptr || module_get_function.get() == nullptr ||
      launch_kernel.get() == nullptr)
    return false;
  // The module stays loaded for the context's life: its kernel may run until the context ends.
  CUmodule module = nullptr;
  if (module_load_data.get()(&module, kPtx) != CUDA_SUCCESS) return false;
  if (module_get_function.get()(&function_, module, core::kOwnCopyKernelName) != CUDA_SUCCESS)
    function_ = nullptr;
  return loaded();
}

CUresult CopyKernel::launch(std::span<const DeviceCopy> copies, CUstream on) const {
  if (function_ == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  if (copies.empty()) return CUDA_SUCCESS;
  if (copies.size() > kMaxCopies) return CUDA_ERROR_INVALID_VALUE;
  // The kernel's one parameter: the table of (destination, source, bytes), by value.
  std::array<std::uint64_t, kMaxCopies * 3> table{};
  for (std::size_t i = 0; i < copies.size(); ++i) {
    table[i * 3] = copies[i].destination;
    table[i * 3 + 1] = copies[i].source;
    table[i * 3 + 2] = copies[i].bytes;
  }
  void* parameters[] = {table.data()};
  return launch_kernel.get()(function_, kBlocksPerCopy, static_cast<unsigned>(copies.size()), 1, kThreads, 1,
                             1, 0, on, parameters, nullptr);
}

}  // namespace deepum::cuda
