// deepum-sim: replays a .dtrace through memory-management policies on a modelled GPU, and writes
// synthetic transformer-training traces. docs/simulator.md describes the model.
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "deepum/config/config.hpp"
#include "deepum/sim/engine.hpp"
#include "deepum/sim/generator.hpp"
#include "deepum/sim/machine_model.hpp"
#include "deepum/sim/plan.hpp"
#include "deepum/sim/policies.hpp"
#include "deepum/sim/report.hpp"
#include "deepum/sim/timeline.hpp"
#include "deepum/sim/workload.hpp"

namespace {

using namespace deepum::sim;

constexpr int kExitError = 1;
constexpr int kExitUsage = 2;  // also a trace or machine file that cannot be read
constexpr int kExitCheckFailed = 3;

constexpr const char* kUsage =
    "usage:\n"
    "  deepum-sim replay TRACE.dtrace [options]    simulate the trace under each policy\n"
    "      --machine FILE.json         override the H200 machine model (deepum-sim machine lists the keys)\n"
    "      --capacity SIZE             GPU memory for managed data, such as 40GiB (default: the model's)\n"
    "      --oversubscription R        GPU memory = the trace's footprint / R (R >= 1, such as 1.5)\n"
    "      --policy LIST               comma-separated: reactive, reactive-migration, deepum-reactive,\n"
    "                                  deepum-ordered, deepum-place, deepum-swap, oracle;\n"
    "                                  -lru after a deepum-ordered, -place or -swap: victims least\n"
    "                                  recently named, not by predicted next use; -oracle: by the\n"
    "                                  trace's true next use\n"
    "                                  (default reactive,deepum-swap,oracle; deepum-swap, mode fast,\n"
    "                                  only where the trace has every launch's operands)\n"
    "      --limit SIZE                the resident limit the deepum-ordered policies hold on the GPU\n"
    "                                  (default: all of it), as the library's resident_limit\n"
    "      --iterations N              iterations in the trace (default: found from its repeating kernels)\n"
    "      --warmup W                  replay the first W iterations but measure only the rest (the\n"
    "                                  step time of a training run's steady state)\n"
    "      --no-key-union              a kernel touches only its own faulted and pointer blocks\n"
    "      --no-pointer-extents        a launch pointer touches only the block holding its address\n"
    "      --raw-compute               a kernel's compute time is its own end - start\n"
    "      --json                      JSON instead of a table\n"
    "      --check                     exit 3 unless floor <= oracle <= reactive (and, when\n"
    "                                  deepum-swap is replayed, floor <= deepum-swap <= reactive)\n"
    "      --timing                    print load and replay times to stderr\n"
    "      --timeline FILE.json        write the replay's operations and moves, every iteration, as\n"
    "                                  a trace laid out like deepum's (one --policy)\n"
    "      --victims                   what each policy's victims cost: the GiB it wrote to the host\n"
    "                                  by when the trace names them again, and those that die first\n"
    "  deepum-sim generate --model M --batch B --seq S --iterations I --out FILE.dtrace [options]\n"
    "      M: tiny, gpt2-124m, gpt2-xl, 7b, 13b, 70b\n"
    "  deepum-sim generate --model sweep [--arrays K] [--mib M] --iterations I --out FILE.dtrace [options]\n"
    "      a plain CUDA loop over K arrays of M MiB (default 16 of 256), as tests/programs/sweep\n"
    "      --tflops T                  matmul throughput (default 400)\n"
    "      --hbm-gb-per-s G            device-memory bandwidth for memory-bound kernels (default 3000)\n"
    "      --min-kernel-us U           shortest kernel (default 4)\n"
    "      --fault-iterations N        leading iterations that fault on every block they touch (default 1)\n"
    "  deepum-sim plan TRACE.dtrace [options]      step time at each amount of GPU memory\n"
    "      --machine FILE.json         as for replay\n"
    "      --iterations N, --warmup W  as for replay (default: found; 1 warm-up where there are 2+)\n"
    "      --memory LIST               GPU memory to try, comma-separated sizes such as 4GiB,6GiB\n"
    "                                  (default: the footprint times 0.25, 0.33, 0.4, 0.5 ... 1)\n"
    "      --within X                  the slowdown allowed for the smallest memory (default 1.5)\n"
    "      --json                      JSON instead of a table\n"
    "  deepum-sim machine [--machine FILE.json]    the effective machine model, as JSON\n"
    "  deepum-sim --version\n"
    "\n"
    "Exit status: 0 done, 1 error (simulation), 2 usage or a bad trace or machine file, 3 --check failed.\n";

// One line that names the problem; the whole usage only on --help.
int usage(const std::string& problem) {
  std::fprintf(stderr, "deepum-sim: %s (deepum-sim --help for usage)\n", problem.c_str());
  return kExitUsage;
}

int error(const std::string& message, int status = kExitError) {
  std::fprintf(stderr, "deepum-sim: %s\n", message.c_str());
  return status;
}

int bad_input(const std::string& message) { return error(message, kExitUsage); }

template <typename T>
std::optional<T> parse_number(std::string_view text) {
  T value{};
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || text.empty()) return std::nullopt;
  return value;
}

// Walks "--name value" options; anything else is a usage error.
class Args {
 public:
  Args(int argc, char** argv, int first) {
    for (int i = first; i < argc; ++i) items_.emplace_back(argv[i]);
  }
  bool done() const { return next_ >= items_.size(); }
  std::string_view peek() const { return items_[next_]; }
  std::string_view take() { return items_[next_++]; }
  std::optional<std::string_view> value() {
    if (done()) return std::nullopt;
    return take();
  }

 private:
  std::vector<std::string_view> items_;
  std::size_t next_ = 0;
};

std::optional<MachineModel> machine_from(const std::string& path, std::string& problem) {
  if (path.empty()) return MachineModel::h200();
  MachineLoad load = load_machine_model(path);
  if (!load.model) problem = load.error;
  return load.model;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

int replay(Args& args) {
  std::string trace, machine_path;
  std::optional<std::uint64_t> capacity;
  std::optional<double> oversubscription;
  std::uint64_t resident_limit = 0;
  std::vector<std::string> policies{"reactive", "deepum-swap", "oracle"};
  bool policies_given = false;
  std::optional<std::uint32_t> iterations;
  std::uint32_t warmup = 0;
  WorkloadOptions workload_options;
  bool json = false, check = false, timing = false, victims = false;
  std::string timeline_path;
  while (!args.done()) {
    const std::string_view arg = args.take();
    const auto need = [&](std::string_view name) -> std::optional<std::string_view> {
      auto v = args.value();
      if (!v) usage(std::string(name) + " needs a value");
      return v;
    };
    if (arg == "--machine") {
      auto v = need(arg);
      if (!v) return kExitUsage;
      machine_path = std::string(*v);
    } else if (arg == "--capacity") {
      auto v = need(arg);
      if (!v) return kExitUsage;
      std::string why;
      auto size = deepum::config::parse_size(*v, &why);
      if (!size || size->is_percent() || size->bytes() == 0) {
        return usage("--capacity " + std::string(*v) + ": " + (size ? "expected a size such as 40GiB" : why));
      }
      capacity = size->bytes();
    } else if (arg == "--limit") {
      auto v = need(arg);
      if (!v) return kExitUsage;
      std::string why;
      auto size = deepum::config::parse_size(*v, &why);
      if (!size || size->is_percent() || size->bytes() < deepum::core::kBlockBytes) {
        return usage("--limit " + std::string(*v) + ": " +
                     (size ? "expected a size of at least 2MiB such as 5GiB" : why));
      }
      resident_limit = size->bytes();
    } else if (arg == "--oversubscription") {
      auto v = need(arg);
      if (!v) return kExitUsage;
      auto r = parse_number<double>(*v);
      if (!r || !std::isfinite(*r) || *r < 1.0)
        return usage("--oversubscription expects a number >= 1, got " + std::string(*v));
      oversubscription = *r;
    } else if (arg == "--policy") {
      auto v = need(arg);
      if (!v) return kExitUsage;
      policies.clear();
      std::string_view list = *v;
      while (!list.empty()) {
        const std::size_t comma = list.find(',');
        const std::string name(list.substr(0, comma));
        if (!make_policy(name)) return usage("unknown policy '" + name + "'");
        policies.push_back(name);
        list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
      }
      if (policies.empty()) return usage("--policy needs at least one policy");
      policies_given = true;
    } else if (arg == "--iterations") {
      auto v = need(arg);
      if (!v) return kExitUsage;
      auto n = parse_number<std::uint32_t>(*v);
      if (!n || *n == 0) return usage("--iterations expects a positive integer, got " + std::string(*v));
      iterations = *n;
    } else if (arg == "--warmup") {
      auto v = need(arg);
      if (!v) return kExitUsage;
      auto n = parse_number<std::uint32_t>(*v);
      if (!n) return usage("--warmup expects a whole number, got " + std::string(*v));
      warmup = *n;
    } else if (arg == "--no-key-union") {
      workload_options.union_by_execution_key = false;
    } else if (arg == "--no-pointer-extents") {
      workload_options.pointer_extents = false;
    } else if (arg == "--raw-compute") {
      workload_options.min_compute_by_execution_key = false;
    } else if (arg == "--json") {
      json = true;
    } else if (arg == "--check") {
      check = true;
    } else if (arg == "--timing") {
      timing = true;
    } else if (arg == "--victims") {
      victims = true;
    } else if (arg == "--timeline") {
      auto v = need(arg);
      if (!v) return kExitUsage;
      timeline_path = std::string(*v);
    } else if (!arg.starts_with("-") && trace.empty()) {
      trace = std::string(arg);
    } else {
      return usage("unexpected argument '" + std::string(arg) + "'");
    }
  }
  if (trace.empty()) return usage("replay needs a trace file");
  if (capacity && oversubscription) return usage("give --capacity or --oversubscription, not both");
  if (!timeline_path.empty() && policies.size() != 1)
    return usage("--timeline writes one replay: give it one --policy");

  std::string problem;
  std::optional<MachineModel> machine = machine_from(machine_path, problem);
  if (!machine) return bad_input(problem);

  const auto load_start = std::chrono::steady_clock::now();
  WorkloadLoad load = load_workload(trace, workload_options);
  if (!load.ok()) return bad_input(load.error);
  const Workload& workload = load.workload;
  if (timing) {
    std::fprintf(stderr, "deepum-sim: loaded %zu kernels, %u blocks, %zu touches in %.2f s\n",
                 workload.kernels.size(), workload.block_count(), workload.touches.size(),
                 seconds_since(load_start));
  }
  if (workload.kernels.empty()) return bad_input(trace + ": the trace holds no kernel executions to replay");
  // The engine replays what each launch named: a trace without operands (before format 1.4) has
  // the other policies alone by default.
  if (!policies_given && workload.operands.empty()) {
    std::erase(policies, "deepum-swap");
    std::fprintf(stderr,
                 "deepum-sim: %s names no launch operands (a trace before format 1.4): deepum-swap, "
                 "deepum's engine, is left out\n",
                 trace.c_str());
  }

  if (capacity) machine->capacity_bytes = *capacity;
  if (oversubscription) {
    const auto blocks = static_cast<std::uint64_t>(
        std::ceil(static_cast<double>(workload.block_count()) / *oversubscription));
    machine->capacity_bytes = std::max<std::uint64_t>(blocks, 1) * deepum::core::kBlockBytes;
  }
  ReplayReport report;
  report.trace = trace;
  report.kernels = workload.kernels.size();
  report.iterations = iterations.value_or(workload.iterations);
  report.footprint_bytes = workload.footprint_bytes();
  report.capacity_bytes = machine->capacity_bytes / deepum::core::kBlockBytes * deepum::core::kBlockBytes;
  report.compute_ns = workload.compute_ns();
  report.machine = *machine;
  RunOptions run_options;
  run_options.record_timeline = !timeline_path.empty();
  run_options.record_evictions = victims;
  if (warmup > 0) {
    if (warmup >= report.iterations) {
      return usage("--warmup " + std::to_string(warmup) + " leaves none of the " +
                   std::to_string(report.iterations) + " iterations to measure (give --iterations N)");
    }
    const std::vector<std::uint32_t> starts = iteration_starts(workload, report.iterations);
    if (starts.empty()) {
      return error(trace + ": cannot tell where its " + std::to_string(report.iterations) +
                   " iterations start: no kernel function runs exactly that many times");
    }
    run_options.window_start = starts[warmup];
    report.warmup_iterations = warmup;
    report.iterations -= warmup;
    report.compute_ns = 0;
    for (std::size_t k = run_options.window_start; k < workload.kernels.size(); ++k)
      report.compute_ns += workload.kernels[k].compute_ns;
  }
  report.belady =
      belady_volume(workload, machine->capacity_bytes / deepum::core::kBlockBytes, run_options.window_start);
  for (const std::string& name : policies) {
    const auto start = std::chrono::steady_clock::now();
    try {
      if (name == "oracle") {
        report.results.push_back(simulate_oracle(workload, *machine, run_options));
      } else {
        std::unique_ptr<Policy> policy = make_policy(name, resident_limit);
        report.results.push_back(simulate(workload, *machine, *policy, run_options));
      }
    } catch (const std::exception& e) {
      return error(trace + ": " + e.what());
    }
    // The report shows the measured window only.
    SimResult& result = report.results.back();
    if (!timeline_path.empty()) {
      std::ofstream file(timeline_path);
      file << timeline_json(workload, result.timeline);
      if (!file.flush()) return error("cannot write the timeline to " + timeline_path);
      result.timeline.clear();
    }
    if (victims) {
      report.victims.push_back(victim_cost(workload, result.evictions, run_options.window_start));
      result.evictions.clear();
    }
    result.stats = stats_between(result.before_window, result.stats);
    if (timing)
      std::fprintf(stderr, "deepum-sim: %s replayed in %.2f s\n", name.c_str(), seconds_since(start));
  }
  const std::string out = json ? format_json(report) : format_text(report);
  std::fwrite(out.data(), 1, out.size(), stdout);

  if (check) {
    const SimResult* reactive = nullptr;
    const SimResult* deepum = nullptr;
    const SimResult* oracle = nullptr;
    for (const SimResult& r : report.results) {
      if (r.policy == "reactive") reactive = &r;
      if (r.policy == "deepum-swap") deepum = &r;
      if (r.policy == "oracle") oracle = &r;
    }
    if (!reactive || !oracle) return usage("--check needs the reactive and oracle policies");
    const std::uint64_t floor = floor_ns(report).value_or(0);
    // With the library's default replayed too: floor <= deepum-swap <= reactive. Swaps copy at the
    // pinned rate, which the oracle's prefetches do not, so the oracle bounds it from neither side.
    const bool deepum_ok =
        !deepum || (floor <= deepum->stats.total_ns && deepum->stats.total_ns <= reactive->stats.total_ns);
    if (floor > oracle->stats.total_ns || oracle->stats.total_ns > reactive->stats.total_ns || !deepum_ok) {
      std::string deepum_ns;
      if (deepum) deepum_ns = ", deepum-swap " + std::to_string(deepum->stats.total_ns) + " ns";
      std::fprintf(stderr, "deepum-sim: check failed: floor %llu ns, oracle %llu ns%s, reactive %llu ns\n",
                   static_cast<unsigned long long>(floor),
                   static_cast<unsigned long long>(oracle->stats.total_ns), deepum_ns.c_str(),
                   static_cast<unsigned long long>(reactive->stats.total_ns));
      return kExitCheckFailed;
    }
  }
  return 0;
}

int generate(Args& args, const std::string& command_line) {
  GeneratorOptions options;
  options.command_line = command_line;
  std::string out;
  bool have_model = false, have_batch = false, have_seq = false, have_iterations = false;
  while (!args.done()) {
    const std::string name(args.take());
    const std::optional<std::string_view> v = args.value();
    if (!v) return usage(name + " needs a value");
    const std::string value(*v);
    const auto positive = [&](auto& field) {
      using T = std::remove_reference_t<decltype(field)>;
      auto n = parse_number<T>(value);
      if (!n || !(*n > 0)) return false;
      field = *n;
      return true;
    };
    bool ok = true;
    if (name == "--model") {
      options.model = value;
      have_model = true;
      if (!model_shape(value) && value != "sweep") return usage("unknown model '" + value + "'");
    } else if (name == "--batch") {
      ok = have_batch = positive(options.batch);
    } else if (name == "--seq") {
      ok = have_seq = positive(options.seq);
    } else if (name == "--arrays") {
      ok = positive(options.arrays) && options.arrays >= 2;
      if (!ok) return usage("--arrays expects a whole number of at least 2, got '" + value + "'");
    } else if (name == "--mib") {
      ok = positive(options.mib);
    } else if (name == "--iterations") {
      ok = have_iterations = positive(options.iterations);
    } else if (name == "--out") {
      out = value;
    } else if (name == "--tflops") {
      ok = positive(options.tflops);
    } else if (name == "--hbm-gb-per-s") {
      ok = positive(options.hbm_gb_per_s);
    } else if (name == "--min-kernel-us") {
      auto n = parse_number<double>(value);
      ok = n && *n >= 0;
      if (ok) options.min_kernel_us = *n;
    } else if (name == "--fault-iterations") {
      auto n = parse_number<std::uint32_t>(value);
      ok = n.has_value();
      if (ok) options.fault_iterations = *n;
    } else {
      return usage("unexpected argument '" + name + "'");
    }
    if (!ok) return usage(name + " expects a positive number, got '" + value + "'");
  }
  if (options.model == "sweep" ? !have_iterations || out.empty()
                               : !have_model || !have_batch || !have_seq || !have_iterations || out.empty()) {
    return usage(
        "generate needs --model, --batch, --seq (a transformer; --arrays and --mib for the sweep), "
        "--iterations and --out");
  }
  const GeneratorResult result = generate_trace_file(options, out);
  if (!result.ok()) return error(result.error);
  std::printf("%s: %llu kernels (%llu per iteration), %llu faults, %.2f B parameters, %.2f GiB managed\n",
              out.c_str(), static_cast<unsigned long long>(result.kernels),
              static_cast<unsigned long long>(result.kernels_per_iteration),
              static_cast<unsigned long long>(result.faults), static_cast<double>(result.parameters) / 1e9,
              static_cast<double>(result.footprint_bytes) / static_cast<double>(std::uint64_t{1} << 30));
  return 0;
}

int machine(Args& args) {
  std::string path;
  while (!args.done()) {
    const std::string_view arg = args.take();
    if (arg != "--machine") return usage("unexpected argument '" + std::string(arg) + "'");
    auto v = args.value();
    if (!v) return usage("--machine needs a value");
    path = std::string(*v);
  }
  std::string problem;
  std::optional<MachineModel> model = machine_from(path, problem);
  if (!model) return bad_input(problem);
  const std::string json = machine_model_json(*model);
  std::fwrite(json.data(), 1, json.size(), stdout);
  return 0;
}

}  // namespace

// The sizes of a comma-separated list, or nullopt with `problem` set.
std::optional<std::vector<std::uint64_t>> parse_sizes(std::string_view list, std::string& problem) {
  std::vector<std::uint64_t> sizes;
  while (!list.empty()) {
    const std::size_t comma = list.find(',');
    const std::string_view item = list.substr(0, comma);
    std::string why;
    const auto size = deepum::config::parse_size(item, &why);
    if (!size || size->is_percent() || size->bytes() == 0) {
      problem = "--memory " + std::string(item) + ": " + (size ? "expected a size such as 8GiB" : why);
      return std::nullopt;
    }
    sizes.push_back(size->bytes());
    list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
  }
  if (sizes.empty()) problem = "--memory expects sizes such as 4GiB,8GiB";
  return sizes.empty() ? std::nullopt : std::optional(sizes);
}

std::string gib_text(std::uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f GiB", static_cast<double>(bytes) / static_cast<double>(1ULL << 30));
  return text;
}

std::string plan_text(const std::string& trace, const PlanOptions& options, const MemoryPlan& plan) {
  std::string out = "deepum-sim plan: " + trace + ", " + std::to_string(options.iterations - options.warmup) +
                    " measured iterations, footprint " + gib_text(plan.footprint_bytes) + "\n";
  char line[160];
  std::snprintf(line, sizeof line, "%14s %10s %9s\n", "GPU memory", "step ms", "x full");
  out += line;
  for (const PlanPoint& point : plan.points) {
    if (!point.step_ms) {
      out += "    " + gib_text(point.memory_bytes) + "  cannot run: " + point.why + "\n";
      continue;
    }
    std::snprintf(line, sizeof line, "%14s %10.1f %9.2f\n", gib_text(point.memory_bytes).c_str(),
                  *point.step_ms, *point.step_ms / plan.full_step_ms);
    out += line;
  }
  std::snprintf(line, sizeof line, "%.2fx", options.within);
  out += plan.smallest_within ? "Smallest GPU memory within " + std::string(line) +
                                    " the step with all of it: " + gib_text(*plan.smallest_within) + "\n"
                              : "No memory tried keeps the step within " + std::string(line) + "\n";
  return out;
}

std::string plan_json(const std::string& trace, const PlanOptions& options, const MemoryPlan& plan) {
  nlohmann::json doc = {{"trace", trace},
                        {"measured_iterations", options.iterations - options.warmup},
                        {"footprint_bytes", plan.footprint_bytes},
                        {"full_step_ms", plan.full_step_ms},
                        {"within", options.within},
                        {"smallest_within_bytes", plan.smallest_within ? nlohmann::json(*plan.smallest_within)
                                                                       : nlohmann::json(nullptr)}};
  for (const PlanPoint& point : plan.points) {
    doc["points"].push_back(
        {{"memory_bytes", point.memory_bytes},
         {"step_ms", point.step_ms ? nlohmann::json(*point.step_ms) : nlohmann::json(nullptr)},
         {"cannot_run", point.why}});
  }
  return doc.dump(2) + "\n";
}

int plan(Args& args) {
  std::string trace, machine_path;
  std::optional<std::uint32_t> iterations, warmup;
  PlanOptions options;
  bool json = false;
  while (!args.done()) {
    const std::string_view arg = args.take();
    const auto need = [&]() -> std::optional<std::string_view> {
      auto v = args.value();
      if (!v) usage(std::string(arg) + " needs a value");
      return v;
    };
    if (arg == "--machine") {
      auto v = need();
      if (!v) return kExitUsage;
      machine_path = std::string(*v);
    } else if (arg == "--iterations" || arg == "--warmup") {
      auto v = need();
      if (!v) return kExitUsage;
      const auto n = parse_number<std::uint32_t>(*v);
      if (!n || (arg == "--iterations" && *n == 0))
        return usage(std::string(arg) + " expects a whole number, got " + std::string(*v));
      (arg == "--iterations" ? iterations : warmup) = *n;
    } else if (arg == "--memory") {
      auto v = need();
      if (!v) return kExitUsage;
      std::string problem;
      auto sizes = parse_sizes(*v, problem);
      if (!sizes) return usage(problem);
      options.memory_bytes = std::move(*sizes);
    } else if (arg == "--within") {
      auto v = need();
      if (!v) return kExitUsage;
      const auto x = parse_number<double>(*v);
      if (!x || !(*x >= 1.0) || *x > 1000.0)
        return usage("--within expects a factor of 1 or more, got " + std::string(*v));
      options.within = *x;
    } else if (arg == "--json") {
      json = true;
    } else if (!arg.starts_with("-") && trace.empty()) {
      trace = std::string(arg);
    } else {
      return usage("unexpected argument '" + std::string(arg) + "'");
    }
  }
  if (trace.empty()) return usage("plan needs a trace file");
  std::string problem;
  std::optional<MachineModel> machine = machine_from(machine_path, problem);
  if (!machine) return bad_input(problem);
  WorkloadLoad load = load_workload(trace, WorkloadOptions{});
  if (!load.ok()) return bad_input(load.error);
  if (load.workload.kernels.empty())
    return bad_input(trace + ": the trace holds no kernel executions to replay");
  options.iterations = iterations.value_or(load.workload.iterations);
  options.warmup = warmup.value_or(options.iterations > 1 ? 1 : 0);
  MemoryPlan result;
  try {
    result = plan_memory(load.workload, *machine, options);
  } catch (const std::invalid_argument& e) {
    return bad_input(trace + ": " + e.what());
  }
  const std::string out = json ? plan_json(trace, options, result) : plan_text(trace, options, result);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 2) return usage("no command given");
  for (int i = 1; i < argc; ++i) {  // --help anywhere, "deepum-sim replay --help" too
    if (std::string_view(argv[i]) == "--help" || std::string_view(argv[i]) == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
  }
  const std::string_view command = argv[1];
  std::string command_line;
  command_line = std::filesystem::path(argv[0]).filename().string();  // no build path in the trace
  for (int i = 1; i < argc; ++i) command_line += " " + std::string(argv[i]);
  Args args(argc, argv, 2);
  try {
    if (command == "replay") return replay(args);
    if (command == "generate") return generate(args, command_line);
    if (command == "machine") return machine(args);
    if (command == "plan") return plan(args);
    if (command == "help") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (command == "--version") {
      std::printf("deepum-sim %s\n", DEEPUM_VERSION);
      return 0;
    }
  } catch (const std::exception& e) {
    return error(e.what());
  }
  return usage("unknown command '" + std::string(command) + "'");
}
