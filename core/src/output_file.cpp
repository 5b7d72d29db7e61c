#include "deepum/core/output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

#include "deepum/config/file_read.hpp"

namespace deepum::core {
namespace {

constexpr mode_t kCreateMode = 0600;

std::string errno_text(int error) { return std::generic_category().message(error); }

// Why an existing file at `path` may not be written, or empty if it is a regular file (or none).
std::string refusal_of_existing(const std::string& path) {
  struct stat status {};
  if (::lstat(path.c_str(), &status) != 0 || S_ISREG(status.st_mode)) return {};
  if (S_ISLNK(status.st_mode)) return "a symbolic link, which deepum does not write through";
  return std::string(config::file_kind(status.st_mode)) + ", not a regular file";
}

// Why open(2) failed, in the user's terms.
std::string open_failure(const std::string& path, int open_errno) {
  if (std::string refusal = refusal_of_existing(path); !refusal.empty()) return refusal;
  if (open_errno == ENOENT) return errno_text(open_errno) + " (deepum creates no directories)";
  return errno_text(open_errno);
}

int open_checked(const std::string& path, WriteMode mode, std::string& error) {
  // Checked before opening: opening a device can act on it, and a FIFO could block.
  if (error = refusal_of_existing(path); !error.empty()) return -1;
  // O_NOFOLLOW and O_NONBLOCK hold should a link or a FIFO appear between the check and the open.
  const int flags = O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK |
                    (mode == WriteMode::append ? O_APPEND : 0);
  const int fd = ::open(path.c_str(), flags, kCreateMode);
  if (fd < 0) {
    error = open_failure(path, errno);
    return -1;
  }
  struct stat status {};
  if (::fstat(fd, &status) != 0) {
    error = errno_text(errno);
    ::close(fd);
    return -1;
  }
  if (!S_ISREG(status.st_mode)) {
    error = std::string(config::file_kind(status.st_mode)) + ", not a regular file";
    ::close(fd);
    return -1;
  }
  // Truncated only now that it is known to be a regular file; O_NONBLOCK is dropped for the writes.
  if ((mode == WriteMode::truncate && ::ftruncate(fd, 0) != 0) ||
      ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
    error = errno_text(errno);
    ::close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

int open_output_file(const std::string& path, WriteMode mode, std::string& error) noexcept {
  try {
    return open_checked(path, mode, error);
  } catch (...) {
    error = "out of memory";  // short enough for the small-string buffer: no allocation
    return -1;
  }
}

bool write_all(int fd, std::string_view bytes) noexcept {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

bool write_output_file(const std::string& path, std::string_view text, std::string& error) noexcept {
  const int fd = open_output_file(path, WriteMode::truncate, error);
  if (fd < 0) return false;
  const bool written = write_all(fd, text);
  const int write_errno = errno;
  const bool closed = ::close(fd) == 0;
  if (written && closed) return true;
  try {
    error = errno_text(written ? errno : write_errno);
  } catch (...) {
    error = "write failed";
  }
  return false;
}

std::string expand_process_id(const std::string& pattern, long pid) {
  std::string out;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '%' && i + 1 < pattern.size() && pattern[i + 1] == 'p') {
      out += std::to_string(pid);
      ++i;
    } else {
      out += pattern[i];
    }
  }
  return out;
}

}  // namespace deepum::core
