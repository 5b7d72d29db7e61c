// crash_stack: preloaded beside libdeepum.so by the GPU stress tests. A run that crashes (SIGSEGV,
// SIGBUS, SIGILL, SIGFPE) prints the crashing thread's stack to stderr, then dies of the same
// signal as it would have. Each frame prints as object(+offset) [address]: deepum's functions are
// hidden, so `addr2line -f -C -e build/lib/libdeepum.so OFFSET` names them.
#include <execinfo.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>

namespace {

constexpr std::array<int, 4> kSignals{SIGSEGV, SIGBUS, SIGILL, SIGFPE};

void write_all(const char* text, std::size_t length) {
  while (length > 0) {
    const ssize_t written = write(STDERR_FILENO, text, length);
    if (written <= 0) return;
    text += written;
    length -= static_cast<std::size_t>(written);
  }
}

// A crash handler may only do little safely: what it needs (backtrace's unwinder) is loaded at
// start, and the line is formatted into a buffer of its own.
void on_crash(int signal, siginfo_t* info, void* /*context*/) {
  std::array<char, 200> line{};
  const int length = std::snprintf(
      line.data(), line.size(), "crash_stack: signal %d at address %p in thread %ld; its stack:\n", signal,
      info != nullptr ? info->si_addr : nullptr, static_cast<long>(syscall(SYS_gettid)));
  if (length > 0) write_all(line.data(), std::min(static_cast<std::size_t>(length), line.size() - 1));
  std::array<void*, 64> frames{};
  const int depth = backtrace(frames.data(), static_cast<int>(frames.size()));
  backtrace_symbols_fd(frames.data(), depth, STDERR_FILENO);
  // SA_RESETHAND restored the default action: die of it, as without this handler.
  raise(signal);
}

__attribute__((constructor)) void install() {
  std::array<void*, 1> warm{};
  backtrace(warm.data(), 1);  // loads the unwinder now, not inside the handler
  struct sigaction action {};
  action.sa_sigaction = on_crash;
  action.sa_flags = static_cast<int>(SA_SIGINFO | SA_RESETHAND);  // SA_RESETHAND is 1u << 31
  sigemptyset(&action.sa_mask);
  for (int signal : kSignals) sigaction(signal, &action, nullptr);
}

}  // namespace
