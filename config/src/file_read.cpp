#include "deepum/config/file_read.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <system_error>

namespace deepum::config {
namespace {

std::string errno_text(int error) { return std::generic_category().message(error); }

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// Why a file of this type and size is refused, or empty if it is a regular file that fits.
std::string refusal(const struct stat& status, std::size_t max_bytes) {
  if (!S_ISREG(status.st_mode)) return std::string(file_kind(status.st_mode)) + ", not a regular file";
  if (static_cast<std::uint64_t>(status.st_size) > max_bytes) {
    return std::to_string(status.st_size) + " bytes, more than the " + std::to_string(max_bytes) +
           " a file may hold here";
  }
  return {};
}

// Reads at most max_bytes + 1 bytes, so that a file which grew past the limit is seen to.
bool read_at_most(int fd, std::size_t max_bytes, std::string& text, std::string& error) {
  std::array<char, 16384> buffer{};
  while (text.size() <= max_bytes) {
    const std::size_t want = std::min(buffer.size(), max_bytes + 1 - text.size());
    const ssize_t n = ::read(fd, buffer.data(), want);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      error = errno_text(errno);
      return false;
    }
    if (n == 0) return true;
    text.append(buffer.data(), static_cast<std::size_t>(n));
  }
  error = "more than the " + std::to_string(max_bytes) + " bytes a file may hold here";
  return false;
}

std::optional<std::string> read_checked(const std::string& path, std::size_t max_bytes, std::string& error) {
  struct stat status {};
  if (::stat(path.c_str(), &status) != 0) {
    error = errno_text(errno);
    return std::nullopt;
  }
  if (error = refusal(status, max_bytes); !error.empty()) return std::nullopt;
  // O_NONBLOCK: should a FIFO replace the file between the stat and the open, the open returns.
  const FileDescriptor file(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (file.get() < 0 || ::fstat(file.get(), &status) != 0) {
    error = errno_text(errno);
    return std::nullopt;
  }
  if (error = refusal(status, max_bytes); !error.empty()) return std::nullopt;
  std::string text;
  if (!read_at_most(file.get(), max_bytes, text, error)) return std::nullopt;
  return text;
}

}  // namespace

const char* file_kind(unsigned st_mode) {
  if (S_ISREG(st_mode)) return "a regular file";
  if (S_ISDIR(st_mode)) return "a directory";
  if (S_ISFIFO(st_mode)) return "a FIFO";
  if (S_ISCHR(st_mode)) return "a character device";
  if (S_ISBLK(st_mode)) return "a block device";
  if (S_ISSOCK(st_mode)) return "a socket";
  if (S_ISLNK(st_mode)) return "a symbolic link";
  return "an unknown kind of file";
}

std::optional<std::string> read_regular_file(const std::string& path, std::size_t max_bytes,
                                             std::string& error) noexcept {
  try {
    return read_checked(path, max_bytes, error);
  } catch (...) {
    error = "out of memory";  // short enough for the small-string buffer: no allocation
    return std::nullopt;
  }
}

}  // namespace deepum::config
