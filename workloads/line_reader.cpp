#include "workloads/line_reader.h"

#include <sys/stat.h>

#include <fstream>
#include <utility>

#include "common/input_error.h"
#include "common/input_limits.h"

namespace tokenline {
namespace {

constexpr std::streamsize kChunkBytes = 1 << 16;  // one getline() call reads at most this much

}  // namespace

LineReader::LineReader(std::unique_ptr<std::istream> in, std::string name, int64_t max_line_bytes)
    : in_(std::move(in)),
      name_(std::move(name)),
      max_line_bytes_(max_line_bytes > 0 ? max_line_bytes : limits::kMaxLineBytes) {}

LineReader LineReader::open_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    throw InputError(path, "a workload file", "a directory");
  auto in = std::make_unique<std::ifstream>(path, std::ios::binary);
  if (!*in) throw InputError(path, "a readable workload file", "a file that cannot be opened");
  return LineReader(std::move(in), path);
}

// Reads chunk by chunk so that a line longer than the limit is never held whole.
bool LineReader::next(std::string& line) {
  line.clear();
  too_long_ = false;
  char chunk[kChunkBytes];
  bool any = false;
  for (;;) {
    in_->getline(chunk, kChunkBytes);
    const std::streamsize got = in_->gcount();
    const bool at_end = in_->eof();
    const bool delimited = !in_->fail() && !at_end;  // the line end was read and counted in gcount
    const auto bytes = static_cast<size_t>(delimited ? got - 1 : got);
    any = any || got > 0;
    if (!too_long_ && static_cast<int64_t>(line.size() + bytes) > max_line_bytes_) {
      line.append(chunk, static_cast<size_t>(max_line_bytes_) - line.size());
      too_long_ = true;
    } else if (!too_long_) {
      line.append(chunk, bytes);
    }
    if (delimited) break;
    if (at_end || in_->bad() || got == 0) {  // the stream ended (or failed)
      if (!any) return false;
      break;
    }
    in_->clear();  // the chunk filled before the line end: read on
  }
  ++line_number_;
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return true;
}

std::string LineReader::where() const {
  return name_ + ":" + std::to_string(line_number_);
}

}  // namespace tokenline
