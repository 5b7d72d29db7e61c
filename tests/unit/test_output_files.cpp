// The files deepum writes (log, statistics, traces): no symbolic link followed, regular files only,
// mode 0600 whatever the umask, close-on-exec, no directory created, "%p" expanded; and every log
// record one line, whatever text from outside it holds.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "deepum/config/config.hpp"
#include "deepum/config/printable.hpp"
#include "deepum/core/log.hpp"
#include "deepum/core/output_file.hpp"
#include "deepum/core/perfetto_writer.hpp"
#include "deepum/core/pytorch_alloc_conf.hpp"
#include "deepum/core/trace_file.hpp"
#include "temp_directory.hpp"

namespace {

using deepum::core::open_output_file;
using deepum::core::write_output_file;
using deepum::core::WriteMode;

std::string contents_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

unsigned permissions_of(const std::string& path) {
  struct stat status {};
  REQUIRE(::stat(path.c_str(), &status) == 0);
  return status.st_mode & 07777;
}

// Sets the umask for the scope, restoring the old one after.
class ScopedUmask {
 public:
  explicit ScopedUmask(mode_t mask) : previous_(::umask(mask)) {}
  ~ScopedUmask() { ::umask(previous_); }
  ScopedUmask(const ScopedUmask&) = delete;
  ScopedUmask& operator=(const ScopedUmask&) = delete;

 private:
  mode_t previous_;
};

// The error open_output_file gives for `path`, checking that it gave none of a descriptor.
std::string refusal(const std::string& path, WriteMode mode = WriteMode::truncate) {
  std::string error;
  const int fd = open_output_file(path, mode, error);
  if (fd >= 0) ::close(fd);
  CHECK_MESSAGE(fd < 0, "opened ", path);
  return error;
}

}  // namespace

TEST_CASE("a new output file is created 0600 under umask 0, and closed on exec") {
  const TempDirectory directory;
  const ScopedUmask open_umask(0);
  const std::string path = directory / "stats.json";
  std::string error;
  const int fd = open_output_file(path, WriteMode::truncate, error);
  REQUIRE_MESSAGE(fd >= 0, error);
  CHECK((::fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0);
  CHECK((::fcntl(fd, F_GETFL) & O_NONBLOCK) == 0);
  ::close(fd);
  CHECK(permissions_of(path) == 0600);
}

TEST_CASE("an output path that is a symbolic link is refused, and the link's target left alone") {
  const TempDirectory directory;
  const std::string target = directory / "victim";
  std::ofstream(target) << "precious";
  const std::string link = directory / "deepum.log";
  REQUIRE(::symlink(target.c_str(), link.c_str()) == 0);
  CHECK(refusal(link) == "a symbolic link, which deepum does not write through");
  CHECK(refusal(link, WriteMode::append) == "a symbolic link, which deepum does not write through");
  CHECK(contents_of(target) == "precious");
  // A dangling link would otherwise create its target.
  const std::string dangling = directory / "dangling";
  REQUIRE(::symlink((directory / "created-through-link").c_str(), dangling.c_str()) == 0);
  CHECK(refusal(dangling) == "a symbolic link, which deepum does not write through");
  CHECK_FALSE(std::filesystem::exists(directory / "created-through-link"));
}

TEST_CASE("only regular files are written: a FIFO, a directory or a device is refused without blocking") {
  const TempDirectory directory;
  const std::string fifo = directory / "fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK(refusal(fifo) == "a FIFO, not a regular file");  // opening it would block with no reader
  CHECK(refusal(directory / "") == "a directory, not a regular file");
  CHECK(refusal("/dev/null") == "a character device, not a regular file");
}

TEST_CASE("no directory is created for an output file") {
  const TempDirectory directory;
  const std::string path = directory / "missing/deeper/stats.json";
  CHECK(refusal(path) == "No such file or directory (deepum creates no directories)");
  CHECK_FALSE(std::filesystem::exists(directory / "missing"));
}

TEST_CASE("an existing file is truncated or appended to, and keeps its mode") {
  const TempDirectory directory;
  const std::string path = directory / "out";
  std::ofstream(path) << "old contents";
  REQUIRE(::chmod(path.c_str(), 0640) == 0);
  std::string error;
  REQUIRE_MESSAGE(write_output_file(path, "new", error), error);
  CHECK(contents_of(path) == "new");
  const int fd = open_output_file(path, WriteMode::append, error);
  REQUIRE_MESSAGE(fd >= 0, error);
  CHECK(deepum::core::write_all(fd, "+more"));
  ::close(fd);
  CHECK(contents_of(path) == "new+more");
  CHECK(permissions_of(path) == 0640);
  CHECK_FALSE(write_output_file(directory / "no/such/dir", "x", error));
  CHECK(error == "No such file or directory (deepum creates no directories)");
}

TEST_CASE("%p in an output path becomes the process id, every time it appears") {
  using deepum::core::expand_process_id;
  CHECK(expand_process_id("/tmp/run-%p", 42) == "/tmp/run-42");
  CHECK(expand_process_id("/tmp/%p/stats-%p.json", 7) == "/tmp/7/stats-7.json");
  CHECK(expand_process_id("/tmp/100%", 7) == "/tmp/100%");
  CHECK(expand_process_id("/tmp/%d-%", 7) == "/tmp/%d-%");
  CHECK(expand_process_id("", 7).empty());
}

TEST_CASE("the trace writers open their files as output files") {
  const TempDirectory directory;
  const ScopedUmask open_umask(0);
  const std::string target = directory / "victim";
  std::ofstream(target) << "precious";
  const std::string link = directory / "run.dtrace";
  REQUIRE(::symlink(target.c_str(), link.c_str()) == 0);
  deepum::core::TraceWriter compact;
  CHECK_FALSE(compact.open(link));
  CHECK(compact.error().find("a symbolic link") != std::string::npos);
  CHECK(contents_of(target) == "precious");

  deepum::core::PerfettoJsonWriter perfetto;
  const std::string json = directory / "run.perfetto.json";
  REQUIRE_MESSAGE(perfetto.open(json), perfetto.error());
  CHECK(perfetto.finish());
  CHECK(permissions_of(json) == 0600);
  deepum::core::TraceWriter in_missing_directory;
  CHECK_FALSE(in_missing_directory.open(directory / "missing/run.dtrace"));
  CHECK_FALSE(std::filesystem::exists(directory / "missing"));
}

TEST_CASE("log_file: %p expanded, mode 0600, and each record one line whatever its text holds") {
  const TempDirectory directory;
  const ScopedUmask open_umask(0);
  deepum::config::Config config;
  config.log_file = directory / "deepum-%p.log";
  deepum::core::configure_logging(config);
  // A newline in an environment variable that deepum logs must not add a line of its own.
  deepum::core::logger().warn("value \"{}\"", "x\n[deepum 1 error] forged\r\x1b[2J");
  deepum::core::configure_logging(deepum::config::Config{});  // back to stderr for the other tests
  const std::string path = directory / ("deepum-" + std::to_string(::getpid()) + ".log");
  const std::string log = contents_of(path);
  CHECK(log == "[deepum " + std::to_string(::getpid()) +
                   " warning] value \"x\\n[deepum 1 error] forged\\r\\x1b[2J\"\n");
  CHECK(permissions_of(path) == 0600);
}

TEST_CASE("a log_file that may not be written falls back to stderr and leaves the path alone") {
  const TempDirectory directory;
  const std::string target = directory / "victim";
  std::ofstream(target) << "precious";
  deepum::config::Config config;
  config.log_file = directory / "deepum.log";
  REQUIRE(::symlink(target.c_str(), config.log_file.c_str()) == 0);
  deepum::core::configure_logging(config);
  deepum::core::logger().warn("to stderr");
  deepum::core::configure_logging(deepum::config::Config{});
  CHECK(contents_of(target) == "precious");
  config.log_file = directory / "no/such/dir/deepum.log";
  deepum::core::configure_logging(config);
  deepum::core::configure_logging(deepum::config::Config{});
  CHECK_FALSE(std::filesystem::exists(directory / "no"));
}

TEST_CASE("printable escapes control characters and keeps everything else") {
  using deepum::config::printable;
  CHECK(printable("plain text, ü, 日本") == "plain text, ü, 日本");
  CHECK(printable("a\nb\rc\td") == R"(a\nb\rc\td)");
  CHECK(printable(std::string("nul\0end", 7)) == R"(nul\x00end)");
  CHECK(printable("\x1b[31mred\x7f") == R"(\x1b[31mred\x7f)");
  CHECK(printable("c1 \xc2\x9b"
                  "31m") == R"(c1 \u009b31m)");  // the 8-bit CSI, as UTF-8
  CHECK(printable("\xc2\xa0") == "\xc2\xa0");    // U+00A0 is printable
  CHECK(printable("trailing \xc2") == "trailing \xc2");
  CHECK(printable("").empty());
}

TEST_CASE("the notice for PYTORCH_CUDA_ALLOC_CONF is one line, whatever the variable held") {
  const std::string notice = deepum::core::expandable_segments_notice(
      "PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True\n[deepum 1 error] forged");
  CHECK(notice ==
        R"(PYTORCH_CUDA_ALLOC_CONF="expandable_segments:True\n[deepum 1 error] forged": expandable_segments )"
        "switched off (its cuMemCreate memory cannot be managed)");
  const std::string long_notice = deepum::core::expandable_segments_notice(
      "PYTORCH_ALLOC_CONF", "expandable_segments:True," + std::string(5000, 'x'));
  CHECK(long_notice.size() < 400);
  CHECK(long_notice.find("...\"") != std::string::npos);
}
