#include "deepum/core/trace_file.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <limits>
#include <ostream>
#include <set>

#include "deepum/core/input_file.hpp"
#include "deepum/core/output_file.hpp"
#include "deepum/core/statistics.hpp"

namespace deepum::core {

namespace {

constexpr std::array<char, 8> kMagic = {'D', 'E', 'E', 'P', 'U', 'M', 'T', 'R'};
constexpr std::size_t kFixedHeaderBytes = 24;  // magic, major, minor, flags, metadata entry count
constexpr std::size_t kRecordHeaderBytes = 5;  // type u8, payload length u32

// Payload sizes of this revision (docs/trace-format.md lists the fields).
constexpr std::size_t kFunctionNameFixedBytes = 12;
constexpr std::size_t kKernelLaunchFixedBytes = 67;
constexpr std::size_t kKernelExecutionBytes = 42;
constexpr std::size_t kKernelExecutionBytes_1_0 = 32;  // before operation, copy_kind and bytes (1.1)
constexpr std::size_t kPageFaultBytes = 37;
constexpr std::size_t kMigrationBytes = 34;
constexpr std::size_t kRangeEventBytes = 25;
constexpr std::size_t kHintBytes = 25;
constexpr std::size_t kResidentSampleBytes = 24;
constexpr std::size_t kLaunchOperandsFixedBytes = 11;  // then kLaunchOperandBytes per operand
constexpr std::size_t kLaunchOperandBytes = 16;        // pointer, extent
constexpr std::size_t kMaxLaunchOperands = std::numeric_limits<std::uint16_t>::max();
constexpr std::size_t kCopyLaunchBytes = 52;
constexpr std::size_t kBufferEventBytes = 33;
constexpr std::size_t kEndBytes = 16;
constexpr std::size_t kMaxPayloadBytes = std::numeric_limits<std::uint32_t>::max();

// launch_operands flags.
constexpr std::uint8_t kOperandsComplete = 0x01;
constexpr std::uint8_t kOperandsUnnamedMemory = 0x02;
constexpr std::uint8_t kKnownOperandsFlags = kOperandsComplete | kOperandsUnnamedMemory;

// The minor version that introduced a record type: a file of an older minor holding one is corrupt.
std::uint32_t first_minor_version(TraceRecordType type) {
  switch (type) {
    case TraceRecordType::launch_operands:
    case TraceRecordType::copy_launch:
    case TraceRecordType::buffer_event:
      return 4;
    default:
      return 0;
  }
}

std::string errno_text() { return std::strerror(errno); }

// Little-endian fields, assembled byte by byte so the format does not depend on the host.
class PayloadBuilder {
 public:
  static constexpr std::size_t kCapacity = kKernelLaunchFixedBytes + 8 * KernelLaunch::kMaxPointers;

  void u8(std::uint8_t value) { bytes_[size_++] = value; }
  void u16(std::uint16_t value) { put(value, 2); }
  void u32(std::uint32_t value) { put(value, 4); }
  void u64(std::uint64_t value) { put(value, 8); }
  std::span<const std::uint8_t> bytes() const { return {bytes_.data(), size_}; }

 private:
  void put(std::uint64_t value, std::size_t width) {
    for (std::size_t i = 0; i < width; ++i) bytes_[size_++] = static_cast<std::uint8_t>(value >> (8 * i));
  }

  std::array<std::uint8_t, kCapacity> bytes_{};
  std::size_t size_ = 0;
};

class PayloadParser {
 public:
  explicit PayloadParser(const std::byte* data) : data_(data) {}
  std::uint8_t u8() { return static_cast<std::uint8_t>(data_[at_++]); }
  std::uint16_t u16() { return static_cast<std::uint16_t>(get(2)); }
  std::uint32_t u32() { return static_cast<std::uint32_t>(get(4)); }
  std::uint64_t u64() { return get(8); }
  std::string_view text(std::size_t bytes) {
    std::string_view out(reinterpret_cast<const char*>(data_ + at_), bytes);
    at_ += bytes;
    return out;
  }

 private:
  std::uint64_t get(std::size_t width) {
    std::uint64_t value = 0;
    for (std::size_t i = 0; i < width; ++i)
      value |= std::uint64_t{static_cast<std::uint8_t>(data_[at_ + i])} << (8 * i);
    at_ += width;
    return value;
  }

  const std::byte* data_;
  std::size_t at_ = 0;
};

bool is_known_record_type(std::uint8_t type) { return record_type_name(type) != "unknown"; }

std::uint32_t clamp_u32(std::size_t value, std::size_t limit = kMaxPayloadBytes) {
  return static_cast<std::uint32_t>(std::min(value, limit));
}

}  // namespace

std::string_view record_type_name(std::uint8_t type) {
  switch (static_cast<TraceRecordType>(type)) {
    case TraceRecordType::function_name:
      return "function_name";
    case TraceRecordType::kernel_launch:
      return "kernel_launch";
    case TraceRecordType::kernel_execution:
      return "kernel_execution";
    case TraceRecordType::page_fault:
      return "page_fault";
    case TraceRecordType::migration:
      return "migration";
    case TraceRecordType::range_event:
      return "range_event";
    case TraceRecordType::hint:
      return "hint";
    case TraceRecordType::resident_sample:
      return "resident_sample";
    case TraceRecordType::launch_operands:
      return "launch_operands";
    case TraceRecordType::copy_launch:
      return "copy_launch";
    case TraceRecordType::buffer_event:
      return "buffer_event";
    case TraceRecordType::end:
      return "end";
  }
  return "unknown";
}

std::uint64_t fnv1a64(std::span<const std::byte> bytes, std::uint64_t hash) {
  for (std::byte b : bytes) {
    hash ^= static_cast<std::uint8_t>(b);
    hash *= 0x100000001b3ull;
  }
  return hash;
}

// ---- BufferedOutput ----

BufferedOutput::~BufferedOutput() { close(); }

bool BufferedOutput::open(const std::string& path) noexcept {
  if (is_open()) return fail("already open");
  try {
    error_.clear();
    name_ = path;
  } catch (...) {
    return fail("out of memory");
  }
  // No link followed, a regular file only, 0600, close-on-exec: see output_file.hpp.
  std::string why;
  const int fd = open_output_file(path, WriteMode::truncate, why);
  file_ = fd < 0 ? nullptr : fdopen(fd, "wb");
  if (file_ == nullptr) {
    if (fd >= 0) {
      why = errno_text();
      ::close(fd);
    }
    try {
      return fail(fmt::format("cannot open {} for writing: {}", path, why));
    } catch (...) {
      return fail("cannot open the output file");
    }
  }
  try {
    buffer_ = std::make_unique_for_overwrite<char[]>(kBufferBytes);
  } catch (...) {
    std::fclose(file_);
    file_ = nullptr;
    return fail("out of memory");
  }
  used_ = 0;
  std::setvbuf(file_, nullptr, _IONBF, 0);  // our buffer is the only one, so write errors show at once
  owner_ = getpid();
  return true;
}

bool BufferedOutput::open(std::ostream& stream, std::string name) noexcept {
  if (is_open()) return fail("already open");
  try {
    error_.clear();
    name_ = std::move(name);
    buffer_ = std::make_unique_for_overwrite<char[]>(kBufferBytes);
  } catch (...) {
    return fail("out of memory");
  }
  used_ = 0;
  stream_ = &stream;
  owner_ = getpid();
  return true;
}

bool BufferedOutput::fail(std::string_view what) noexcept {
  if (error_.empty()) {
    try {
      error_ = what;
    } catch (...) {
      error_ = "?";  // short enough for the small-string buffer: no allocation
    }
  }
  return false;
}

bool BufferedOutput::write(const void* data, std::size_t bytes) noexcept {
  if (failed()) return false;
  if (!is_open()) return fail("nothing is open");
  const char* from = static_cast<const char*>(data);
  while (bytes > 0) {
    if (used_ == kBufferBytes && !flush()) return false;
    const std::size_t take = std::min(bytes, kBufferBytes - used_);
    std::memcpy(buffer_.get() + used_, from, take);
    used_ += take;
    from += take;
    bytes -= take;
  }
  return true;
}

bool BufferedOutput::flush() noexcept {
  if (used_ == 0 || failed()) return !failed();
  if (getpid() != owner_) return fail("a forked child does not write its parent's file");
  if (file_ != nullptr) {
    if (std::fwrite(buffer_.get(), 1, used_, file_) != used_) {
      try {
        return fail(fmt::format("writing {}: {}", name_, errno_text()));
      } catch (...) {
        return fail("write error");
      }
    }
  } else {
    try {
      stream_->write(buffer_.get(), static_cast<std::streamsize>(used_));
      if (!*stream_) return fail(fmt::format("writing {} failed", name_));
    } catch (...) {
      return fail("writing the output stream failed");
    }
  }
  used_ = 0;
  return true;
}

bool BufferedOutput::close() noexcept {
  if (!is_open()) return !failed();
  flush();
  if (file_ != nullptr) {
    if (std::fclose(file_) != 0 && getpid() == owner_) {
      try {
        fail(fmt::format("closing {}: {}", name_, errno_text()));
      } catch (...) {
        fail("close error");
      }
    }
    file_ = nullptr;
  } else {
    try {
      if (getpid() == owner_ && !stream_->flush()) fail("flushing the output stream failed");
    } catch (...) {
      fail("flushing the output stream failed");
    }
    stream_ = nullptr;
  }
  buffer_.reset();
  used_ = 0;
  return !failed();
}

// ---- TraceWriter ----

TraceWriter::~TraceWriter() {
  if (state_ == State::opened || state_ == State::header_written) finish();
}

bool TraceWriter::start(bool opened) noexcept {
  if (!opened) return false;
  state_ = State::opened;
  checksum_ = kFnvOffset;
  records_ = 0;
  defined_functions_.clear();
  return true;
}

bool TraceWriter::open(const std::string& path) noexcept {
  if (state_ == State::opened || state_ == State::header_written)
    return output_.fail("a trace is already open");
  return start(output_.open(path));
}

bool TraceWriter::open(std::ostream& stream, std::string name) noexcept {
  if (state_ == State::opened || state_ == State::header_written)
    return output_.fail("a trace is already open");
  return start(output_.open(stream, std::move(name)));
}

bool TraceWriter::put(const void* data, std::size_t bytes) noexcept {
  checksum_ = fnv1a64({static_cast<const std::byte*>(data), bytes}, checksum_);
  return output_.write(data, bytes);
}

bool TraceWriter::ensure_header(const TraceMetadata& metadata) noexcept {
  if (state_ != State::opened) return true;
  state_ = State::header_written;
  PayloadBuilder fixed;
  fixed.u32(kTraceMajorVersion);
  fixed.u32(kTraceMinorVersion);
  fixed.u32(0);  // flags
  fixed.u32(clamp_u32(metadata.size()));
  bool ok = put(kMagic.data(), kMagic.size()) && put(fixed.bytes().data(), fixed.bytes().size());
  for (const auto& [key, value] : metadata) {
    for (std::string_view text : {std::string_view(key), std::string_view(value)}) {
      PayloadBuilder length;
      length.u32(clamp_u32(text.size()));
      ok = ok && put(length.bytes().data(), 4) && put(text.data(), clamp_u32(text.size()));
    }
  }
  return ok;
}

bool TraceWriter::write_metadata(const TraceMetadata& metadata) noexcept {
  if (state_ == State::closed) return output_.fail("no trace is open");
  if (state_ != State::opened) return output_.fail("write_metadata() must come before the first record");
  return ensure_header(metadata);
}

bool TraceWriter::ready_for_record() noexcept {
  if (output_.failed()) return false;
  if (state_ == State::closed) return output_.fail("no trace is open");
  if (state_ == State::finished) return output_.fail("the trace is already finished");
  static const TraceMetadata kNoMetadata;
  return ensure_header(kNoMetadata);
}

bool TraceWriter::put_record(TraceRecordType type, std::span<const std::uint8_t> payload) noexcept {
  if (!ready_for_record()) return false;
  PayloadBuilder head;
  head.u8(static_cast<std::uint8_t>(type));
  head.u32(clamp_u32(payload.size()));
  ++records_;
  return put(head.bytes().data(), head.bytes().size()) && put(payload.data(), payload.size());
}

bool TraceWriter::define_function(std::uint64_t function, std::string_view name) noexcept {
  if (!ready_for_record()) return false;
  try {
    if (!defined_functions_.insert(function).second) return true;
  } catch (...) {
    return output_.fail("out of memory");
  }
  name = name.substr(0, kMaxPayloadBytes - kFunctionNameFixedBytes);
  PayloadBuilder head;
  head.u8(static_cast<std::uint8_t>(TraceRecordType::function_name));
  head.u32(clamp_u32(kFunctionNameFixedBytes + name.size()));
  head.u64(function);
  head.u32(clamp_u32(name.size()));
  ++records_;
  return put(head.bytes().data(), head.bytes().size()) && put(name.data(), name.size());
}

bool TraceWriter::write(const KernelLaunch& launch) noexcept {
  const std::size_t count = std::min<std::size_t>(launch.pointer_count, KernelLaunch::kMaxPointers);
  PayloadBuilder p;
  p.u64(launch.correlation_id);
  p.u64(launch.execution_key);
  p.u64(launch.function);
  p.u64(launch.stream);
  p.u64(launch.host_time);
  for (std::uint32_t g : launch.grid) p.u32(g);
  for (std::uint32_t b : launch.block) p.u32(b);
  p.u16(static_cast<std::uint16_t>(count));
  p.u8(launch.pointers_truncated || count < launch.pointer_count ? 1 : 0);
  for (std::size_t i = 0; i < count; ++i) p.u64(launch.pointers[i]);
  return put_record(TraceRecordType::kernel_launch, p.bytes());
}

bool TraceWriter::write(const KernelExecution& execution) noexcept {
  PayloadBuilder p;
  p.u64(execution.correlation_id);
  p.u64(execution.start);
  p.u64(execution.end);
  p.u32(execution.stream_id);
  p.u32(execution.device);
  p.u8(static_cast<std::uint8_t>(execution.operation));
  p.u8(execution.copy_kind);
  p.u64(execution.bytes);
  return put_record(TraceRecordType::kernel_execution, p.bytes());
}

bool TraceWriter::write(const PageFault& fault) noexcept {
  PayloadBuilder p;
  p.u64(fault.start);
  p.u64(fault.end);
  p.u64(fault.address);
  p.u64(fault.fault_count);
  p.u32(fault.device);
  p.u8(static_cast<std::uint8_t>(fault.access));
  return put_record(TraceRecordType::page_fault, p.bytes());
}

bool TraceWriter::write(const Migration& migration) noexcept {
  PayloadBuilder p;
  p.u64(migration.start);
  p.u64(migration.end);
  p.u64(migration.address);
  p.u64(migration.bytes);
  p.u8(static_cast<std::uint8_t>(migration.direction));
  p.u8(static_cast<std::uint8_t>(migration.cause));
  return put_record(TraceRecordType::migration, p.bytes());
}

bool TraceWriter::write(const RangeEvent& range) noexcept {
  PayloadBuilder p;
  p.u64(range.time);
  p.u64(range.address);
  p.u64(range.bytes);
  p.u8(static_cast<std::uint8_t>(range.kind));
  return put_record(TraceRecordType::range_event, p.bytes());
}

bool TraceWriter::write(const Hint& hint) noexcept {
  PayloadBuilder p;
  p.u64(hint.time);
  p.u64(hint.address);
  p.u64(hint.bytes);
  p.u8(static_cast<std::uint8_t>(hint.kind));
  return put_record(TraceRecordType::hint, p.bytes());
}

bool TraceWriter::write(const ResidentSample& sample) noexcept {
  PayloadBuilder p;
  p.u64(sample.time);
  p.u64(sample.estimated_resident_bytes);
  p.u64(sample.measured_used_bytes);
  return put_record(TraceRecordType::resident_sample, p.bytes());
}

bool TraceWriter::write(const LaunchOperands& operands) noexcept {
  if (!ready_for_record()) return false;
  const std::size_t count = std::min(operands.pointers.size(), kMaxLaunchOperands);
  // Operands past the cap are lost, so the record no longer holds every one.
  const bool complete = operands.complete && count == operands.pointers.size();
  PayloadBuilder head;
  head.u8(static_cast<std::uint8_t>(TraceRecordType::launch_operands));
  head.u32(clamp_u32(kLaunchOperandsFixedBytes + kLaunchOperandBytes * count));
  head.u64(operands.correlation_id);
  head.u8(static_cast<std::uint8_t>((complete ? kOperandsComplete : 0) |
                                    (operands.unnamed_memory ? kOperandsUnnamedMemory : 0)));
  head.u16(static_cast<std::uint16_t>(count));
  ++records_;
  bool ok = put(head.bytes().data(), head.bytes().size());
  // A record may hold 65535 operands: they go out a batch at a time, through a fixed buffer.
  constexpr std::size_t kBatch = PayloadBuilder::kCapacity / kLaunchOperandBytes;
  for (std::size_t first = 0; ok && first < count; first += kBatch) {
    PayloadBuilder batch;
    for (std::size_t i = first; i < std::min(count, first + kBatch); ++i) {
      batch.u64(operands.pointers[i]);
      batch.u64(i < operands.extents.size() ? operands.extents[i] : 0);  // a missing extent is unknown
    }
    ok = put(batch.bytes().data(), batch.bytes().size());
  }
  return ok;
}

bool TraceWriter::write(const CopyLaunch& copy) noexcept {
  const std::size_t count = std::min<std::size_t>(copy.operand_count, CopyLaunch::kMaxOperands);
  PayloadBuilder p;
  p.u64(copy.correlation_id);
  p.u64(copy.stream);
  p.u64(copy.host_time);
  p.u8(static_cast<std::uint8_t>(copy.operation));
  p.u16(static_cast<std::uint16_t>(count));
  for (std::size_t i = 0; i < CopyLaunch::kMaxOperands; ++i) p.u64(i < count ? copy.operands[i] : 0);
  p.u64(copy.bytes);
  p.u8(copy.unnamed_memory ? 1 : 0);
  return put_record(TraceRecordType::copy_launch, p.bytes());
}

bool TraceWriter::write(const BufferEvent& buffer) noexcept {
  PayloadBuilder p;
  p.u8(static_cast<std::uint8_t>(buffer.kind));
  p.u64(buffer.time);
  p.u64(buffer.address);
  p.u64(buffer.bytes);
  p.u64(buffer.stream);
  return put_record(TraceRecordType::buffer_event, p.bytes());
}

bool TraceWriter::finish() noexcept {
  if (state_ == State::closed) return output_.fail("no trace is open");
  if (state_ == State::finished) return ok();
  static const TraceMetadata kNoMetadata;
  ensure_header(kNoMetadata);
  PayloadBuilder end;
  end.u8(static_cast<std::uint8_t>(TraceRecordType::end));
  end.u32(static_cast<std::uint32_t>(kEndBytes));
  end.u64(records_);
  end.u64(checksum_);  // covers every byte before the end record
  output_.write(end.bytes().data(), end.bytes().size());
  state_ = State::finished;
  return output_.close();
}

// ---- TraceReader ----

TraceReader::~TraceReader() { close_file(); }

void TraceReader::close_file() {
  if (file_ != nullptr) std::fclose(file_);
  file_ = nullptr;
}

bool TraceReader::open(const std::string& path) {
  close_file();
  name_ = path;
  error_.clear();
  file_ = open_regular_file(path, input_size_, error_);
  if (file_ == nullptr) return false;
  std::setvbuf(file_, nullptr, _IONBF, 0);  // we read in large chunks ourselves
  buffer_.resize(kChunkBytes);
  input_ = {buffer_.data(), 0};
  return start();
}

bool TraceReader::open_memory(std::span<const std::byte> bytes, std::string name) {
  close_file();
  std::vector<std::byte>().swap(buffer_);
  name_ = std::move(name);
  input_ = bytes;
  input_size_ = bytes.size();
  return start();
}

bool TraceReader::start() {
  cursor_ = 0;
  offset_ = 0;
  checksum_ = kFnvOffset;
  records_ = 0;
  skipped_ = 0;
  finished_ = false;
  error_.clear();
  return read_header();
}

bool TraceReader::fill(std::size_t bytes) {
  const std::size_t available = input_.size() - cursor_;
  if (available >= bytes) return true;
  if (file_ == nullptr) return fail(offset_, "internal error: reading past the input");
  std::memmove(buffer_.data(), buffer_.data() + cursor_, available);
  if (buffer_.size() < bytes) buffer_.resize(bytes);
  std::size_t have = available;
  while (have < bytes) {
    const std::size_t got = std::fread(buffer_.data() + have, 1, buffer_.size() - have, file_);
    if (got == 0) {
      return fail(offset_ + have,
                  std::ferror(file_) ? "read error: " + errno_text() : "the file shrank while being read");
    }
    have += got;
  }
  input_ = {buffer_.data(), have};
  cursor_ = 0;
  return true;
}

void TraceReader::consume(std::size_t bytes) {
  checksum_ = fnv1a64(input_.subspan(cursor_, bytes), checksum_);
  cursor_ += bytes;
  offset_ += bytes;
}

bool TraceReader::skip(std::uint64_t bytes) {
  while (bytes > 0) {
    if (cursor_ == input_.size() &&
        !fill(static_cast<std::size_t>(std::min<std::uint64_t>(bytes, kChunkBytes)))) {
      return false;
    }
    const std::size_t take =
        static_cast<std::size_t>(std::min<std::uint64_t>(bytes, input_.size() - cursor_));
    consume(take);
    bytes -= take;
  }
  return true;
}

bool TraceReader::fail(std::uint64_t at, const std::string& what) {
  if (error_.empty()) error_ = fmt::format("{}: byte offset {}: {}", name_, at, what);
  return false;
}

bool TraceReader::fail_record(std::uint8_t type, std::uint64_t at, const std::string& what) {
  if (error_.empty()) {
    error_ = fmt::format("{}: record {} ({}) at byte offset {}: {}", name_, records_, record_type_name(type),
                         at, what);
  }
  return false;
}

bool TraceReader::fail_truncated(std::uint8_t type, std::uint64_t record_start, std::uint64_t record_bytes) {
  error_ = fmt::format(
      "{}: truncated: the file ends after {} records at byte offset {}, inside record {} ({}), which starts "
      "at byte "
      "offset {} and needs {} bytes; was the program killed before deepum finished the trace?",
      name_, records_, input_size_, records_, record_type_name(type), record_start, record_bytes);
  return false;
}

bool TraceReader::read_header() {
  const std::size_t magic_bytes =
      static_cast<std::size_t>(std::min<std::uint64_t>(input_size_, kMagic.size()));
  if (!fill(magic_bytes)) return false;
  if (std::memcmp(input_.data() + cursor_, kMagic.data(), magic_bytes) != 0) {
    return fail(0, "not a deepum trace (it does not start with \"DEEPUMTR\")");
  }
  if (input_size_ < kFixedHeaderBytes) {
    error_ = fmt::format(
        "{}: truncated: the file ends at byte offset {}, inside the {}-byte header; was the program killed "
        "before "
        "deepum finished the trace?",
        name_, input_size_, kFixedHeaderBytes);
    return false;
  }
  if (!fill(kFixedHeaderBytes)) return false;
  PayloadParser fixed(input_.data() + cursor_ + kMagic.size());
  header_.major_version = fixed.u32();
  header_.minor_version = fixed.u32();
  header_.flags = fixed.u32();
  const std::uint32_t entries = fixed.u32();
  if (header_.major_version != kTraceMajorVersion) {
    return fail(kMagic.size(),
                fmt::format("unsupported trace version {}.{}: this deepum reads version {}.x{}",
                            header_.major_version, header_.minor_version, kTraceMajorVersion,
                            header_.major_version > kTraceMajorVersion
                                ? "; a newer deepum wrote it, so read it with that one"
                                : ""));
  }
  consume(kFixedHeaderBytes);
  header_.metadata.clear();
  for (std::uint32_t entry = 0; entry < entries; ++entry) {
    const std::uint64_t entry_start = offset_;
    std::array<std::string, 2> text;  // key, value
    for (std::string& part : text) {
      const auto truncated = [&] {
        error_ = fmt::format(
            "{}: truncated: the file ends at byte offset {}, inside metadata entry {} of {} at byte offset "
            "{}; "
            "was the program killed before deepum finished the trace?",
            name_, input_size_, entry, entries, entry_start);
        return false;
      };
      if (remaining_input() < 4) return truncated();
      if (!fill(4)) return false;
      const std::uint32_t length = PayloadParser(input_.data() + cursor_).u32();
      consume(4);
      if (remaining_input() < length) return truncated();
      if (!fill(length)) return false;
      part = PayloadParser(input_.data() + cursor_).text(length);
      consume(length);
    }
    if (!header_.metadata.try_emplace(std::move(text[0]), std::move(text[1])).second) {
      return fail(entry_start, fmt::format("metadata entry {} repeats the key \"{}\"", entry, text[0]));
    }
  }
  return true;
}

std::optional<TraceRecord> TraceReader::read_end(std::uint64_t record_start, std::uint32_t payload_bytes) {
  const auto end = static_cast<std::uint8_t>(TraceRecordType::end);
  if (payload_bytes != kEndBytes &&
      !(payload_bytes > kEndBytes && header_.minor_version > kTraceMinorVersion)) {
    fail_record(end, record_start,
                fmt::format("payload length {} does not fit its type: an end payload is {} bytes",
                            payload_bytes, kEndBytes));
    return std::nullopt;
  }
  if (!fill(kRecordHeaderBytes + payload_bytes)) return std::nullopt;
  PayloadParser p(input_.data() + cursor_ + kRecordHeaderBytes);
  const std::uint64_t count = p.u64();
  const std::uint64_t checksum = p.u64();
  if (count != records_) {
    fail_record(end, record_start,
                fmt::format("record count mismatch: the end record says {} records, the file holds {}", count,
                            records_));
    return std::nullopt;
  }
  if (checksum != checksum_) {
    fail_record(
        end, record_start,
        fmt::format("checksum mismatch: the end record says {:#018x}, the bytes before it hash to {:#018x}; "
                    "the file is corrupt",
                    checksum, checksum_));
    return std::nullopt;
  }
  consume(kRecordHeaderBytes + payload_bytes);
  if (remaining_input() > 0) {
    fail(offset_, fmt::format("{} unexpected bytes after the end record", remaining_input()));
    return std::nullopt;
  }
  finished_ = true;
  close_file();
  return std::nullopt;
}

std::optional<TraceRecord> TraceReader::next() {
  if (finished_ || !error_.empty() || input_size_ == 0) return std::nullopt;
  while (true) {
    const std::uint64_t record_start = offset_;
    if (remaining_input() == 0) {
      error_ = fmt::format(
          "{}: truncated: the file ends after {} records at byte offset {}; was the program killed before "
          "deepum "
          "finished the trace?",
          name_, records_, offset_);
      return std::nullopt;
    }
    if (!fill(static_cast<std::size_t>(std::min<std::uint64_t>(remaining_input(), kRecordHeaderBytes)))) {
      return std::nullopt;
    }
    const std::uint8_t type = static_cast<std::uint8_t>(input_[cursor_]);
    if (remaining_input() < kRecordHeaderBytes) {
      fail_truncated(type, record_start, kRecordHeaderBytes);
      return std::nullopt;
    }
    const std::uint32_t payload_bytes = PayloadParser(input_.data() + cursor_ + 1).u32();
    const std::uint64_t record_bytes = kRecordHeaderBytes + std::uint64_t{payload_bytes};
    if (record_bytes > remaining_input()) {
      fail_truncated(type, record_start, record_bytes);
      return std::nullopt;
    }
    const bool newer_minor = header_.minor_version > kTraceMinorVersion;

    if (static_cast<TraceRecordType>(type) == TraceRecordType::end)
      return read_end(record_start, payload_bytes);
    if (!is_known_record_type(type)) {
      if (!newer_minor) {
        fail_record(
            type, record_start,
            fmt::format("unknown record type {:#04x}; version {}.{} has no such type, so the file is corrupt",
                        type, header_.major_version, header_.minor_version));
        return std::nullopt;
      }
      if (!skip(record_bytes)) return std::nullopt;
      ++records_;
      ++skipped_;
      continue;
    }
    if (const std::uint32_t since = first_minor_version(static_cast<TraceRecordType>(type));
        header_.minor_version < since) {
      fail_record(
          type, record_start,
          fmt::format("record type {:#04x} is new in version {}.{}; version {}.{} has no such type, so "
                      "the file is corrupt",
                      type, kTraceMajorVersion, since, header_.major_version, header_.minor_version));
      return std::nullopt;
    }

    // A newer minor revision may append fields to a payload; this reader ignores them.
    const auto check_length = [&](std::uint64_t expected, std::string_view described) {
      if (payload_bytes == expected || (payload_bytes > expected && newer_minor)) return true;
      return fail_record(type, record_start,
                         fmt::format("payload length {} does not fit its type: {} is {} bytes", payload_bytes,
                                     described, expected));
    };
    // A payload of variable length, shorter than its fixed fields.
    const auto fail_shorter_than = [&](std::uint64_t minimum, std::string_view described) {
      return fail_record(type, record_start,
                         fmt::format("payload length {} does not fit its type: {} is at least {} bytes",
                                     payload_bytes, described, minimum));
    };
    // Sizes are checked here, before any reader of the trace loops over or allocates for them.
    const auto check_span = [&](std::string_view field, std::uint64_t address, std::uint64_t bytes,
                                std::size_t operand = 0) {
      if (address <= kTraceAddressLimit && bytes <= kTraceAddressLimit - address) return true;
      return fail_record(
          type, record_start,
          fmt::format("{}{} {:#x} + {} bytes passes {:#x}, the end of any address space CUDA uses; the file "
                      "is corrupt",
                      field, field == "operand" ? fmt::format(" {}", operand) : "", address, bytes,
                      kTraceAddressLimit));
    };
    if (!fill(static_cast<std::size_t>(record_bytes))) return std::nullopt;
    PayloadParser p(input_.data() + cursor_ + kRecordHeaderBytes);
    std::optional<TraceRecord> record;
    switch (static_cast<TraceRecordType>(type)) {
      case TraceRecordType::function_name: {
        if (payload_bytes < kFunctionNameFixedBytes) {
          fail_shorter_than(kFunctionNameFixedBytes, "a function_name payload");
          return std::nullopt;
        }
        FunctionName name;
        name.function = p.u64();
        const std::uint32_t length = p.u32();
        if (!check_length(kFunctionNameFixedBytes + std::uint64_t{length},
                          fmt::format("a function_name payload with a {}-byte name", length))) {
          return std::nullopt;
        }
        name.name = p.text(length);
        record = std::move(name);
        break;
      }
      case TraceRecordType::kernel_launch: {
        if (payload_bytes < kKernelLaunchFixedBytes) {
          fail_shorter_than(kKernelLaunchFixedBytes, "a kernel_launch payload");
          return std::nullopt;
        }
        KernelLaunch launch;
        launch.correlation_id = p.u64();
        launch.execution_key = p.u64();
        launch.function = p.u64();
        launch.stream = p.u64();
        launch.host_time = p.u64();
        for (std::uint32_t& g : launch.grid) g = p.u32();
        for (std::uint32_t& b : launch.block) b = p.u32();
        launch.pointer_count = p.u16();
        launch.pointers_truncated = p.u8() != 0;
        if (launch.pointer_count > KernelLaunch::kMaxPointers) {
          fail_record(type, record_start,
                      fmt::format("pointer_count {} is more than the {} pointers a launch holds",
                                  launch.pointer_count, KernelLaunch::kMaxPointers));
          return std::nullopt;
        }
        if (!check_length(kKernelLaunchFixedBytes + 8 * std::uint64_t{launch.pointer_count},
                          fmt::format("a kernel_launch payload with {} pointers", launch.pointer_count))) {
          return std::nullopt;
        }
        for (std::size_t i = 0; i < launch.pointer_count; ++i) launch.pointers[i] = p.u64();
        record = launch;
        break;
      }
      case TraceRecordType::kernel_execution: {
        // Version 1.0 had no operation, copy_kind or bytes: its executions are all kernels.
        const bool version_1_0 = header_.minor_version == 0;
        if (!check_length(
                version_1_0 ? kKernelExecutionBytes_1_0 : kKernelExecutionBytes,
                version_1_0 ? "a version 1.0 kernel_execution payload" : "a kernel_execution payload")) {
          return std::nullopt;
        }
        KernelExecution execution;
        execution.correlation_id = p.u64();
        execution.start = p.u64();
        execution.end = p.u64();
        execution.stream_id = p.u32();
        execution.device = p.u32();
        if (!version_1_0) {
          const std::uint8_t operation = p.u8();
          if (operation > static_cast<std::uint8_t>(GpuOperation::memset)) {
            fail_record(type, record_start, fmt::format("operation {} is not a GPU operation", operation));
            return std::nullopt;
          }
          execution.operation = static_cast<GpuOperation>(operation);
          execution.copy_kind = p.u8();
          execution.bytes = p.u64();
        }
        record = execution;
        break;
      }
      case TraceRecordType::page_fault: {
        if (!check_length(kPageFaultBytes, "a page_fault payload")) return std::nullopt;
        PageFault fault;
        fault.start = p.u64();
        fault.end = p.u64();
        fault.address = p.u64();
        fault.fault_count = p.u64();
        fault.device = p.u32();
        const std::uint8_t access = p.u8();
        // Kinds of access may be added in minor revisions; those this reader doesn't know read as unknown.
        fault.access = access <= static_cast<std::uint8_t>(FaultAccess::prefetch)
                           ? static_cast<FaultAccess>(access)
                           : FaultAccess::unknown;
        record = fault;
        break;
      }
      case TraceRecordType::migration: {
        if (!check_length(kMigrationBytes, "a migration payload")) return std::nullopt;
        Migration migration;
        migration.start = p.u64();
        migration.end = p.u64();
        migration.address = p.u64();
        migration.bytes = p.u64();
        const std::uint8_t direction = p.u8();
        const std::uint8_t cause = p.u8();
        if (direction > static_cast<std::uint8_t>(MigrationDirection::device_to_host)) {
          fail_record(type, record_start,
                      fmt::format("direction {} is not a migration direction", direction));
          return std::nullopt;
        }
        if (!check_span("address", migration.address, migration.bytes)) return std::nullopt;
        migration.direction = static_cast<MigrationDirection>(direction);
        migration.cause = cause <= static_cast<std::uint8_t>(MigrationCause::deepum_prefetch_done)
                              ? static_cast<MigrationCause>(cause)
                              : MigrationCause::unknown;
        record = migration;
        break;
      }
      case TraceRecordType::range_event: {
        if (!check_length(kRangeEventBytes, "a range_event payload")) return std::nullopt;
        RangeEvent range;
        range.time = p.u64();
        range.address = p.u64();
        range.bytes = p.u64();
        const std::uint8_t kind = p.u8();
        if (kind > static_cast<std::uint8_t>(RangeEvent::Kind::freed)) {
          fail_record(type, record_start, fmt::format("kind {} is not a range event kind", kind));
          return std::nullopt;
        }
        if (!check_span("address", range.address, range.bytes)) return std::nullopt;
        range.kind = static_cast<RangeEvent::Kind>(kind);
        record = range;
        break;
      }
      case TraceRecordType::hint: {
        if (!check_length(kHintBytes, "a hint payload")) return std::nullopt;
        Hint hint;
        hint.time = p.u64();
        hint.address = p.u64();
        hint.bytes = p.u64();
        const std::uint8_t kind = p.u8();
        if (kind > static_cast<std::uint8_t>(Hint::Kind::discard)) {
          fail_record(type, record_start, fmt::format("kind {} is not a hint kind", kind));
          return std::nullopt;
        }
        if (!check_span("address", hint.address, hint.bytes)) return std::nullopt;
        hint.kind = static_cast<Hint::Kind>(kind);
        record = hint;
        break;
      }
      case TraceRecordType::resident_sample: {
        if (!check_length(kResidentSampleBytes, "a resident_sample payload")) return std::nullopt;
        ResidentSample sample;
        sample.time = p.u64();
        sample.estimated_resident_bytes = p.u64();
        sample.measured_used_bytes = p.u64();
        record = sample;
        break;
      }
      case TraceRecordType::launch_operands: {
        if (payload_bytes < kLaunchOperandsFixedBytes) {
          fail_shorter_than(kLaunchOperandsFixedBytes, "a launch_operands payload");
          return std::nullopt;
        }
        LaunchOperands operands;
        operands.correlation_id = p.u64();
        const std::uint8_t flags = p.u8();
        const std::uint16_t count = p.u16();
        // Flags may be added in minor revisions; in a file of this one, an unknown bit is damage.
        if ((flags & ~kKnownOperandsFlags) != 0 && !newer_minor) {
          fail_record(type, record_start,
                      fmt::format("flags {:#04x} set bits version {}.{} does not define", flags,
                                  header_.major_version, header_.minor_version));
          return std::nullopt;
        }
        if (!check_length(kLaunchOperandsFixedBytes + kLaunchOperandBytes * std::uint64_t{count},
                          fmt::format("a launch_operands payload with {} operands", count))) {
          return std::nullopt;
        }
        operands.complete = (flags & kOperandsComplete) != 0;
        operands.unnamed_memory = (flags & kOperandsUnnamedMemory) != 0;
        operands.pointers.resize(count);
        operands.extents.resize(count);
        for (std::size_t i = 0; i < count; ++i) {
          operands.pointers[i] = p.u64();
          operands.extents[i] = p.u64();
          if (!check_span("operand", operands.pointers[i], operands.extents[i], i)) return std::nullopt;
        }
        record = std::move(operands);
        break;
      }
      case TraceRecordType::copy_launch: {
        if (!check_length(kCopyLaunchBytes, "a copy_launch payload")) return std::nullopt;
        CopyLaunch copy;
        copy.correlation_id = p.u64();
        copy.stream = p.u64();
        copy.host_time = p.u64();
        const std::uint8_t operation = p.u8();
        copy.operand_count = p.u16();
        for (std::uint64_t& operand : copy.operands) operand = p.u64();
        copy.bytes = p.u64();
        copy.unnamed_memory = p.u8() != 0;
        if (operation != static_cast<std::uint8_t>(GpuOperation::memcpy) &&
            operation != static_cast<std::uint8_t>(GpuOperation::memset)) {
          fail_record(type, record_start,
                      fmt::format("operation {} is not a copy operation (1 memcpy, 2 memset)", operation));
          return std::nullopt;
        }
        copy.operation = static_cast<GpuOperation>(operation);
        if (copy.operand_count > CopyLaunch::kMaxOperands) {
          fail_record(type, record_start,
                      fmt::format("operand_count {} is more than the {} operands a copy holds",
                                  copy.operand_count, CopyLaunch::kMaxOperands));
          return std::nullopt;
        }
        for (std::size_t i = 0; i < copy.operand_count; ++i) {
          if (!check_span("operand", copy.operands[i], copy.bytes, i)) return std::nullopt;
        }
        record = copy;
        break;
      }
      case TraceRecordType::buffer_event: {
        if (!check_length(kBufferEventBytes, "a buffer_event payload")) return std::nullopt;
        BufferEvent buffer;
        const std::uint8_t kind = p.u8();
        if (kind > static_cast<std::uint8_t>(BufferEvent::Kind::returned)) {
          fail_record(type, record_start, fmt::format("kind {} is not a buffer event kind", kind));
          return std::nullopt;
        }
        buffer.kind = static_cast<BufferEvent::Kind>(kind);
        buffer.time = p.u64();
        buffer.address = p.u64();
        buffer.bytes = p.u64();
        buffer.stream = p.u64();
        if (!check_span("address", buffer.address, buffer.bytes)) return std::nullopt;
        record = buffer;
        break;
      }
      case TraceRecordType::end:
        break;  // handled above
    }
    consume(static_cast<std::size_t>(record_bytes));
    ++records_;
    return record;
  }
}

// ---- Whole traces ----

namespace {

struct Collector {
  Trace& trace;
  void operator()(FunctionName&& name) { trace.function_names[name.function] = std::move(name.name); }
  void operator()(KernelLaunch&& launch) { trace.launches.push_back(launch); }
  void operator()(KernelExecution&& execution) { trace.executions.push_back(execution); }
  void operator()(PageFault&& fault) { trace.faults.push_back(fault); }
  void operator()(Migration&& migration) { trace.migrations.push_back(migration); }
  void operator()(RangeEvent&& range) { trace.ranges.push_back(range); }
  void operator()(Hint&& hint) { trace.hints.push_back(hint); }
  void operator()(ResidentSample&& sample) { trace.resident_samples.push_back(sample); }
  void operator()(LaunchOperands&& operands) { trace.launch_operands.push_back(std::move(operands)); }
  void operator()(CopyLaunch&& copy) { trace.copies.push_back(copy); }
  void operator()(BufferEvent&& buffer) { trace.buffer_events.push_back(buffer); }
};

TraceReadResult read_all(TraceReader& reader, bool opened) {
  TraceReadResult result;
  if (!opened) {
    result.error = reader.error();
    return result;
  }
  Trace trace;
  Collector collect{trace};
  while (std::optional<TraceRecord> record = reader.next()) std::visit(collect, std::move(*record));
  if (!reader.finished()) {
    result.error = reader.error();
    return result;
  }
  trace.header = reader.header();
  trace.skipped_records = reader.skipped_records();
  result.trace = std::move(trace);
  return result;
}

}  // namespace

TraceReadResult read_trace(const std::string& path) {
  TraceReader reader;
  const bool opened = reader.open(path);
  return read_all(reader, opened);
}

TraceReadResult read_trace_from_memory(std::span<const std::byte> bytes, std::string name) {
  TraceReader reader;
  const bool opened = reader.open_memory(bytes, std::move(name));
  return read_all(reader, opened);
}

std::optional<TimeSpan> time_span(const Trace& trace) {
  std::optional<TimeSpan> span;
  const auto see = [&span](Timestamp first, Timestamp last) {
    if (!span) span = TimeSpan{first, last};
    span->first = std::min(span->first, first);
    span->last = std::max(span->last, std::max(first, last));
  };
  for (const KernelLaunch& l : trace.launches) see(l.host_time, l.host_time);
  for (const KernelExecution& e : trace.executions) see(e.start, e.end);
  for (const PageFault& f : trace.faults) see(f.start, f.end);
  for (const Migration& m : trace.migrations) see(m.start, m.end);
  for (const RangeEvent& r : trace.ranges) see(r.time, r.time);
  for (const Hint& h : trace.hints) see(h.time, h.time);
  for (const ResidentSample& s : trace.resident_samples) see(s.time, s.time);
  for (const CopyLaunch& c : trace.copies) see(c.host_time, c.host_time);
  for (const BufferEvent& b : trace.buffer_events) see(b.time, b.time);
  return span;
}

std::string summarize(const Trace& trace) {
  std::string out =
      fmt::format("deepum trace, format {}.{}\n", trace.header.major_version, trace.header.minor_version);
  for (const auto& [key, value] : trace.header.metadata) out += fmt::format("  {}: {}\n", key, value);
  std::array<std::size_t, 3> by_operation{};  // GpuOperation order
  for (const KernelExecution& e : trace.executions) {
    if (static_cast<std::size_t>(e.operation) < by_operation.size())
      ++by_operation[static_cast<std::size_t>(e.operation)];
  }
  out += fmt::format(
      "  records: {} kernel launches, {} kernel executions, {} memcpys, {} memsets, {} page fault groups, "
      "{} migrations, {} range events, {} hints, {} resident samples, {} function names, {} launch "
      "operands, {} copy launches, {} buffer events",
      trace.launches.size(), by_operation[static_cast<std::size_t>(GpuOperation::kernel)],
      by_operation[static_cast<std::size_t>(GpuOperation::memcpy)],
      by_operation[static_cast<std::size_t>(GpuOperation::memset)], trace.faults.size(),
      trace.migrations.size(), trace.ranges.size(), trace.hints.size(), trace.resident_samples.size(),
      trace.function_names.size(), trace.launch_operands.size(), trace.copies.size(),
      trace.buffer_events.size());
  if (trace.skipped_records > 0) {
    out += fmt::format(", {} of newer types skipped", trace.skipped_records);
  }
  out += '\n';
  if (const std::optional<TimeSpan> span = time_span(trace)) {
    out += fmt::format("  time span: {:.6f} s (timestamps {} to {} ns)\n",
                       static_cast<double>(span->last - span->first) * 1e-9, span->first, span->last);
  } else {
    out += "  time span: none (no timed records)\n";
  }
  std::set<std::uint64_t> functions;
  for (const KernelLaunch& l : trace.launches) functions.insert(l.function);
  out += fmt::format("  functions: {} distinct launched, {} named\n", functions.size(),
                     trace.function_names.size());
  std::array<std::uint64_t, 2> bytes{}, count{};
  for (const Migration& m : trace.migrations) {
    bytes[static_cast<std::size_t>(m.direction)] += m.bytes;
    ++count[static_cast<std::size_t>(m.direction)];
  }
  out += fmt::format("  migrated: {} host to device in {} migrations, {} device to host in {}\n",
                     format_bytes(bytes[0]), count[0], format_bytes(bytes[1]), count[1]);
  std::uint64_t faults = 0;
  for (const PageFault& f : trace.faults) faults += f.fault_count;
  out += fmt::format("  faults: {} in {} groups\n", faults, trace.faults.size());
  return out;
}

}  // namespace deepum::core
