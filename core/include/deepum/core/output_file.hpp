// Opening the files deepum writes: the log, the statistics and the traces. deepum runs inside any
// program, as any user, so it opens them as a careful daemon would:
// - never through a symbolic link (O_NOFOLLOW): a link planted where the file is expected would
//   send the write to any file the user can write;
// - a regular file only: an existing FIFO would block the program, a device would be written to;
// - created with mode 0600 whatever the umask, closed on exec (O_CLOEXEC), and no directory created.
// An existing regular file is truncated (statistics, traces) or appended to (the log); its mode stays.
#pragma once

#include <string>
#include <string_view>

namespace deepum::core {

enum class WriteMode { truncate, append };

// The open descriptor (blocking, write-only), or -1 with `error` saying why in a few words ("a
// symbolic link, which deepum does not write through"). The path is used as given: the caller
// expands "%p" first.
int open_output_file(const std::string& path, WriteMode mode, std::string& error) noexcept;

// Writes `text` to `path` as open_output_file(path, WriteMode::truncate) opens it. False with
// `error` saying why if it could not be opened or written in full.
bool write_output_file(const std::string& path, std::string_view text, std::string& error) noexcept;

// Writes all of `bytes` to `fd`, retrying after signals and partial writes. False on an error, or
// where the descriptor would block (never waits for a full pipe).
bool write_all(int fd, std::string_view bytes) noexcept;

// "run-%p" -> "run-12345": each process of a multi-process job gets its own files. Every output
// path deepum takes from its configuration goes through it.
std::string expand_process_id(const std::string& pattern, long pid);

}  // namespace deepum::core
