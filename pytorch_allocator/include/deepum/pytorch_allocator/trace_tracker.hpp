// What PyTorch's CUDA caching allocator does with its blocks, learned without patching PyTorch:
// deepum attaches an allocator trace tracker (the callback behind torch.cuda.memory's history) to
// the live allocator, by calling its virtual attachAllocatorTraceTracker. That method is inline in
// PyTorch's headers and exported by no library, so deepum finds the allocator object through its
// exported `allocator` variable, recognises the method in the object's vtable by the address the
// library's own symbol table gives it, and reads the entries by the layout of the PyTorch versions
// it knows (2.10 and 2.11). Anything else, and nothing is attached: deepum says why, once.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace deepum::pytorch_allocator {

struct BlockEvent {
  enum class Kind : std::uint8_t { handed_out, returned_to_cache };
  Kind kind = Kind::handed_out;
  std::uint64_t address = 0;
  std::uint64_t bytes = 0;  // as requested: the block may be larger, never smaller
  void* stream = nullptr;   // the cudaStream_t the block belongs to; reused only on it
  int device = 0;
};

// Runs on the program's thread that allocates or frees, with the allocator's lock held: it must be
// quick and must not call into PyTorch.
using BlockEventHandler = std::function<void(const BlockEvent&)>;

struct AttachResult {
  enum class Outcome : std::uint8_t {
    attached,
    not_pytorch,  // no PyTorch CUDA allocator in this process
    not_ready,    // PyTorch is there but its allocator is not created yet: try again later
    unsupported,  // a PyTorch or allocator backend deepum cannot read safely
  };
  Outcome outcome = Outcome::not_pytorch;
  std::string detail;  // the version found, or what is missing
};

// `lookup` finds an exported symbol in the process (dlsym(RTLD_DEFAULT, name)). Call it from a
// thread that holds no allocator lock (it takes each device's lock once).
AttachResult attach_block_tracker(BlockEventHandler handler, void* (*lookup)(const char* name));

// "2.11.0+cu130" -> true for the versions whose TraceEntry layout deepum reads (2.10, 2.11).
bool known_trace_entry_layout(const std::string& torch_version);

}  // namespace deepum::pytorch_allocator
