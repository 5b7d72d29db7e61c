#include "deepum/core/input_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "deepum/core/statistics.hpp"

namespace deepum::core {

namespace {

std::string_view file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

}  // namespace

std::FILE* open_regular_file(const std::string& path, std::uint64_t& size, std::string& error) {
  // O_NONBLOCK: opening a FIFO with no writer would otherwise wait for one.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    error = fmt::format("{}: cannot open: {}", path, std::strerror(errno));
    return nullptr;
  }
  struct stat info {};
  if (fstat(fd, &info) != 0) {
    error = fmt::format("{}: cannot stat: {}", path, std::strerror(errno));
    ::close(fd);
    return nullptr;
  }
  if (!S_ISREG(info.st_mode)) {
    error = fmt::format("{}: not a regular file ({})", path, file_kind(info.st_mode));
    ::close(fd);
    return nullptr;
  }
  // Back to blocking reads: a regular file never blocks, and stdio expects it.
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  std::FILE* file = fdopen(fd, "rb");
  if (file == nullptr) {
    error = fmt::format("{}: cannot open: {}", path, std::strerror(errno));
    ::close(fd);
    return nullptr;
  }
  size = static_cast<std::uint64_t>(info.st_size);
  return file;
}

std::optional<std::string> read_regular_file(const std::string& path, std::uint64_t max_bytes,
                                             std::string& error) {
  std::uint64_t size = 0;
  std::FILE* file = open_regular_file(path, size, error);
  if (file == nullptr) return std::nullopt;
  if (size > max_bytes) {
    error = fmt::format("{}: {} is larger than the {} this reader accepts", path, format_bytes(size),
                        format_bytes(max_bytes));
    std::fclose(file);
    return std::nullopt;
  }
  std::string text;
  char chunk[1 << 16];
  // The file may grow while it is read: never past the cap.
  for (std::size_t n; (n = std::fread(chunk, 1, sizeof chunk, file)) > 0;) {
    if (text.size() + n > max_bytes) {
      error = fmt::format("{}: grew past the {} this reader accepts while being read", path,
                          format_bytes(max_bytes));
      std::fclose(file);
      return std::nullopt;
    }
    text.append(chunk, n);
  }
  if (std::ferror(file) != 0) {
    error = fmt::format("{}: read error: {}", path, std::strerror(errno));
    std::fclose(file);
    return std::nullopt;
  }
  std::fclose(file);
  return text;
}

}  // namespace deepum::core
