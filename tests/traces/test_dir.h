// A fresh scratch directory per test case under the system temp directory, removed on destruction.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

namespace tokenline::testing {

class TestDir {
 public:
  explicit TestDir(const std::string& name)
      : path_(std::filesystem::temp_directory_path() /
              ("tokenline-" + name + "-" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TestDir() { std::filesystem::remove_all(path_); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Every regular file under `dir` with its bytes, by relative path: a directory's state, to compare.
inline std::map<std::string, std::string> dir_snapshot(const std::string& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
    if (e.is_regular_file())
      files[std::filesystem::relative(e.path(), dir).string()] = read_all(e.path().string());
  return files;
}

}  // namespace tokenline::testing
