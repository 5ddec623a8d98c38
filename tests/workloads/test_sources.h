// Helpers for workloads tests: readers over in-memory text, and the optional real-trace directory.
#pragma once

#include <cstdlib>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "workloads/line_reader.h"
#include "workloads/workload_source.h"

namespace tokenline::test {

inline LineReader text_lines(const std::string& text, const std::string& name = "fixture") {
  return LineReader(std::make_unique<std::istringstream>(text), name);
}

inline std::vector<WorkloadRequest> drain(WorkloadSource& source) {
  std::vector<WorkloadRequest> out;
  while (auto r = source.next()) out.push_back(std::move(*r));
  return out;
}

inline std::string error_of(WorkloadSource& source) {
  try {
    drain(source);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "no error";
}

// Path of a file in the real-trace directory, or nullopt (the caller skips with a message).
inline std::optional<std::string> real_trace(const std::string& file) {
  const char* env = std::getenv("TOKENLINE_TRACES_DIR");
  const std::string dir = env != nullptr ? env : TOKENLINE_DEFAULT_TRACES_DIR;
  const std::string path = dir + "/" + file;
  if (!std::ifstream(path)) return std::nullopt;
  return path;
}

}  // namespace tokenline::test
