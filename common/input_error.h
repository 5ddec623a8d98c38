// InputError: the one exception type for bad user input (files, config fields, command-line values).
// Thrown only at the edges (loaders, readers, the CLI) and caught by the CLI, which prints what() and
// exits with code 2. Never thrown across engine/ (the core returns status instead).
#pragma once

#include <stdexcept>
#include <string>

namespace tokenline {

class InputError : public std::runtime_error {
 public:
  // where: "file:line", "file: field", "--option"; expected and found are short phrases.
  InputError(const std::string& where, const std::string& expected, const std::string& found)
      : std::runtime_error(where + ": expected " + expected + ", found " + found) {}
  explicit InputError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace tokenline
