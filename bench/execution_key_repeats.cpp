// execution_key_repeats: whether a traced training loop's execution keys and 2 MB blocks repeat from
// one iteration to the next, which the engine's planning relies on (with a loop of addresses, or a
// loop of shapes whose blocks repeat).
//
//   execution_key_repeats TRACE.dtrace ITERATIONS
//   execution_key_repeats TRACE.dtrace --period P STEPS
//
// Splits the trace's launches into ITERATIONS equal parts and prints, per part, the distinct
// execution keys (function, shape and managed pointer values), shape-only keys (function, grid,
// block) and pointer blocks, and how many of each part's also appeared in the part before.
// With --period: the last STEPS steps of P launches each; per launch, whether the one P launches
// earlier had its function, its execution key and its pointer blocks; per 2 MB block, whether it
// was named at the same launches of its step as in the step before (planning by blocks needs that
// where addresses move).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "deepum/core/trace_file.hpp"

namespace {

template <typename T>
std::size_t also_in(const std::set<T>& part, const std::set<T>& before) {
  std::size_t count = 0;
  for (const T& value : part) count += before.count(value);
  return count;
}

std::set<deepum::core::BlockId> blocks_of(const deepum::core::KernelLaunch& launch) {
  std::set<deepum::core::BlockId> blocks;
  for (std::size_t p = 0; p < launch.pointer_count; ++p)
    blocks.insert(deepum::core::block_of(launch.pointers[p]));
  return blocks;
}

int by_period(const char* path, const std::vector<deepum::core::KernelLaunch>& launches, std::size_t period,
              std::size_t steps) {
  if (period == 0 || steps < 2 || launches.size() < period * steps) {
    std::fprintf(stderr, "execution_key_repeats: %zu steps of %zu launches for %zu launches\n", steps, period,
                 launches.size());
    return 2;
  }
  const std::size_t base = launches.size() - period * steps;
  std::size_t same_function = 0, same_key = 0, same_blocks = 0;
  for (std::size_t i = base + period; i < launches.size(); ++i) {
    const deepum::core::KernelLaunch& now = launches[i];
    const deepum::core::KernelLaunch& before = launches[i - period];
    same_function += now.function == before.function;
    same_key += now.execution_key == before.execution_key;
    same_blocks += blocks_of(now) == blocks_of(before);
  }
  std::printf("%s: the last %zu steps of %zu launches\n", path, steps, period);
  std::printf(
      "launches after the first step: %zu; as %zu earlier: function %zu, execution key %zu, blocks %zu\n",
      launches.size() - base - period, period, same_function, same_key, same_blocks);
  // Per step, each block's launches within the step.
  std::vector<std::map<deepum::core::BlockId, std::vector<std::size_t>>> uses(steps);
  for (std::size_t i = base; i < launches.size(); ++i) {
    for (deepum::core::BlockId block : blocks_of(launches[i]))
      uses[(i - base) / period][block].push_back((i - base) % period);
  }
  std::printf(
      "| step | blocks named | also in the step before | named at the same launches |\n|---|---|---|---|\n");
  for (std::size_t step = 1; step < steps; ++step) {
    std::size_t both = 0, same = 0;
    for (const auto& [block, at] : uses[step]) {
      auto it = uses[step - 1].find(block);
      if (it == uses[step - 1].end()) continue;
      ++both;
      same += it->second == at;
    }
    std::printf("| %zu | %zu | %zu | %zu |\n", step + 1, uses[step].size(), both, same);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 && !(argc == 5 && std::strcmp(argv[2], "--period") == 0)) {
    std::fprintf(stderr,
                 "usage: execution_key_repeats TRACE.dtrace ITERATIONS\n"
                 "       execution_key_repeats TRACE.dtrace --period P STEPS\n");
    return 2;
  }
  const deepum::core::TraceReadResult read = deepum::core::read_trace(argv[1]);
  if (!read) {
    std::fprintf(stderr, "execution_key_repeats: %s\n", read.error.c_str());
    return 1;
  }
  if (argc == 5) {
    return by_period(argv[1], read.trace->launches, std::strtoul(argv[3], nullptr, 10),
                     std::strtoul(argv[4], nullptr, 10));
  }
  const long iterations = std::strtol(argv[2], nullptr, 10);
  const auto& launches = read.trace->launches;
  if (iterations < 1 || launches.size() < static_cast<std::size_t>(iterations)) {
    std::fprintf(stderr, "execution_key_repeats: %s iterations for %zu launches\n", argv[2], launches.size());
    return 2;
  }
  using Shape = std::tuple<std::uint64_t, std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t,
                           std::uint32_t, std::uint32_t>;
  const auto parts = static_cast<std::size_t>(iterations);
  std::vector<std::set<std::uint64_t>> keys(parts), blocks(parts);
  std::vector<std::set<Shape>> shapes(parts);
  const std::size_t per_part = launches.size() / parts;
  for (std::size_t i = 0; i < launches.size(); ++i) {
    const deepum::core::KernelLaunch& launch = launches[i];
    const std::size_t part = std::min(i / per_part, parts - 1);
    keys[part].insert(launch.execution_key);
    shapes[part].insert({launch.function, launch.grid[0], launch.grid[1], launch.grid[2], launch.block[0],
                         launch.block[1], launch.block[2]});
    for (std::size_t p = 0; p < launch.pointer_count; ++p)
      blocks[part].insert(deepum::core::block_of(launch.pointers[p]));
  }
  std::printf("%s: %zu launches in %zu parts\n", argv[1], launches.size(), parts);
  std::printf(
      "| part | execution keys | also in the part before | shape keys | also before | pointer blocks | also "
      "before |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  for (std::size_t part = 0; part < parts; ++part) {
    const auto before = [&](const auto& sets) {
      return part == 0 ? std::string("-") : std::to_string(also_in(sets[part], sets[part - 1]));
    };
    std::printf("| %zu | %zu | %s | %zu | %s | %zu | %s |\n", part + 1, keys[part].size(),
                before(keys).c_str(), shapes[part].size(), before(shapes).c_str(), blocks[part].size(),
                before(blocks).c_str());
  }
  return 0;
}
