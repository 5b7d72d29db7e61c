// Reading an ELF file's full symbol table (.symtab), which holds the local symbols the dynamic
// table leaves out. deepum uses it to recognise a PyTorch allocator method by its address before
// calling it. Pure C++ over the file's bytes; no CUDA, no PyTorch.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace deepum::pytorch_allocator {

struct SymbolLookup {
  std::optional<std::uint64_t> value;  // st_value of the symbol (relative to the load base for a DSO)
  std::string error;                   // why not found: unreadable file, not ELF64, no .symtab, no symbol
};

// The first symbol in `path`'s .symtab whose name equals `name`.
SymbolLookup find_symbol(const std::string& path, std::string_view name);

}  // namespace deepum::pytorch_allocator
