// Helpers for tests that run the `tokenline` binary as a separate process and read its outputs.
#pragma once

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/traces/test_dir.h"

namespace tokenline::testing {

struct ProcessResult {
  int exit_code = -1;
  std::string stderr_text;
  std::string stdout_text;  // run_tokenline_both only
};

// Runs `tokenline <args>` with stdout discarded and stderr captured.
inline ProcessResult run_tokenline(const std::string& args, const TestDir& scratch) {
  const std::string err = scratch.file("stderr.txt");
  const std::string command =
      std::string("'") + TOKENLINE_BINARY + "' " + args + " >/dev/null 2>'" + err + "'";
  const int status = std::system(command.c_str());
  ProcessResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.stderr_text = read_all(err);
  return r;
}

// Runs `tokenline <args>` with stdout and stderr captured apart.
inline ProcessResult run_tokenline_both(const std::string& args, const TestDir& scratch) {
  const std::string out = scratch.file("stdout.txt");
  const std::string err = scratch.file("stderr.txt");
  const std::string command =
      std::string("'") + TOKENLINE_BINARY + "' " + args + " >'" + out + "' 2>'" + err + "'";
  const int status = std::system(command.c_str());
  ProcessResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.stderr_text = read_all(err);
  r.stdout_text = read_all(out);
  return r;
}

// The shared real traces (never copied into the repository): $TOKENLINE_TRACES_DIR, else ../shared/traces
// next to the repository. Empty when the file is absent.
inline std::string shared_trace(const std::string& name) {
  const char* env = std::getenv("TOKENLINE_TRACES_DIR");
  const std::filesystem::path dir = env != nullptr ? env : TOKENLINE_SHARED_TRACES_DIR;
  const std::filesystem::path path = dir / name;
  return std::filesystem::exists(path) ? path.string() : std::string();
}

inline std::string source_file(const std::string& relative) {
  return (std::filesystem::path(TOKENLINE_SOURCE_DIR) / relative).string();
}

inline nlohmann::json read_json(const std::string& path) {
  return nlohmann::json::parse(read_all(path));
}

// Writes a tokenline JSONL workload: `count` requests at `arrival_s`, each with the given lengths.
inline void write_uniform_workload(const std::string& path, int count, double arrival_s,
                                   long long input_tokens, long long output_tokens) {
  std::ofstream out(path);
  for (int i = 0; i < count; ++i) {
    out << "{\"arrival_s\": " << arrival_s << ", \"input_tokens\": " << input_tokens
        << ", \"output_tokens\": " << output_tokens << "}\n";
  }
}

// requests.csv rows as string fields (header dropped).
inline std::vector<std::vector<std::string>> read_csv_rows(const std::string& path) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(read_all(path));
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    std::vector<std::string> fields;
    std::stringstream ss(line);
    std::string f;
    while (std::getline(ss, f, ',')) fields.push_back(f);
    if (!line.empty() && line.back() == ',') fields.emplace_back();
    rows.push_back(fields);
  }
  return rows;
}

}  // namespace tokenline::testing
