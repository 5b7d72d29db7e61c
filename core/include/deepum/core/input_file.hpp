// Opening files a user names as input (traces, JSON documents) without trusting what they are: a
// FIFO would block the reader for ever and /dev/zero would never end, so only regular files are
// read, and whole-file reads stop at a size the caller gives.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

namespace deepum::core {

// Opens `path` for reading ("rb", close-on-exec) if it is a regular file; otherwise nullptr and
// `error` says why ("PATH: not a regular file (a FIFO)", "PATH: No such file or directory").
// `size` gets the file's size in bytes.
std::FILE* open_regular_file(const std::string& path, std::uint64_t& size, std::string& error);

// The whole of a regular file of at most `max_bytes`; nullopt and `error` otherwise.
std::optional<std::string> read_regular_file(const std::string& path, std::uint64_t max_bytes,
                                             std::string& error);

}  // namespace deepum::core
