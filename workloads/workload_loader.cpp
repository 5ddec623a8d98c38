#include "workloads/workload_loader.h"

#include <sys/stat.h>

#include <fstream>
#include <sstream>
#include <utility>

#include "common/input_error.h"
#include "common/input_limits.h"
#include "workloads/azure_reader.h"
#include "workloads/embedded_workloads.h"
#include "workloads/mooncake_reader.h"
#include "workloads/synthetic_generator.h"
#include "workloads/tokenline_reader.h"

namespace tokenline {
namespace {

constexpr std::string_view kDefaultPath = "data/mooncake_conversation_head.jsonl";
constexpr std::string_view kEmbeddedPrefix = "embedded:";

enum class TraceFormat { kTokenline, kMooncake, kAzure };

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// An istream over text it does not own (a cached stream's contents, read again without a copy).
class TextStream final : public std::istream {
 public:
  explicit TextStream(const std::string& text) : std::istream(&buf_) {
    char* begin = const_cast<char*>(text.data());  // the get area is only read
    buf_.set(begin, begin + text.size());
  }

 private:
  struct Buf : std::streambuf {
    void set(char* begin, char* end) { setg(begin, begin, end); }
  };
  Buf buf_;
};

// Reads a non-regular file (FIFO, pipe, character device) whole, once.
std::string read_stream(const std::string& path) {
  std::ifstream in(path, std::ios::binary);  // opened once: a FIFO's writer sees one reader
  if (!in) throw InputError(path, "a readable workload file", "a file that cannot be opened");
  std::string text;
  char chunk[1 << 16];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
    text.append(chunk, static_cast<size_t>(in.gcount()));
    if (static_cast<int64_t>(text.size()) > limits::kMaxStreamedWorkloadBytes)
      throw InputError(path,
                       "a stream (FIFO, pipe) of at most " +
                           std::to_string(limits::kMaxStreamedWorkloadBytes >> 20) +
                           " MiB (or a regular file, which is streamed)",
                       "a longer stream");
  }
  return text;
}

// A regular file is opened anew each time; any other file is read once into the cache.
LineReader open_path(const std::string& path, StreamCache& cache) {
  struct stat st {};
  const bool reopenable = ::stat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode) || S_ISDIR(st.st_mode);
  if (reopenable) return LineReader::open_file(path);  // (missing paths and directories: its messages)
  auto it = cache.text_by_path.find(path);
  if (it == cache.text_by_path.end()) it = cache.text_by_path.emplace(path, read_stream(path)).first;
  return LineReader(std::make_unique<TextStream>(it->second), path);
}

// Decides the format from the first non-blank line, which is all it reads.
TraceFormat sniff(const std::string& path, StreamCache& cache) {
  LineReader lines = open_path(path, cache);
  std::string line;
  while (lines.next(line)) {
    if (line.find_first_not_of(" \t") == std::string::npos && !lines.too_long()) continue;
    if (starts_with(line, "\xEF\xBB\xBF")) line.erase(0, 3);
    if (starts_with(line, "TIMESTAMP,")) return TraceFormat::kAzure;
    const size_t first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] != '{')
      throw InputError(lines.where(),
                       "a workload trace: a JSON object per line (tokenline or Mooncake JSONL) or the Azure "
                       "CSV header " +
                           std::string(AzureReader::kHeader),
                       "'" + line.substr(0, InputError::kMaxFoundChars) + "'");
    if (line.find("\"timestamp\"") != std::string::npos) return TraceFormat::kMooncake;
    return TraceFormat::kTokenline;
  }
  throw InputError(path, "a workload trace (tokenline JSONL, Mooncake JSONL or Azure CSV)", "an empty file");
}

std::unique_ptr<WorkloadSource> make_reader(TraceFormat format, LineReader lines,
                                            const ReaderOptions& options) {
  switch (format) {
    case TraceFormat::kTokenline:
      return std::make_unique<TokenlineReader>(std::move(lines), options);
    case TraceFormat::kMooncake:
      return std::make_unique<MooncakeReader>(std::move(lines), options);
    case TraceFormat::kAzure:
      return std::make_unique<AzureReader>(std::move(lines), options);
  }
  return nullptr;
}

std::unique_ptr<WorkloadSource> open_source(const std::string& spec, const WorkloadOptions& options) {
  if (starts_with(spec, "synthetic:"))
    return std::make_unique<SyntheticGenerator>(parse_synthetic_spec(std::string_view(spec).substr(10)),
                                                options.seed);
  if (spec == "default") {
    auto in = std::make_unique<std::istringstream>(std::string(default_workload_text()));
    return make_reader(TraceFormat::kMooncake,
                       LineReader(std::move(in), "<embedded>/workloads/" + std::string(kDefaultPath)),
                       options.reader);
  }
  if (starts_with(spec,
                  kEmbeddedPrefix)) {  // embedded:<file of workloads/data/>, Mooncake or tokenline JSONL
    const std::string path = "data/" + spec.substr(kEmbeddedPrefix.size());
    const std::optional<std::string_view> text = find_embedded(workloads_embedded_data(), path);
    if (!text) throw InputError("--workload", "embedded:<a file of workloads/data/>", "'" + spec + "'");
    const bool mooncake = text->substr(0, text->find('\n')).find("\"timestamp\"") != std::string_view::npos;
    return make_reader(
        mooncake ? TraceFormat::kMooncake : TraceFormat::kTokenline,
        LineReader(std::make_unique<std::istringstream>(std::string(*text)), "<embedded>/workloads/" + path),
        options.reader);
  }
  const std::pair<std::string_view, TraceFormat> prefixes[] = {{"mooncake:", TraceFormat::kMooncake},
                                                               {"azure:", TraceFormat::kAzure},
                                                               {"tokenline:", TraceFormat::kTokenline}};
  for (const auto& [prefix, format] : prefixes) {
    if (starts_with(spec, prefix))
      return make_reader(format, open_path(spec.substr(prefix.size()), *options.streams), options.reader);
  }
  return make_reader(sniff(spec, *options.streams), open_path(spec, *options.streams), options.reader);
}

}  // namespace

std::string_view default_workload_text() {
  const std::optional<std::string_view> text = find_embedded(workloads_embedded_data(), kDefaultPath);
  return text.value_or(std::string_view());
}

std::unique_ptr<WorkloadSource> open_workload(const std::string& spec, const WorkloadOptions& options) {
  check_window(options.window);
  return std::make_unique<WindowedSource>(open_source(spec, options), options.window);
}

}  // namespace tokenline
