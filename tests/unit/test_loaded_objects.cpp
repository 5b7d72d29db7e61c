// core::loaded_objects_matching and core::find_loaded_symbol on this test's own process. The
// concurrent case (another thread loading and unloading) is tests/loader/loader_lock_stress.cpp.
#include <dlfcn.h>
#include <doctest/doctest.h>

#include <string>

#include "deepum/core/loaded_objects.hpp"

using namespace deepum::core;

TEST_CASE("loaded objects are found by a fragment of their path") {
  const auto libc = loaded_objects_matching("libc.so");
  REQUIRE(libc.size() == 1);
  CHECK(libc.front().find("libc.so") != std::string::npos);
  CHECK(libc.front().front() == '/');  // the full path, usable with dlopen
  CHECK(loaded_objects_matching("no-such-library-in-this-process").empty());
  // Every named object matches the empty fragment; the main program (no name) is never listed.
  const auto all = loaded_objects_matching("");
  CHECK(all.size() > libc.size());
  for (const std::string& path : all) CHECK_FALSE(path.empty());
}

TEST_CASE("a symbol is found in the loaded library that exports it, and only there") {
  // libc's own malloc, not the first in search order (a sanitizer's runtime interposes one).
  void* libc = dlopen(loaded_objects_matching("libc.so").front().c_str(), RTLD_LAZY | RTLD_NOLOAD);
  REQUIRE(libc != nullptr);
  CHECK(find_loaded_symbol("libc.so", "malloc", &dlsym) == dlsym(libc, "malloc"));
  dlclose(libc);
  CHECK(find_loaded_symbol("libc.so", "no_such_symbol_in_libc", &dlsym) == nullptr);
  CHECK(find_loaded_symbol("no-such-library-in-this-process", "malloc", &dlsym) == nullptr);
  CHECK(find_loaded_symbol("libc.so", "malloc", nullptr) == nullptr);
}
