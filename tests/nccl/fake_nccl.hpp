// The stand-in libnccl.so's record of the last call (tests/nccl/fake_nccl.cpp).
#pragma once

#include <cstddef>

struct FakeNcclCall {
  int function = -1;  // its index in the order fake_nccl.cpp defines them
  const void* send = nullptr;
  const void* recv = nullptr;
  std::size_t count = 0;
  int type = 0;
  int extra = 0;  // the operation, root or peer (a reduce's: op * 100 + root)
  void* comm = nullptr;
  void* stream = nullptr;
  const void* config = nullptr;
};

inline constexpr int kFakeRanks = 4;
