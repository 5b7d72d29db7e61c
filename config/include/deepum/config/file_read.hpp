// Reading a file deepum is pointed at (its configuration file, PyTorch's version file) so that the
// read can neither block nor run without bound: a FIFO named by DEEPUM_CONFIG would hold the program
// in deepum's constructor for ever, and /dev/zero would be read until memory ran out.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace deepum::config {

// The contents of `path` if it is a regular file of at most `max_bytes`; otherwise nullopt, with
// `error` saying why in a few words: "No such file or directory", "a FIFO, not a regular file",
// "2097152 bytes, more than the 1048576 a file may hold here". A device, FIFO or socket is refused
// before it is opened (opening some devices acts on them). Symbolic links are followed: reading
// through one changes nothing, and a configuration file kept elsewhere and linked is common.
std::optional<std::string> read_regular_file(const std::string& path, std::size_t max_bytes,
                                             std::string& error) noexcept;

// "a FIFO", "a directory", "a character device", ... for a st_mode that is not a regular file's.
const char* file_kind(unsigned st_mode);

}  // namespace deepum::config
