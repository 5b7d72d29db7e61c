// A synthetic trace: a transformer's training (below), or a plain CUDA loop sweeping arrays.
// The transformer: forward through every layer (weights read, activations
// written and kept for backward), backward in reverse (weight gradients accumulated, activation
// gradients in reused scratch buffers), then one Adam step per parameter tensor (parameter,
// gradient and both moments). Kernel times come from FLOP and byte counts; the file is an ordinary
// .dtrace, written with core::TraceWriter.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "deepum/core/trace_file.hpp"

namespace deepum::sim {

struct ModelShape {
  std::string name;
  std::uint32_t layers = 0;
  std::uint64_t hidden = 0;
  std::uint64_t ffn = 0;       // inner width of the feed-forward block
  std::uint64_t kv_width = 0;  // width of K and of V (smaller than hidden with grouped-query attention)
  std::uint64_t vocab = 0;
  bool gated_ffn = false;          // SwiGLU: the first FFN matmul is twice as wide
  bool learned_positions = false;  // GPT-2's position embedding
  bool tied_head = false;          // the output head is the token embedding
  std::uint64_t max_seq = 0;
};

// tiny, gpt2-124m, gpt2-xl, 7b, 13b, 70b.
std::optional<ModelShape> model_shape(std::string_view name);
std::vector<std::string> model_names();

struct GeneratorOptions {
  // A transformer (model_shape), or "sweep": tests/programs/sweep's loop over `arrays` buffers of
  // `mib` MiB each (batch and seq unused), the shape a least-recently-used eviction gets wrong.
  std::string model = "tiny";
  std::uint64_t arrays = 16;
  std::uint64_t mib = 256;
  std::uint64_t batch = 1;
  std::uint64_t seq = 128;
  std::uint32_t iterations = 2;
  double tflops = 400.0;               // sustained matmul throughput of the simulated GPU
  double hbm_gb_per_s = 3000.0;        // sustained device-memory bandwidth, for memory-bound kernels
  double min_kernel_us = 4.0;          // no kernel is shorter
  std::uint32_t fault_iterations = 1;  // leading iterations whose kernels fault on every block they touch
  std::string command_line;            // stored in the trace's metadata
};

struct GeneratorResult {
  std::string error;  // empty on success
  std::uint64_t kernels = 0;
  std::uint64_t kernels_per_iteration = 0;
  std::uint64_t faults = 0;
  std::uint64_t parameters = 0;
  std::uint64_t footprint_bytes = 0;  // all managed ranges
  bool ok() const { return error.empty(); }
};

// Writes the whole trace (metadata first, end record last) to an opened writer.
GeneratorResult generate_trace(const GeneratorOptions& options, core::TraceWriter& writer);
GeneratorResult generate_trace_file(const GeneratorOptions& options, const std::string& path);

}  // namespace deepum::sim
