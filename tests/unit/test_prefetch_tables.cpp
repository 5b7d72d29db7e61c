// ExecutionIdTable and BlockCorrelationTable: DeepUM's two predictors on fabricated sequences.
#include <doctest/doctest.h>

#include <vector>

#include "deepum/prefetch/block_correlation_table.hpp"
#include "deepum/prefetch/execution_id_table.hpp"

using namespace deepum::prefetch;

namespace {
std::vector<BlockId> successors_of(const BlockCorrelationTable& table, BlockId block) {
  auto s = table.successors(block);
  return {s.begin(), s.end()};
}
}  // namespace

TEST_CASE("execution IDs are dense and stable per key") {
  ExecutionIdTable table;
  CHECK(table.on_launch(0xaaa) == 0);
  CHECK(table.on_launch(0xbbb) == 1);
  CHECK(table.on_launch(0xaaa) == 0);
  CHECK(table.on_launch(0xccc) == 2);
  CHECK(table.find(0xbbb) == ExecutionId{1});
  CHECK_FALSE(table.find(0xddd));
  CHECK(table.ids() == 3);
}

TEST_CASE("the next kernels are predicted around a learned loop") {
  ExecutionIdTable table(3);
  const std::vector<std::uint64_t> loop{10, 11, 12, 13, 14};
  for (std::uint64_t key : loop) table.on_launch(key);
  CHECK(table.predict(4).empty());  // (12, 13, 14) was never followed by anything yet
  for (std::uint64_t key : loop) table.on_launch(key);
  // History (12, 13, 14) -> 10 was learned at the second turn's first launch.
  CHECK(table.predict(7) == std::vector<ExecutionId>{0, 1, 2, 3, 4, 0, 1});
  CHECK(table.predict(0).empty());
}

TEST_CASE("a longer history tells apart kernels a shorter one confuses") {
  // A B A C, repeated: after A comes B or C, depending on what came before A.
  const std::vector<std::uint64_t> loop{1, 2, 1, 3};
  ExecutionIdTable short_history(1), long_history(2);
  for (int turn = 0; turn < 4; ++turn) {
    for (std::uint64_t key : loop) {
      short_history.on_launch(key);
      long_history.on_launch(key);
    }
  }
  short_history.on_launch(1);  // ... C A: B comes next
  long_history.on_launch(1);
  CHECK(long_history.predict(4) == std::vector<ExecutionId>{1, 0, 2, 0});
  CHECK(short_history.predict(1) != std::vector<ExecutionId>{1});  // A -> C, the most recent
}

TEST_CASE("one deviation does not unlearn a successor; a changed loop is learned in two turns") {
  ExecutionIdTable table(1);
  auto run = [&](std::uint64_t a, std::uint64_t b) {
    table.on_launch(a);
    table.on_launch(b);
  };
  for (int i = 0; i < 4; ++i) run(1, 2);  // 1 -> 2 confirmed, confidence at its maximum
  table.on_launch(1);
  CHECK(table.next_confidence() == ExecutionIdTable::kMaxConfidence);
  table.on_launch(3);  // deviates once
  table.on_launch(1);
  CHECK(table.predict(1) == std::vector<ExecutionId>{1});  // still 2 (ID 1)
  CHECK(table.next_confidence() == 1);
  table.on_launch(3);  // deviates again: now 3 takes over
  table.on_launch(1);
  CHECK(table.predict(1) == std::vector<ExecutionId>{2});
}

TEST_CASE("clear forgets IDs and successors") {
  ExecutionIdTable table;
  for (int i = 0; i < 3; ++i) table.on_launch(7);
  CHECK(table.histories() > 0);
  CHECK(table.memory_bytes() > 0);
  table.clear();
  CHECK(table.ids() == 0);
  CHECK(table.histories() == 0);
  CHECK(table.on_launch(99) == 0);
}

TEST_CASE("rows keep successors most recent first, up to the row's size") {
  BlockCorrelationTable table(64, 2, 3);
  table.learn(std::vector<BlockId>{100, 101});
  table.learn(std::vector<BlockId>{100, 102});
  table.learn(std::vector<BlockId>{100, 103});
  CHECK(successors_of(table, 100) == std::vector<BlockId>{103, 102, 101});
  table.learn(std::vector<BlockId>{100, 101});  // seen again: moves to the front
  CHECK(successors_of(table, 100) == std::vector<BlockId>{101, 103, 102});
  table.learn(std::vector<BlockId>{100, 104});  // a fourth: the least recent (102) falls off
  CHECK(successors_of(table, 100) == std::vector<BlockId>{104, 101, 103});
  CHECK(table.start_block() == BlockId{100});
  CHECK(successors_of(table, 555).empty());
}

TEST_CASE("a full set gives up its least recently used row") {
  BlockCorrelationTable table(1, 2, 4);  // one set: every block competes for two ways
  table.learn(std::vector<BlockId>{1, 2});
  table.learn(std::vector<BlockId>{3, 4});  // rows 1, 2 then 3 (evicts 1), 4 (evicts 2)
  CHECK(successors_of(table, 1).empty());
  CHECK(successors_of(table, 3) == std::vector<BlockId>{4});
  table.learn(std::vector<BlockId>{3, 5});  // touches 3, so 4 is the least recent: 5 replaces it
  CHECK(successors_of(table, 3) == std::vector<BlockId>{5, 4});
  CHECK(table.walk(3) == std::vector<BlockId>{3, 5, 4});  // 5 has a row (no successors); 4 none
  CHECK(table.allocated_sets() == 1);
}

TEST_CASE("a walk chains successors breadth first, each block once, ignoring repeats") {
  BlockCorrelationTable table(2048, 2, 4);
  table.learn(std::vector<BlockId>{10, 10, 11, 12, 13, 11});  // 11 -> 12 and, later, 11 after 13
  CHECK(table.walk(10) == std::vector<BlockId>{10, 11, 12, 13});
  table.learn(std::vector<BlockId>{10, 20, 21});
  CHECK(table.walk(10) == std::vector<BlockId>{10, 20, 11, 21, 12, 13});
  CHECK(table.walk(999) == std::vector<BlockId>{999});
  // Sets are allocated on first use: a handful of blocks cost a handful of sets.
  CHECK(table.allocated_sets() <= 6);
  CHECK(table.memory_bytes() < 4096);
}
