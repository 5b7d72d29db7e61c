// LoopPeriod on made-up signature sequences: loops, odd launches, loops that change or stop.
#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "deepum/core/loop_period.hpp"

using deepum::core::LoopPeriod;

namespace {
// Feeds `signatures` in order, from operation number `now` + 1 on; returns the next number.
std::uint64_t feed(LoopPeriod& loop, const std::vector<std::uint64_t>& signatures, std::uint64_t now) {
  for (std::uint64_t signature : signatures) loop.observe(++now, signature);
  return now;
}

std::vector<std::uint64_t> sequence(std::uint64_t first, std::uint64_t count) {
  std::vector<std::uint64_t> out;
  for (std::uint64_t i = 0; i < count; ++i) out.push_back(first + i);
  return out;
}
}  // namespace

TEST_CASE("a loop is learned once a window of operations has repeated") {
  LoopPeriod loop;
  const std::vector<std::uint64_t> pass = sequence(100, 40);
  std::uint64_t now = feed(loop, pass, 0);
  CHECK(loop.period() == 0);  // nothing has repeated yet
  now = feed(loop, pass, now);
  CHECK(loop.period() == 40);  // the second pass repeats the first from its kWindow-th operation
  // A loop shorter than the window: learned once the window holds two passes and repeats.
  LoopPeriod short_loop;
  const std::vector<std::uint64_t> short_pass = sequence(500, 8);
  now = 0;
  for (int i = 0; i < 3; ++i) now = feed(short_loop, short_pass, now);
  CHECK(short_loop.period() == 8);
}

TEST_CASE("a long loop with repeats inside a pass is learned at its whole length") {
  // A training step: forward, then backward naming the same layers in reverse, each step the same.
  std::vector<std::uint64_t> step;
  for (std::uint64_t layer = 0; layer < 300; ++layer) step.push_back(1000 + layer);
  for (std::uint64_t layer = 300; layer-- > 0;) step.push_back(5000 + layer);
  step.push_back(1000);  // a signature repeated within the step (the first layer's kernel again)
  LoopPeriod loop;
  std::uint64_t now = 0;
  for (int i = 0; i < 3; ++i) now = feed(loop, step, now);
  CHECK(loop.period() == step.size());
}

TEST_CASE("a step whose layers reuse the same scratch buffers is learned at the step's length") {
  // Each layer: a matmul naming the layer's own weight (its own signature), then two elementwise
  // kernels on scratch buffers the allocator hands every layer (the same signatures in every
  // layer), as PyTorch's kernels look; then the same backward.
  std::vector<std::uint64_t> step;
  for (std::uint64_t layer = 0; layer < 48; ++layer) step.insert(step.end(), {1000 + layer, 7, 8});
  for (std::uint64_t layer = 48; layer-- > 0;) step.insert(step.end(), {2000 + layer, 9, 7, 10});
  LoopPeriod loop;
  std::uint64_t now = 0;
  for (int i = 0; i < 3; ++i) now = feed(loop, step, now);
  CHECK(loop.period() == step.size());
}

TEST_CASE("odd launches keep a learned period; a whole period of them drops it") {
  LoopPeriod loop;
  const std::vector<std::uint64_t> pass = sequence(1, 40);
  std::uint64_t now = 0;
  for (int i = 0; i < 3; ++i) now = feed(loop, pass, now);
  REQUIRE(loop.period() == 40);
  // An input at a new address each pass: one launch of the pass differs.
  for (std::uint64_t i = 0; i < 5; ++i) {
    std::vector<std::uint64_t> varied = pass;
    varied[3] = 9000 + i;
    now = feed(loop, varied, now);
    CHECK(loop.period() == 40);
  }
  // The program moves on to something that never repeats.
  now = feed(loop, sequence(100000, 41), now);
  CHECK(loop.period() == 0);
  // And a new loop is learned.
  const std::vector<std::uint64_t> other = sequence(200000, 25);
  for (int i = 0; i < 3; ++i) now = feed(loop, other, now);
  CHECK(loop.period() == 25);
}

TEST_CASE("an odd launch every other pass keeps the period; a loop of two passes replaces it") {
  // A step of 300 launches, one of which differs every other step (a logging step): twice the
  // period repeats every launch, the period all but that one.
  const std::vector<std::uint64_t> pass = sequence(1, 300);
  std::vector<std::uint64_t> logged = pass;
  logged[5] = 7777;
  LoopPeriod loop;
  std::uint64_t now = 0;
  for (int i = 0; i < 3; ++i) now = feed(loop, pass, now);
  REQUIRE(loop.period() == 300);
  for (int i = 0; i < 10; ++i) {
    now = feed(loop, i % 2 == 0 ? logged : pass, now);
    CHECK(loop.period() == 300);
  }
  // Every other step differs in a third of its launches: the loop is two steps long.
  std::vector<std::uint64_t> other = pass;
  for (std::size_t i = 100; i < 200; ++i) other[i] = 10000 + i;
  for (int i = 0; i < 6; ++i) now = feed(loop, i % 2 == 0 ? other : pass, now);
  CHECK(loop.period() == 600);
}

TEST_CASE("signatures that never repeat in order give no period") {
  LoopPeriod loop;
  std::mt19937_64 random(7);
  std::uint64_t now = 0;
  for (int i = 0; i < 20000; ++i) loop.observe(++now, 1 + random() % 500);  // repeats, in no order
  CHECK(loop.period() == 0);
}

TEST_CASE("a loop longer than the history kept is not looked for") {
  LoopPeriod loop(64);
  std::uint64_t now = 0;
  for (int i = 0; i < 4; ++i) now = feed(loop, sequence(1, 100), now);
  CHECK(loop.period() == 0);
  for (int i = 0; i < 4; ++i) now = feed(loop, sequence(500, 50), now);
  CHECK(loop.period() == 50);
}
