// Writes the seed corpora that the project's own writers make: traces (every record type, an empty
// one), the Perfetto JSON of the first, and the H200 machine model as JSON. Usage: fuzz_seeds CORPUS_DIR
// (fuzz/corpus). The hand-made seeds sit beside them.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "deepum/core/perfetto_writer.hpp"
#include "deepum/core/trace_file.hpp"
#include "deepum/sim/machine_model.hpp"

namespace {

using namespace deepum;
namespace fs = std::filesystem;

constexpr std::uint64_t kBase = 0x7f00'0000'0000ull;

// One record of every type, with values a real run writes.
bool write_every_record(core::TraceWriter& w) {
  w.write_metadata({{std::string(core::trace_metadata::kDeviceName), "NVIDIA H100 80GB HBM3"},
                    {std::string(core::trace_metadata::kCommandLine), "python train.py"}});
  w.write(core::RangeEvent{core::RangeEvent::Kind::allocated, 1'000, kBase, 8 * core::kBlockBytes});
  w.define_function(0x55, "ampere_sgemm_128x64_nn");
  core::KernelLaunch launch;
  launch.correlation_id = 10;
  launch.execution_key = 0xabc;
  launch.function = 0x55;
  launch.stream = 7;
  launch.host_time = 2'000;
  launch.grid = {128, 1, 1};
  launch.block = {256, 1, 1};
  launch.pointer_count = 2;
  launch.pointers[0] = kBase;
  launch.pointers[1] = kBase + 4 * core::kBlockBytes;
  w.write(launch);
  core::LaunchOperands operands;
  operands.correlation_id = 10;
  operands.pointers = {kBase, kBase + 4 * core::kBlockBytes};
  operands.extents = {4 * core::kBlockBytes, 0};
  w.write(operands);
  w.write(core::BufferEvent{core::BufferEvent::Kind::handed_out, 1'500, kBase, 4 * core::kBlockBytes, 7});
  w.write(core::KernelExecution{10, 3'000, 9'000, 7, 0, core::GpuOperation::kernel, 0, 0});
  w.write(core::PageFault{3'100, 3'400, kBase + 0x1000, 4, core::FaultAccess::read, 0});
  w.write(core::Migration{3'200, 3'900, kBase, core::kBlockBytes, core::MigrationDirection::host_to_device,
                          core::MigrationCause::user});
  core::CopyLaunch copy;
  copy.correlation_id = 11;
  copy.stream = 7;
  copy.host_time = 9'100;
  copy.operation = core::GpuOperation::memcpy;
  copy.operand_count = 2;
  copy.operands = {0x5555'0000'0000ull, kBase + core::kBlockBytes};
  copy.bytes = 65'536;
  w.write(copy);
  w.write(core::KernelExecution{11, 9'500, 9'800, 7, 0, core::GpuOperation::memcpy, 2, 65'536});
  w.write(core::Hint{core::Hint::Kind::evict_to_host, 10'000, kBase, core::kBlockBytes});
  w.write(core::Migration{10'100, 10'900, kBase, core::kBlockBytes, core::MigrationDirection::device_to_host,
                          core::MigrationCause::deepum_eviction_done});
  w.write(core::ResidentSample{11'000, 3 * core::kBlockBytes, 4 * core::kBlockBytes});
  w.write(core::BufferEvent{core::BufferEvent::Kind::returned, 12'000, kBase, 4 * core::kBlockBytes, 7});
  w.write(core::RangeEvent{core::RangeEvent::Kind::freed, 13'000, kBase, 8 * core::kBlockBytes});
  return w.finish();
}

bool save(const fs::path& path, const std::string& bytes) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary);
  out << bytes;
  std::printf("%s: %zu bytes\n", path.c_str(), bytes.size());
  return static_cast<bool>(out);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_seeds CORPUS_DIR\n");
    return 2;
  }
  const fs::path corpus = argv[1];
  std::ostringstream every;
  core::TraceWriter writer;
  if (!writer.open(every, "every_record.dtrace") || !write_every_record(writer)) return 1;
  bool ok = save(corpus / "trace_reader" / "every_record.dtrace", every.str());

  std::ostringstream empty;
  core::TraceWriter empty_writer;
  ok = ok && empty_writer.open(empty, "empty.dtrace") && empty_writer.finish() &&
       save(corpus / "trace_reader" / "empty.dtrace", empty.str());

  const std::string text = every.str();
  const core::TraceReadResult read = core::read_trace_from_memory(std::as_bytes(std::span(text)));
  std::ostringstream json;
  std::string error;
  ok = ok && read.trace && core::write_perfetto_json(*read.trace, json, &error) &&
       save(corpus / "perfetto_json" / "every_record.json", json.str());

  ok = ok && save(corpus / "machine_model" / "h200.json", sim::machine_model_json(sim::MachineModel::h200()));
  return ok ? 0 : 1;
}
