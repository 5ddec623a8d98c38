#include "workloads/workload_loader.h"

#include <fstream>
#include <sstream>
#include <utility>

#include "common/input_error.h"
#include "workloads/azure_reader.h"
#include "workloads/embedded_workloads.h"
#include "workloads/mooncake_reader.h"
#include "workloads/synthetic_generator.h"
#include "workloads/tokenline_reader.h"

namespace tokenline {
namespace {

constexpr std::string_view kDefaultPath = "data/mooncake_conversation_head.jsonl";

enum class TraceFormat { kTokenline, kMooncake, kAzure };

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// Decides the format from the first non-blank line, which is all it reads.
TraceFormat sniff(const std::string& path) {
  LineReader lines = LineReader::open_file(path);
  std::string line;
  while (lines.next(line)) {
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    if (starts_with(line, "\xEF\xBB\xBF")) line.erase(0, 3);
    if (starts_with(line, "TIMESTAMP,")) return TraceFormat::kAzure;
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
  const std::pair<std::string_view, TraceFormat> prefixes[] = {{"mooncake:", TraceFormat::kMooncake},
                                                               {"azure:", TraceFormat::kAzure},
                                                               {"tokenline:", TraceFormat::kTokenline}};
  for (const auto& [prefix, format] : prefixes) {
    if (starts_with(spec, prefix))
      return make_reader(format, LineReader::open_file(spec.substr(prefix.size())), options.reader);
  }
  return make_reader(sniff(spec), LineReader::open_file(spec), options.reader);
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
