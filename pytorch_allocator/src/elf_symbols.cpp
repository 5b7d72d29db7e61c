#include "deepum/pytorch_allocator/elf_symbols.hpp"

#include <elf.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

namespace deepum::pytorch_allocator {
namespace {

template <typename T>
bool read_at(const std::vector<char>& bytes, std::uint64_t offset, T& out) {
  if (offset > bytes.size() || bytes.size() - offset < sizeof(T)) return false;
  std::memcpy(&out, bytes.data() + offset, sizeof(T));
  return true;
}

}  // namespace

SymbolLookup find_symbol(const std::string& path, std::string_view name) {
  SymbolLookup result;
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    result.error = "cannot read " + path;
    return result;
  }
  const std::vector<char> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
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
