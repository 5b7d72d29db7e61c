// execution_key_repeats: whether a traced training loop's execution keys repeat from one iteration
// to the next, which planning by addresses relies on (the engine plans with a learned loop only
// where it repeats its addresses).
//
//   execution_key_repeats TRACE.dtrace ITERATIONS
//
// Splits the trace's launches into ITERATIONS equal parts and prints, per part, the distinct
// execution keys (function, shape and managed pointer values), shape-only keys (function, grid,
// block) and pointer blocks, and how many of each part's also appeared in the part before.
#include <cstdio>
#include <cstdlib>
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

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: execution_key_repeats TRACE.dtrace ITERATIONS\n");
    return 2;
  }
  const deepum::core::TraceReadResult read = deepum::core::read_trace(argv[1]);
  if (!read) {
    std::fprintf(stderr, "execution_key_repeats: %s\n", read.error.c_str());
    return 1;
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
