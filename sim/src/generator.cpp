#include "deepum/sim/generator.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace deepum::sim {

namespace {

constexpr std::uint64_t kFloat = 4;  // parameters, gradients, moments and activations in fp32
constexpr std::uint64_t kAlign = 512;
constexpr core::Timestamp kStart = 1'000'000'000;
constexpr core::Timestamp kGapNs = 25'000;  // > the attribution slack, so each fault has one kernel

}  // namespace

std::optional<ModelShape> model_shape(std::string_view name) {
  ModelShape m;
  m.name = std::string(name);
  if (name == "tiny") {
    m.layers = 4, m.hidden = 512, m.ffn = 2048, m.kv_width = 512, m.vocab = 8192;
    m.learned_positions = m.tied_head = true, m.max_seq = 1024;
  } else if (name == "gpt2-124m") {
    m.layers = 12, m.hidden = 768, m.ffn = 3072, m.kv_width = 768, m.vocab = 50257;
    m.learned_positions = m.tied_head = true, m.max_seq = 1024;
  } else if (name == "gpt2-xl") {
    m.layers = 48, m.hidden = 1600, m.ffn = 6400, m.kv_width = 1600, m.vocab = 50257;
    m.learned_positions = m.tied_head = true, m.max_seq = 1024;
  } else if (name == "7b") {
    m.layers = 32, m.hidden = 4096, m.ffn = 11008, m.kv_width = 4096, m.vocab = 32000;
    m.gated_ffn = true, m.max_seq = 4096;
  } else if (name == "13b") {
    m.layers = 40, m.hidden = 5120, m.ffn = 13824, m.kv_width = 5120, m.vocab = 32000;
    m.gated_ffn = true, m.max_seq = 4096;
  } else if (name == "70b") {
    m.layers = 80, m.hidden = 8192, m.ffn = 28672, m.kv_width = 1024, m.vocab = 32000;
    m.gated_ffn = true, m.max_seq = 4096;
  } else {
    return std::nullopt;
  }
  return m;
}

std::vector<std::string> model_names() { return {"tiny", "gpt2-124m", "gpt2-xl", "7b", "13b", "70b"}; }

namespace {

struct Tensor {
  std::uint64_t address = 0;
  std::uint64_t bytes = 0;
};

// One managed range per kind of memory, tensors packed in it as a caching allocator would.
struct Region {
  std::uint64_t base = 0;
  std::uint64_t used = 0;
  Tensor take(std::uint64_t elements) {
    Tensor t{base + used, elements * kFloat};
    used += (t.bytes + kAlign - 1) / kAlign * kAlign;
    return t;
  }
  std::uint64_t range_bytes() const {
    return (used + core::kBlockBytes - 1) / core::kBlockBytes * core::kBlockBytes;
  }
};

enum Fn : std::uint64_t {
  embedding_fwd = 0x5100,
  layernorm_fwd,
  matmul_fwd,
  attention_fwd,
  add_fwd,
  activation_fwd,
  cross_entropy,
  matmul_bwd_data,
  matmul_bwd_weight,
  attention_bwd,
  activation_bwd,
  layernorm_bwd,
  embedding_bwd,
  adam_step,
  sweep_update,
  sweep_partial_sums,
};

constexpr std::array<const char*, 16> kFnNames = {
    "sim::embedding_fwd",     "sim::layernorm_fwd",  "sim::matmul_fwd",     "sim::attention_fwd",
    "sim::add_fwd",           "sim::activation_fwd", "sim::cross_entropy",  "sim::matmul_bwd_data",
    "sim::matmul_bwd_weight", "sim::attention_bwd",  "sim::activation_bwd", "sim::layernorm_bwd",
    "sim::embedding_bwd",     "sim::adam_step",      "sim::sweep_update",   "sim::sweep_partial_sums"};

struct Operand {
  Tensor tensor;
  bool write = false;
};

struct Layer {
  Tensor ln1, w_qkv, w_o, ln2, w_ff1, w_ff2;         // parameters
  Tensor a_ln1, qkv, attn, h, a_ln2, f1, f2, x_out;  // saved activations
};

class Emitter {
 public:
  Emitter(const GeneratorOptions& options, core::TraceWriter& writer, GeneratorResult& result)
      : options_(options), writer_(writer), result_(result) {}

  void kernel(Fn fn, double flops, std::initializer_list<Operand> operands) {
    std::uint64_t bytes = 0;
    for (const Operand& o : operands) bytes += o.tensor.bytes;
    const double ns =
        std::max({flops / (options_.tflops * 1e3), static_cast<double>(bytes) / options_.hbm_gb_per_s,
                  options_.min_kernel_us * 1e3});
    const auto duration = static_cast<core::Timestamp>(std::llround(ns));

    writer_.define_function(fn, kFnNames[fn - embedding_fwd]);
    core::KernelLaunch launch;
    launch.correlation_id = ++correlation_;
    launch.function = fn;
    launch.stream = 0x5000;
    // A host issuing an operation every 5 us, ahead of the GPU (each kernel and its gap take more).
    launch.host_time = kStart - 2'000 + correlation_ * 5'000;
    std::uint64_t key = core::kFnvOffset;
    const auto mix = [&key](std::uint64_t v) {
      for (int i = 0; i < 8; ++i) key = (key ^ ((v >> (8 * i)) & 0xff)) * 0x100000001b3ull;
    };
    mix(fn);
    for (const Operand& o : operands) {
      if (launch.pointer_count < core::KernelLaunch::kMaxPointers)
        launch.pointers[launch.pointer_count++] = o.tensor.address;
      mix(o.tensor.address);
    }
    launch.execution_key = key == 0 ? 1 : key;
    const std::uint64_t out_bytes =
        operands.size() == 0 ? 0 : std::data(operands)[operands.size() - 1].tensor.bytes;
    launch.grid = {static_cast<std::uint32_t>(std::min<std::uint64_t>(65535, out_bytes / 4096 + 1)), 1, 1};
    launch.block = {256, 1, 1};
    writer_.write(launch);
    // Every operand with its tensor's size (format 1.4): what the launch-ordered policies name.
    operands_.correlation_id = launch.correlation_id;
    operands_.pointers.clear();
    operands_.extents.clear();
    for (const Operand& o : operands) {
      operands_.pointers.push_back(o.tensor.address);
      operands_.extents.push_back(o.tensor.bytes);
    }
    writer_.write(operands_);

    writer_.write(execution_now(launch.correlation_id, duration));

    if (faulting_) {
      // One fault per block the kernel touches, spread over its run (a write wins over a read).
      blocks_.clear();
      for (const Operand& o : operands) {
        if (o.tensor.bytes == 0) continue;
        for (core::BlockId b = core::block_of(o.tensor.address);
             b <= core::block_of(o.tensor.address + o.tensor.bytes - 1); ++b) {
          blocks_.emplace_back(b, o.write);
        }
      }
      std::sort(blocks_.begin(), blocks_.end());
      std::vector<std::pair<core::BlockId, bool>> unique;
      for (const auto& entry : blocks_) {
        if (!unique.empty() && unique.back().first == entry.first)
          unique.back().second |= entry.second;
        else
          unique.push_back(entry);
      }
      for (std::size_t i = 0; i < unique.size(); ++i) {
        core::PageFault fault;
        fault.start = now_ + duration * i / unique.size();
        fault.end = fault.start + 1'000;
        fault.address = core::block_base(unique[i].first) + 0x1000;
        fault.fault_count = 1;
        fault.access = unique[i].second ? core::FaultAccess::write : core::FaultAccess::read;
        writer_.write(fault);
        ++result_.faults;
      }
    }
    now_ += duration + kGapNs;
    ++result_.kernels;
  }

  // A copy of `source` to the host that the program reads (its thread waits for it).
  void copy_to_host(Tensor source) {
    constexpr double kCopyGbPerS = 25.0;  // a small copy over PCIe
    const auto duration = static_cast<core::Timestamp>(std::llround(
        std::max(static_cast<double>(source.bytes) / kCopyGbPerS, options_.min_kernel_us * 1e3)));
    core::CopyLaunch copy;
    copy.correlation_id = ++correlation_;
    copy.stream = 0x5000;
    copy.host_time = kStart - 2'000 + correlation_ * 5'000;
    copy.operand_count = 1;
    copy.operands[0] = source.address;
    copy.bytes = source.bytes;
    writer_.write(copy);
    core::KernelExecution execution = execution_now(copy.correlation_id, duration);
    execution.operation = core::GpuOperation::memcpy;
    execution.copy_kind = 2;  // CUPTI_ACTIVITY_MEMCPY_KIND_DTOH
    execution.bytes = source.bytes;
    writer_.write(execution);
    now_ += duration + kGapNs;
    ++result_.kernels;
  }

  void set_faulting(bool faulting) { faulting_ = faulting; }

  core::Timestamp now() const { return now_; }

 private:
  // An operation on the one stream, starting now.
  core::KernelExecution execution_now(std::uint64_t correlation_id, core::Timestamp duration) const {
    core::KernelExecution execution;
    execution.correlation_id = correlation_id;
    execution.start = now_;
    execution.end = now_ + duration;
    execution.stream_id = 7;
    return execution;
  }

  const GeneratorOptions& options_;
  core::TraceWriter& writer_;
  GeneratorResult& result_;
  core::Timestamp now_ = kStart;
  std::uint64_t correlation_ = 0;
  bool faulting_ = false;
  std::vector<std::pair<core::BlockId, bool>> blocks_;
  core::LaunchOperands operands_;  // reused: one record per launch
};

Operand r(Tensor t) { return {t, false}; }
Operand w(Tensor t) { return {t, true}; }

// tests/programs/sweep's pattern: `arrays` buffers of `mib` MiB, each its own allocation; per
// iteration and array i, update(a[i], a[i + 1]) (a[i] read and written, the next read), the sum
// of a[i] into a small buffer, and that buffer copied to the host, which the program waits for.
GeneratorResult generate_sweep(const GeneratorOptions& options, core::TraceWriter& writer) {
  GeneratorResult result;
  constexpr std::uint64_t kBase = std::uint64_t{16} << 40, kStride = std::uint64_t{1} << 40;
  const std::uint64_t bytes = options.mib << 20;
  std::vector<Tensor> arrays;
  for (std::uint64_t i = 0; i < options.arrays; ++i) arrays.push_back({kBase + i * kStride, bytes});
  const Tensor sums{kBase + options.arrays * kStride, 1024 * sizeof(double)};
  core::TraceMetadata metadata;
  metadata[std::string(core::trace_metadata::kDeviceName)] = "deepum-sim generator";
  metadata[std::string(core::trace_metadata::kCommandLine)] = options.command_line;
  metadata["sim_model"] = "sweep";
  metadata["sim_arrays"] = std::to_string(options.arrays);
  metadata["sim_mib"] = std::to_string(options.mib);
  metadata["sim_iterations"] = std::to_string(options.iterations);
  writer.write_metadata(metadata);
  for (const Tensor& t : arrays) {
    writer.write(core::RangeEvent{core::RangeEvent::Kind::allocated, kStart - 1'000'000, t.address, t.bytes});
    result.footprint_bytes += t.bytes;
  }
  writer.write(core::RangeEvent{core::RangeEvent::Kind::allocated, kStart - 1'000'000, sums.address,
                                core::kBlockBytes});
  result.footprint_bytes += core::kBlockBytes;
  Emitter emit(options, writer, result);
  const auto elements = static_cast<double>(bytes / kFloat);
  for (std::uint32_t iteration = 0; iteration < options.iterations; ++iteration) {
    emit.set_faulting(iteration < options.fault_iterations);
    for (std::size_t i = 0; i < arrays.size(); ++i) {
      emit.kernel(sweep_update, 3 * elements, {r(arrays[(i + 1) % arrays.size()]), w(arrays[i])});
      emit.kernel(sweep_partial_sums, elements, {r(arrays[i]), w(sums)});
      emit.copy_to_host(sums);
    }
    if (iteration == 0) result.kernels_per_iteration = result.kernels;
  }
  if (!writer.finish()) result.error = writer.error();
  return result;
}

}  // namespace

GeneratorResult generate_trace(const GeneratorOptions& options, core::TraceWriter& writer) {
  if (options.model == "sweep") {
    if (options.arrays < 2 || options.mib == 0 || options.iterations == 0) {
      GeneratorResult result;
      result.error = "a sweep needs at least 2 arrays of at least 1 MiB and 1 iteration";
      return result;
    }
    return generate_sweep(options, writer);
  }
  GeneratorResult result;
  const std::optional<ModelShape> shape = model_shape(options.model);
  if (!shape) {
    result.error = "unknown model '" + options.model + "'";
    return result;
  }
  if (options.batch == 0 || options.seq == 0 || options.iterations == 0) {
    result.error = "batch, sequence length and iterations must be at least 1";
    return result;
  }
  if (!(options.tflops > 0) || !(options.hbm_gb_per_s > 0) || !(options.min_kernel_us >= 0)) {
    result.error = "tflops and hbm bandwidth must be positive, the minimum kernel time not negative";
    return result;
  }
  const ModelShape& m = *shape;
  const double B = static_cast<double>(options.batch), S = static_cast<double>(options.seq);
  const double d = static_cast<double>(m.hidden), f = static_cast<double>(m.ffn);
  const std::uint64_t tokens = options.batch * options.seq;
  const std::uint64_t qkv_width = m.hidden + 2 * m.kv_width;
  const std::uint64_t ff1_width = m.ffn * (m.gated_ffn ? 2 : 1);

  // Address space: one region per kind, 4 TiB apart.
  constexpr std::uint64_t kBase = std::uint64_t{16} << 40, kStride = std::uint64_t{4} << 40;
  std::array<Region, 6> regions;
  for (std::size_t i = 0; i < regions.size(); ++i) regions[i].base = kBase + i * kStride;
  Region &params = regions[0], &grads = regions[1], &adam_m = regions[2], &adam_v = regions[3],
         &acts = regions[4], &scratch = regions[5];

  std::vector<std::array<Tensor, 4>> parameter_sets;  // parameter, gradient, m, v
  const auto parameter = [&](std::uint64_t elements) {
    parameter_sets.push_back(
        {params.take(elements), grads.take(elements), adam_m.take(elements), adam_v.take(elements)});
    result.parameters += elements;
    return parameter_sets.size() - 1;
  };
  const std::size_t emb = parameter(m.vocab * m.hidden);
  const std::size_t pos = m.learned_positions ? parameter(m.max_seq * m.hidden) : 0;
  std::vector<std::array<std::size_t, 6>> layer_params;
  for (std::uint32_t l = 0; l < m.layers; ++l) {
    layer_params.push_back({parameter(m.hidden), parameter(m.hidden * qkv_width),
                            parameter(m.hidden * m.hidden), parameter(m.hidden),
                            parameter(m.hidden * ff1_width), parameter(m.ffn * m.hidden)});
  }
  const std::size_t lnf = parameter(m.hidden);
  const std::size_t head = m.tied_head ? emb : parameter(m.hidden * m.vocab);
  const auto P = [&](std::size_t i) { return parameter_sets[i][0]; };
  const auto G = [&](std::size_t i) { return parameter_sets[i][1]; };

  const Tensor token_ids = acts.take(tokens * 2);  // int64 ids
  const Tensor x0 = acts.take(tokens * m.hidden);
  std::vector<Layer> layers(m.layers);
  for (Layer& layer : layers) {
    layer.a_ln1 = acts.take(tokens * m.hidden);
    layer.qkv = acts.take(tokens * qkv_width);
    layer.attn = acts.take(tokens * m.hidden);
    layer.h = acts.take(tokens * m.hidden);
    layer.a_ln2 = acts.take(tokens * m.hidden);
    layer.f1 = acts.take(tokens * ff1_width);
    layer.f2 = acts.take(tokens * m.ffn);
    layer.x_out = acts.take(tokens * m.hidden);
  }
  const Tensor a_f = acts.take(tokens * m.hidden);
  const Tensor logits = acts.take(tokens * m.vocab);
  const Tensor loss = acts.take(1);
  const Tensor t_p = scratch.take(tokens * m.hidden), t_f3 = scratch.take(tokens * m.hidden);
  const Tensor gA = scratch.take(tokens * m.hidden), gB = scratch.take(tokens * m.hidden),
               gC = scratch.take(tokens * m.hidden);
  const Tensor gF1 = scratch.take(tokens * ff1_width), gF2 = scratch.take(tokens * m.ffn);
  const Tensor gQKV = scratch.take(tokens * qkv_width);
  const Tensor g_logits = scratch.take(tokens * m.vocab);

  core::TraceMetadata metadata;
  metadata[std::string(core::trace_metadata::kDeviceName)] = "deepum-sim generator";
  metadata[std::string(core::trace_metadata::kCommandLine)] = options.command_line;
  metadata["sim_model"] = m.name;
  metadata["sim_batch"] = std::to_string(options.batch);
  metadata["sim_seq"] = std::to_string(options.seq);
  metadata["sim_iterations"] = std::to_string(options.iterations);
  writer.write_metadata(metadata);
  for (const Region& region : regions) {
    writer.write(core::RangeEvent{core::RangeEvent::Kind::allocated, kStart - 1'000'000, region.base,
                                  region.range_bytes()});
    result.footprint_bytes += region.range_bytes();
  }

  Emitter emit(options, writer, result);
  const double mm_qkv = 2 * B * S * d * static_cast<double>(qkv_width);
  const double mm_o = 2 * B * S * d * d;
  const double mm_ff1 = 2 * B * S * d * static_cast<double>(ff1_width);
  const double mm_ff2 = 2 * B * S * f * d;
  const double attention = 2 * B * S * S * d;  // causal: half of QK^T and AV
  const double mm_head = 2 * B * S * d * static_cast<double>(m.vocab);
  const double elementwise = 8 * B * S * d;

  for (std::uint32_t iteration = 0; iteration < options.iterations; ++iteration) {
    emit.set_faulting(iteration < options.fault_iterations);
    // Forward.
    if (m.learned_positions) {
      emit.kernel(embedding_fwd, elementwise, {r(token_ids), r(P(emb)), r(P(pos)), w(x0)});
    } else {
      emit.kernel(embedding_fwd, elementwise, {r(token_ids), r(P(emb)), w(x0)});
    }
    for (std::uint32_t l = 0; l < m.layers; ++l) {
      const Layer& L = layers[l];
      const auto& p = layer_params[l];
      const Tensor x_in = l == 0 ? x0 : layers[l - 1].x_out;
      emit.kernel(layernorm_fwd, elementwise, {r(x_in), r(P(p[0])), w(L.a_ln1)});
      emit.kernel(matmul_fwd, mm_qkv, {r(L.a_ln1), r(P(p[1])), w(L.qkv)});
      emit.kernel(attention_fwd, attention, {r(L.qkv), w(L.attn)});
      emit.kernel(matmul_fwd, mm_o, {r(L.attn), r(P(p[2])), w(t_p)});
      emit.kernel(add_fwd, elementwise, {r(x_in), r(t_p), w(L.h)});
      emit.kernel(layernorm_fwd, elementwise, {r(L.h), r(P(p[3])), w(L.a_ln2)});
      emit.kernel(matmul_fwd, mm_ff1, {r(L.a_ln2), r(P(p[4])), w(L.f1)});
      emit.kernel(activation_fwd, elementwise, {r(L.f1), w(L.f2)});
      emit.kernel(matmul_fwd, mm_ff2, {r(L.f2), r(P(p[5])), w(t_f3)});
      emit.kernel(add_fwd, elementwise, {r(L.h), r(t_f3), w(L.x_out)});
    }
    const Tensor x_last = m.layers == 0 ? x0 : layers.back().x_out;
    emit.kernel(layernorm_fwd, elementwise, {r(x_last), r(P(lnf)), w(a_f)});
    emit.kernel(matmul_fwd, mm_head, {r(a_f), r(P(head)), w(logits)});
    emit.kernel(cross_entropy, 4 * B * S * static_cast<double>(m.vocab),
                {r(logits), r(token_ids), w(loss), w(g_logits)});
    // Backward.
    emit.kernel(matmul_bwd_data, mm_head, {r(g_logits), r(P(head)), w(gC)});
    emit.kernel(matmul_bwd_weight, mm_head, {r(a_f), r(g_logits), w(G(head))});
    emit.kernel(layernorm_bwd, elementwise, {r(gC), r(x_last), r(P(lnf)), w(gA), w(G(lnf))});
    for (std::uint32_t l = m.layers; l-- > 0;) {
      const Layer& L = layers[l];
      const auto& p = layer_params[l];
      const Tensor x_in = l == 0 ? x0 : layers[l - 1].x_out;
      emit.kernel(matmul_bwd_data, mm_ff2, {r(gA), r(P(p[5])), w(gF2)});
      emit.kernel(matmul_bwd_weight, mm_ff2, {r(L.f2), r(gA), w(G(p[5]))});
      emit.kernel(activation_bwd, elementwise, {r(gF2), r(L.f1), w(gF1)});
      emit.kernel(matmul_bwd_data, mm_ff1, {r(gF1), r(P(p[4])), w(gB)});
      emit.kernel(matmul_bwd_weight, mm_ff1, {r(L.a_ln2), r(gF1), w(G(p[4]))});
      emit.kernel(layernorm_bwd, elementwise, {r(gB), r(L.h), r(P(p[3])), w(gA), w(G(p[3]))});
      emit.kernel(matmul_bwd_data, mm_o, {r(gA), r(P(p[2])), w(gB)});
      emit.kernel(matmul_bwd_weight, mm_o, {r(L.attn), r(gA), w(G(p[2]))});
      emit.kernel(attention_bwd, 2 * attention, {r(gB), r(L.qkv), r(L.attn), w(gQKV)});
      emit.kernel(matmul_bwd_data, mm_qkv, {r(gQKV), r(P(p[1])), w(gC)});
      emit.kernel(matmul_bwd_weight, mm_qkv, {r(L.a_ln1), r(gQKV), w(G(p[1]))});
      emit.kernel(layernorm_bwd, elementwise, {r(gC), r(x_in), r(P(p[0])), w(gA), w(G(p[0]))});
    }
    if (m.learned_positions) {
      emit.kernel(embedding_bwd, elementwise, {r(gA), r(token_ids), w(G(emb)), w(G(pos))});
    } else {
      emit.kernel(embedding_bwd, elementwise, {r(gA), r(token_ids), w(G(emb))});
    }
    // Optimizer: one fused Adam step per parameter tensor.
    for (const auto& set : parameter_sets) {
      emit.kernel(adam_step, 10 * static_cast<double>(set[0].bytes / kFloat),
                  {w(set[0]), r(set[1]), w(set[2]), w(set[3])});
    }
    if (iteration == 0) result.kernels_per_iteration = result.kernels;
  }
  if (!writer.finish()) result.error = writer.error();
  return result;
}

GeneratorResult generate_trace_file(const GeneratorOptions& options, const std::string& path) {
  core::TraceWriter writer;
  if (!writer.open(path)) {
    GeneratorResult result;
    result.error = writer.error();
    return result;
  }
  return generate_trace(options, writer);
}

}  // namespace deepum::sim
