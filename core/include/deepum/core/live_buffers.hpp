// LiveBuffers: the buffers an allocator inside the program has handed out and not yet taken back
// (PyTorch's caching allocator, learned through its trace tracker), so that a kernel's pointer
// argument can be given the size of the tensor it names. Written from the allocating thread, read
// from the launch callback: one short lock each, no allocation on the read side.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <unordered_map>

namespace deepum::core {

class LiveBuffers {
 public:
  void handed_out(std::uint64_t address, std::uint64_t bytes);
  void returned(std::uint64_t address);
  // Bytes from `pointer` to the end of the live buffer holding it; 0 when no live buffer does.
  std::uint64_t bytes_from(std::uint64_t pointer) const noexcept;
  std::size_t size() const;

 private:
  mutable std::mutex mutex_;
  std::map<std::uint64_t, std::uint64_t> buffers_;  // address -> bytes
  // The same, found in one step: most pointers a launch names are where their buffer starts, and
  // a walk down the map, whose nodes the program's own work has pushed out of the caches, costs
  // the launch callback about as much as the rest of its work.
  std::unordered_map<std::uint64_t, std::uint64_t> by_start_;
};

}  // namespace deepum::core
