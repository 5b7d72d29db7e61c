// A uniquely named file in the temporary folder, removed when the test is done with it.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>

struct TempFile {
  std::filesystem::path path;
  explicit TempFile(const std::string& stem)
      : path(std::filesystem::temp_directory_path() / (stem + "." + std::to_string(getpid()) + ".dtrace")) {}
  ~TempFile() { std::filesystem::remove(path); }
  std::string str() const { return path.string(); }
};
