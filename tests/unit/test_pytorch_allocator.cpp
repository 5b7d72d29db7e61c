// The PyTorch allocator seam without PyTorch: a stand-in allocator with PyTorch 2.11's names and
// TraceEntry layout lives in this test binary, and attach_block_tracker must find its method
// through this binary's own symbol table and vtable, hand it a tracker, and decode the entries.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <string>

#include "deepum/pytorch_allocator/elf_symbols.hpp"
#include "deepum/pytorch_allocator/trace_tracker.hpp"

namespace c10 {
namespace CachingDeviceAllocator {
// PyTorch 2.11's layout, 136 bytes (see trace_tracker.cpp).
struct TraceEntry {
  int action_ = 0;
  std::int8_t device_ = 0;
  std::size_t addr_ = 0;
  std::shared_ptr<void> context_;
  void* stream_ = nullptr;
  std::size_t size_ = 0;
  std::pair<unsigned long long, unsigned long long> mempool_{0, 0};
  std::uint64_t time_ = 0;
  std::string compile_context_;
  std::string user_metadata_;
};
}  // namespace CachingDeviceAllocator
namespace cuda::CUDACachingAllocator {
struct CUDAAllocator {
  virtual ~CUDAAllocator() = default;
  virtual void unrelated() {}
  virtual void attachAllocatorTraceTracker(
      std::function<void(const CachingDeviceAllocator::TraceEntry&)>) = 0;
};
namespace Native {
struct NativeCachingAllocator final : CUDAAllocator {
  void attachAllocatorTraceTracker(
      std::function<void(const CachingDeviceAllocator::TraceEntry&)> tracker) override;
  std::function<void(const CachingDeviceAllocator::TraceEntry&)> tracker;
};
// Not inline, so the symbol the lookup searches for exists.
__attribute__((noinline)) void NativeCachingAllocator::attachAllocatorTraceTracker(
    std::function<void(const CachingDeviceAllocator::TraceEntry&)> t) {
  tracker = std::move(t);
}
}  // namespace Native
std::atomic<CUDAAllocator*> allocator{nullptr};
}  // namespace cuda::CUDACachingAllocator
}  // namespace c10

using namespace deepum::pytorch_allocator;
namespace fake = c10::cuda::CUDACachingAllocator;

namespace {

void* lookup_in_this_binary(const char* name) {
  return std::string(name) == "_ZN3c104cuda20CUDACachingAllocator9allocatorE" ? &fake::allocator : nullptr;
}
void* lookup_nothing(const char*) { return nullptr; }

std::string this_binary() {
  char path[4096] = {};
  const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  return n > 0 ? std::string(path, static_cast<std::size_t>(n)) : std::string();
}

// PyTorch keeps version.py one directory above its libraries; the stand-in's is next to the binary's
// directory.
struct VersionFile {
  std::string path;
  explicit VersionFile(const std::string& version) {
    const std::string binary = this_binary();
    path = binary.substr(0, binary.rfind('/')) + "/../version.py";
    std::ofstream(path) << "from typing import Optional\n__version__ = '" << version << "'\ndebug = False\n";
  }
  ~VersionFile() { std::remove(path.c_str()); }
};

}  // namespace

TEST_CASE("find_symbol reads local symbols from .symtab and says why when it cannot") {
  const SymbolLookup found =
      find_symbol(this_binary(),
                  "_ZN3c104cuda20CUDACachingAllocator6Native22NativeCachingAllocator27attachAllocatorTraceTra"
                  "ckerESt8functionIFvRKNS_22CachingDeviceAllocator10TraceEntryEEE");
  CHECK(found.value.has_value());
  CHECK(find_symbol(this_binary(), "no_such_symbol_anywhere").error.find("no symbol") != std::string::npos);
  CHECK(find_symbol("/nonexistent/lib.so", "x").error.find("cannot read") != std::string::npos);
  CHECK(find_symbol("/etc/hostname", "x").error.find("not a 64-bit ELF") != std::string::npos);
}

TEST_CASE("find_symbol reads only regular files, and never blocks on a FIFO") {
  const std::string fifo = "/tmp/deepum_test_elf_fifo." + std::to_string(getpid());
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  const SymbolLookup from_fifo = find_symbol(fifo, "x");
  unlink(fifo.c_str());
  CHECK(from_fifo.error == "cannot read " + fifo + ": not a regular file with contents");
  CHECK(find_symbol("/dev/zero", "x").error == "cannot read /dev/zero: not a regular file with contents");
}

TEST_CASE("only the PyTorch versions whose trace entries deepum can read are accepted") {
  CHECK(known_trace_entry_layout("2.11.0+cu130"));
  CHECK(known_trace_entry_layout("2.10.1"));
  CHECK_FALSE(known_trace_entry_layout("2.9.0"));
  CHECK_FALSE(known_trace_entry_layout("2.1.0"));
  CHECK_FALSE(known_trace_entry_layout("2.12.0"));
  CHECK_FALSE(known_trace_entry_layout(""));
}

TEST_CASE("the tracker is attached through the vtable and decodes alloc and free entries") {
  CHECK(attach_block_tracker([](const BlockEvent&) {}, lookup_nothing).outcome ==
        AttachResult::Outcome::not_pytorch);
  {
    VersionFile version("2.9.1");
    const AttachResult old = attach_block_tracker([](const BlockEvent&) {}, lookup_in_this_binary);
    CHECK(old.outcome == AttachResult::Outcome::unsupported);
    CHECK(old.detail.find("2.9.1") != std::string::npos);
  }
  VersionFile version("2.11.0+cu130");
  fake::allocator.store(nullptr);
  CHECK(attach_block_tracker([](const BlockEvent&) {}, lookup_in_this_binary).outcome ==
        AttachResult::Outcome::not_ready);

  fake::Native::NativeCachingAllocator native;
  fake::allocator.store(&native);
  std::vector<BlockEvent> seen;
  const AttachResult attached =
      attach_block_tracker([&](const BlockEvent& e) { seen.push_back(e); }, lookup_in_this_binary);
  INFO(attached.detail);
  REQUIRE(attached.outcome == AttachResult::Outcome::attached);
  REQUIRE(native.tracker);

  c10::CachingDeviceAllocator::TraceEntry entry;
  entry.action_ = 2;  // FREE_COMPLETED
  entry.device_ = 1;
  entry.addr_ = 0x7f0000200000;
  entry.size_ = 8 << 20;
  entry.stream_ = reinterpret_cast<void*>(0x1234);
  native.tracker(entry);
  entry.action_ = 0;  // ALLOC
  native.tracker(entry);
  entry.action_ = 1;  // FREE_REQUESTED: not reported
  native.tracker(entry);
  entry.action_ = 2;
  entry.mempool_ = {1, 0};  // a graph's private pool: left alone
  native.tracker(entry);
  REQUIRE(seen.size() == 2);
  CHECK(seen[0].kind == BlockEvent::Kind::returned_to_cache);
  CHECK(seen[0].address == 0x7f0000200000);
  CHECK(seen[0].bytes == 8u << 20);
  CHECK(seen[0].stream == reinterpret_cast<void*>(0x1234));
  CHECK(seen[0].device == 1);
  CHECK(seen[1].kind == BlockEvent::Kind::handed_out);
  fake::allocator.store(nullptr);
}
