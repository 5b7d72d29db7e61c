#include "deepum/pytorch_allocator/elf_symbols.hpp"

#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <span>

namespace deepum::pytorch_allocator {
namespace {

using Bytes = std::span<const char>;

template <typename T>
bool read_at(Bytes bytes, std::uint64_t offset, T& out) {
  if (offset > bytes.size() || bytes.size() - offset < sizeof(T)) return false;
  std::memcpy(&out, bytes.data() + offset, sizeof(T));
  return true;
}

// A file mapped read-only. PyTorch's CUDA library is hundreds of megabytes: mapped, only the pages of
// its headers and symbol table are read, and nothing is copied onto the heap.
class MappedFile {
 public:
  // Maps `path` if it is a non-empty regular file; otherwise error() says why.
  explicit MappedFile(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) {
      error_ = "cannot read " + path;
      return;
    }
    struct stat status {};
    if (::fstat(fd, &status) != 0 || !S_ISREG(status.st_mode) || status.st_size <= 0) {
      error_ = "cannot read " + path + ": not a regular file with contents";
    } else {
      size_ = static_cast<std::size_t>(status.st_size);
      void* address = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
      if (address == MAP_FAILED) {
        error_ = "cannot read " + path + ": mmap failed";
      } else {
        data_ = static_cast<const char*>(address);
      }
    }
    ::close(fd);
  }
  ~MappedFile() {
    if (data_ != nullptr) ::munmap(const_cast<char*>(data_), size_);
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const std::string& error() const { return error_; }
  Bytes bytes() const { return data_ == nullptr ? Bytes{} : Bytes(data_, size_); }

 private:
  const char* data_ = nullptr;
  std::size_t size_ = 0;
  std::string error_;
};

}  // namespace

SymbolLookup find_symbol(const std::string& path, std::string_view name) {
  SymbolLookup result;
  const MappedFile file(path);
  if (!file.error().empty()) {
    result.error = file.error();
    return result;
  }
  const Bytes bytes = file.bytes();
  Elf64_Ehdr header{};
  if (!read_at(bytes, 0, header) || std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 ||
      header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_shentsize != sizeof(Elf64_Shdr)) {
    result.error = path + " is not a 64-bit ELF file";
    return result;
  }
  for (std::uint16_t i = 0; i < header.e_shnum; ++i) {
    Elf64_Shdr section{};
    if (!read_at(bytes, header.e_shoff + std::uint64_t{i} * sizeof(Elf64_Shdr), section)) break;
    if (section.sh_type != SHT_SYMTAB || section.sh_entsize != sizeof(Elf64_Sym)) continue;
    Elf64_Shdr strings{};
    if (!read_at(bytes, header.e_shoff + std::uint64_t{section.sh_link} * sizeof(Elf64_Shdr), strings)) break;
    for (std::uint64_t offset = 0; offset + sizeof(Elf64_Sym) <= section.sh_size;
         offset += sizeof(Elf64_Sym)) {
      Elf64_Sym symbol{};
      if (!read_at(bytes, section.sh_offset + offset, symbol)) break;
      const std::uint64_t at = strings.sh_offset + symbol.st_name;
      if (symbol.st_name >= strings.sh_size || at >= bytes.size()) continue;
      const char* text = bytes.data() + at;
      const std::size_t room = static_cast<std::size_t>(
          std::min<std::uint64_t>(bytes.size() - at, strings.sh_size - symbol.st_name));
      if (strnlen(text, room) == name.size() && std::memcmp(text, name.data(), name.size()) == 0) {
        result.value = symbol.st_value;
        return result;
      }
    }
    result.error = "no symbol " + std::string(name) + " in " + path;
    return result;
  }
  result.error = path + " has no symbol table (.symtab)";
  return result;
}

}  // namespace deepum::pytorch_allocator
