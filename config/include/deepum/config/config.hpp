// deepum configuration: embedded defaults, a JSON file named by DEEPUM_CONFIG, and DEEPUM_<KEY>
// environment overrides, turned into one validated Config. Pure C++: no CUDA headers.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace deepum::config {

enum class LogLevel { trace, debug, info, warn, error, off };

std::string_view log_level_name(LogLevel level);

// What deepum watches with CUPTI: nothing, kernel launches only, or everything (launches, page
// faults, migrations, kernel times).
// off < launches (callbacks) < kernels (+ kernel and copy times) < full (+ faults and migrations).
enum class TracingLevel { off, launches, kernels, full };

std::string_view tracing_level_name(TracingLevel level);

// The values the deprecated remote_access key accepts (it is no longer read).
enum class RemoteAccess { off, mapped, on_fault };

std::string_view remote_access_name(RemoteAccess mode);

// A size as the user wrote it: absolute bytes, or a share of the device's total memory (resolved
// once the device is known).
class SizeSpec {
 public:
  static SizeSpec of_bytes(std::uint64_t bytes);
  static SizeSpec of_percent(double percent_of_device);

  bool is_percent() const { return is_percent_; }
  std::uint64_t bytes() const { return bytes_; }
  double percent() const { return percent_; }
  // Bytes this spec stands for on a device with `device_total_bytes` of memory.
  std::uint64_t resolve(std::uint64_t device_total_bytes) const;
  // Canonical text form that parse_size reads back: "8GiB", "123B", "50%" ("0" for zero bytes).
  std::string to_string() const;
  bool operator==(const SizeSpec&) const = default;

 private:
  bool is_percent_ = false;
  std::uint64_t bytes_ = 0;
  double percent_ = 0.0;
};

// Parses "8GiB", "512MiB", "1.5GiB", "4GB" (decimal), "123B" (bytes), "50%". A number without a
// unit ("200") is refused: as a limit it is far more likely a slip than 200 bytes. On failure
// returns nullopt and, if `why` is given, says what was expected.
std::optional<SizeSpec> parse_size(std::string_view text, std::string* why = nullptr);

// What the deprecated keys that are no longer read hold (the correlation prefetcher's, and
// remote_access, which needed it): a configuration that sets them still loads, its values checked as
// before, with a notice for each at start. stream_ordered_eviction is read: settle_moves (config.cpp)
// maps false onto mode evict's moves.
struct DeprecatedKeys {
  struct Prefetch {
    bool enabled = false;
    std::uint32_t lookahead = 512;
    bool adaptive_lookahead = false;
    bool pre_evict = true;
    bool discard = false;
    std::uint32_t history = 3;
    std::uint32_t rows = 2048;
    std::uint32_t ways = 2;
    std::uint32_t successors = 4;

    bool operator==(const Prefetch&) const = default;
  };
  Prefetch prefetch;
  RemoteAccess remote_access = RemoteAccess::off;
  bool stream_ordered_eviction = true;

  bool operator==(const DeprecatedKeys&) const = default;
};

// How deepum moves memory while it holds a resident limit (docs/configuration.md, "Modes"):
// fast: every move, assuming each kernel reaches memory only through the pointers its launch passes;
// safe: the moves that stay correct when a kernel follows pointers stored in GPU memory;
// evict: evictions alone, the GPU faulting back what it needs (the engine before its other moves);
// driver: deepum holds no resident limit and the driver pages memory in and out on faults.
enum class Mode { fast, safe, evict, driver };

std::string_view mode_name(Mode mode);

// The moves deepum makes before launches while it holds a resident limit, evictions besides.
// `mode` sets them all at once; each deprecated stream_ordered_* key sets one (settle_moves in
// config.cpp).
struct Moves {
  // What a launch names and is not resident is prefetched to the GPU in bulk before it.
  bool prefetch = true;
  // Victims PyTorch's caching allocator holds in its cache are dropped, not written back.
  bool discard = true;
  // Fresh blocks (allocated or handed out again, not named since) are made resident without
  // copying their stale contents. Assumes every write to them is a launch, copy or memset naming
  // them.
  bool place_fresh = true;
  // Live victims are copied to a pinned host store of deepum's and dropped on the GPU instead of
  // migrated by the driver. Assumes every read of them is by an operation naming them.
  bool swap = true;
  // Evictions alongside the program are issued from a thread of deepum's, in a context of its own
  // (the driver holds the calling thread for a whole move when the move's stream is idle).
  bool eviction_thread = true;

  bool operator==(const Moves&) const = default;
};

constexpr Moves moves_of(Mode mode) {
  switch (mode) {
    case Mode::fast:
      return Moves{};
    case Mode::safe:
      return Moves{.place_fresh = false, .swap = false};
    case Mode::evict:
    case Mode::driver:
      return Moves{.prefetch = false, .discard = false, .place_fresh = false, .swap = false};
  }
  return Moves{};
}

struct Config {
  bool enabled = true;
  SizeSpec alloc_limit = SizeSpec::of_percent(100.0);  // what the app may allocate in total
  // What may stay resident on the GPU. SizeSpec::of_bytes(0), the default, is automatic: the
  // device's free memory less a margin where alloc_limit exceeds the device, else the whole device
  // (resolve_limits in limits.hpp).
  SizeSpec resident_limit = SizeSpec::of_bytes(0);
  Mode mode = Mode::fast;
  Moves moves = moves_of(Mode::fast);  // what `mode` and the deprecated stream_ordered_* keys leave
  // Free room kept under resident_limit when evicting.
  SizeSpec eviction_headroom = SizeSpec::of_bytes(std::uint64_t{1} << 30);
  // Pinned host bytes the swap store may hold. SizeSpec::of_bytes(0), the default, is automatic:
  // the allocation limit less the resident limit, at most half of the host's physical memory.
  SizeSpec swap_store_limit = SizeSpec::of_bytes(0);
  // Evictions alongside the program at most in flight at once (each a batch of room kept ahead of
  // the launches).
  std::uint32_t evictions_ahead = 1;
  // Plan with the loop learned from the launches (victims by predicted next use, copies back
  // ahead); false: victims least recently named, copied back at the launch that names them.
  bool learn_loop = true;
  TracingLevel tracing = TracingLevel::full;  // what CUPTI watches
  // Path prefix of the trace files. Empty: no trace. In every output path ("%p" in trace_file,
  // log_file, stats_file) the library replaces "%p" by the process id.
  std::string trace_file;
  std::string cupti_library;                // libcupti.so to load; empty: search the usual places
  std::uint32_t trace_flush_ms = 5;         // CUPTI activity flush period, 1..1000 ms
  bool trace_per_thread_buffers = true;     // one CUPTI activity buffer per producing thread
  std::uint32_t worker_interval_us = 1000;  // worker thread period, 50..100000 us
  LogLevel log_level = LogLevel::info;
  std::string log_file;    // empty: stderr
  std::string stats_file;  // empty: no JSON statistics file
  bool summary = true;     // print the one-screen summary at exit
  DeprecatedKeys deprecated;

  bool operator==(const Config&) const = default;
};

// Returns the value of an environment variable, or nullptr. Injected so tests need no real env.
using EnvLookup = std::function<const char*(const char*)>;

// Where a key's value came from.
enum class Origin { default_value, file, environment };

struct KeyOrigin {
  Origin origin = Origin::default_value;
  std::string where;  // the file's path or the variable's name; empty for a default
};

struct ConfigLoad {
  Config config;       // the defaults when `error` is set
  std::string error;   // empty on success, else one message naming the file, key or line
  std::string origin;  // where the values came from, e.g. "defaults + /x/deepum.json + env"
  // The keys the file or the environment set, by name; every other key holds its default, but for
  // the moves (config.moves), which `mode` sets where no deprecated key does.
  std::map<std::string, KeyOrigin, std::less<>> set_keys;
  // Said once at start, not fatal: an environment variable named DEEPUM_* that deepum does not read,
  // a deprecated key (naming what replaces it), a setting that has no effect (config_notes).
  std::vector<std::string> warnings;
  // Nothing was read: a secure-execution process (see load_process_config); config.enabled is false.
  bool secure_execution = false;

  bool ok() const { return error.empty(); }
  KeyOrigin origin_of(std::string_view key) const;
};

// Reads DEEPUM_CONFIG (a JSON file path) if set, then every DEEPUM_<KEY> variable. The file must be
// a regular file of at most kMaxConfigFileBytes; a FIFO, a device or a larger file is an error.
ConfigLoad load_config(const EnvLookup& env);
// Same, from JSON text already in memory; `file_name` names it in messages.
ConfigLoad load_config_text(std::string_view json_text, std::string_view file_name, const EnvLookup& env);

inline constexpr std::size_t kMaxConfigFileBytes = std::size_t{1} << 20;

// What deepum reads of its process at start. Injected so tests need neither a real environment nor
// a set-user-ID program.
struct ProcessEnvironment {
  EnvLookup lookup;                         // secure_getenv in a real process
  std::vector<std::string> variable_names;  // the names that start with DEEPUM_, for the warnings
  bool secure_execution = false;            // the kernel's AT_SECURE flag
};

// This process's: secure_getenv, the DEEPUM_* names in environ, and getauxval(AT_SECURE), which is
// set for set-user-ID and set-group-ID programs and those with file capabilities.
ProcessEnvironment this_process_environment() noexcept;

// The configuration of a process. In secure execution deepum reads nothing (neither DEEPUM_CONFIG
// nor any variable) and disables itself: whoever set the environment of a privileged program must
// not steer what it writes, loads or allocates. Otherwise load_config(lookup), with one warning for
// each DEEPUM_* variable deepum does not read.
ConfigLoad load_process_config(const ProcessEnvironment& process);

// One warning per name in `names` that starts with DEEPUM_ and is neither a key's variable nor
// another variable the project reads (DEEPUM_CONFIG, DEEPUM_LIBRARY, DEEPUM_PYTHON), naming the
// closest known variable where one is close.
std::vector<std::string> unknown_variable_warnings(std::span<const std::string> names);

// The keys table (key, type, default, description) as a Markdown table, for docs and `deepum config`;
// deprecated keys are left out.
std::string keys_markdown_table();
// The deprecated keys (key, environment, what replaces it) as a Markdown table.
std::string deprecated_keys_markdown_table();

}  // namespace deepum::config
