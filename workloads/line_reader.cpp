#include "workloads/line_reader.h"

#include <fstream>
#include <utility>

#include "common/input_error.h"

namespace tokenline {

LineReader::LineReader(std::unique_ptr<std::istream> in, std::string name)
    : in_(std::move(in)), name_(std::move(name)) {}

LineReader LineReader::open_file(const std::string& path) {
  auto in = std::make_unique<std::ifstream>(path, std::ios::binary);
  if (!*in) throw InputError(path, "a readable workload file", "a file that cannot be opened");
  return LineReader(std::move(in), path);
}

bool LineReader::next(std::string& line) {
  if (!std::getline(*in_, line)) return false;
  ++line_number_;
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return true;
}

std::string LineReader::where() const {
  return name_ + ":" + std::to_string(line_number_);
}

}  // namespace tokenline
