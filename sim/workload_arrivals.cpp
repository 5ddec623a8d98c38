#include "sim/workload_arrivals.h"

#include <fstream>

#include "common/input_error.h"
#include "workloads/azure_reader.h"
#include "workloads/mooncake_reader.h"
#include "workloads/tokenline_reader.h"

namespace tokenline {
namespace {

bool ends_with(const std::string& s, const char* suffix) {
  const std::string t(suffix);
  return s.size() >= t.size() && s.compare(s.size() - t.size(), t.size(), t) == 0;
}

// A JSONL file is Mooncake when its first non-blank line has Mooncake's "timestamp" key.
bool looks_like_mooncake(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    return line.find("\"timestamp\"") != std::string::npos;
  }
  return false;
}

}  // namespace

std::unique_ptr<WorkloadSource> open_workload_source(const WorkloadSpec& spec) {
  const ReaderOptions options{.skip_bad_lines = spec.skip_bad_lines};
  if (spec.spec.empty()) {
    throw InputError("--workload", "a workload file (the embedded default is not wired yet)", "nothing");
  }
  if (ends_with(spec.spec, ".csv")) {
    return std::make_unique<AzureReader>(LineReader::open_file(spec.spec), options);
  }
  if (ends_with(spec.spec, ".jsonl") || ends_with(spec.spec, ".json")) {
    if (looks_like_mooncake(spec.spec)) {
      return std::make_unique<MooncakeReader>(LineReader::open_file(spec.spec), options);
    }
    return std::make_unique<TokenlineReader>(LineReader::open_file(spec.spec), options);
  }
  throw InputError("--workload " + spec.spec, "a .jsonl (Mooncake or tokenline) or .csv (Azure) file",
                   "an unknown kind of workload");
}

std::string describe_workload(const WorkloadSpec& spec) { return open_workload_source(spec)->describe(); }

void prevalidate_workload(const WorkloadSpec& spec) {
  std::unique_ptr<WorkloadSource> source = open_workload_source(spec);
  while (source->next()) {
  }
}

bool WorkloadArrivals::next(Arrival& out) {
  std::optional<WorkloadRequest> w = source_->next();
  if (!w) return false;
  out.trace_time_s = w->arrival_s;
  RequestSpec& s = out.spec;
  s.id = w->id;
  s.prompt_tokens = w->input_tokens;
  s.output_tokens = w->output_tokens;
  s.priority = -w->priority;  // workloads: larger is more urgent; the core serves smaller values first
  s.token_ids.clear();
  s.block_hashes.assign(w->block_hashes.begin(), w->block_hashes.end());
  s.block_tokens = w->block_tokens > 0 ? w->block_tokens : s.block_tokens;
  return true;
}

std::unique_ptr<ArrivalSource> open_arrivals(const WorkloadSpec& spec) {
  return std::make_unique<WorkloadArrivals>(open_workload_source(spec));
}

}  // namespace tokenline
