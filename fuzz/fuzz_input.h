// Shared by the libFuzzer harnesses: the fuzz input as text, as a stream of lines, or as a file (for
// readers that take a path), and the one rule every harness checks: bad input is an InputError, nothing
// else escapes (any other exception, a crash, a leak or UB fails the run).
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>

#include "common/input_error.h"
#include "workloads/line_reader.h"

namespace tokenline::fuzz {

inline std::string text_of(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// A line reader over the input with a small line limit, so the too-long path is reached too.
inline LineReader lines_of(const std::string& text) {
  constexpr int64_t kFuzzLineBytes = 4096;
  return LineReader(std::make_unique<std::istringstream>(text), "fuzz", kFuzzLineBytes);
}

// The input written to a per-process scratch file (readers that mmap or open a path).
inline std::string scratch_file(const std::string& text, const char* suffix) {
  const std::string path = "/tmp/tokenline-fuzz-" + std::to_string(::getpid()) + suffix;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) std::abort();
  std::fwrite(text.data(), 1, text.size(), f);
  std::fclose(f);
  return path;
}

// Runs `body`; an InputError is the expected answer to bad input, anything else propagates and crashes.
template <typename Body>
void expect_input_errors_only(Body&& body) {
  try {
    body();
  } catch (const InputError&) {
  }
}

}  // namespace tokenline::fuzz
