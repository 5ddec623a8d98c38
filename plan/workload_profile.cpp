#include "plan/workload_profile.h"

#include <algorithm>
#include <set>
#include <vector>

#include "common/input_error.h"

namespace tokenline {
namespace {

// The element at least 10% of the values reach: index floor(0.9 * (n - 1)) of the sorted values.
int64_t p90_floor(std::vector<int64_t> values) {
  std::sort(values.begin(), values.end());
  const size_t index = (values.size() - 1) * 9 / 10;
  return values[index];
}

// Prompt tokens a request must compute: at least one (the token that samples), more when its leading
// block hashes were not all sent before.
// Prompts given as token ids (no block hashes) may share any prefix: only the sampling token is certain.
int64_t uncached_tokens(const RequestSpec& spec, std::set<uint64_t>& seen) {
  if (spec.block_hashes.empty() && !spec.token_ids.empty()) return std::min<int64_t>(spec.prompt_tokens, 1);
  size_t shared = 0;
  while (shared < spec.block_hashes.size() && seen.count(spec.block_hashes[shared]) > 0) ++shared;
  for (uint64_t h : spec.block_hashes) seen.insert(h);
  const int64_t cached =
      std::min<int64_t>(spec.prompt_tokens - 1, static_cast<int64_t>(shared) * spec.block_tokens);
  return spec.prompt_tokens - std::max<int64_t>(cached, 0);
}

}  // namespace

WorkloadProfile profile_workload(ArrivalSource& source) {
  WorkloadProfile p;
  std::vector<int64_t> prompts;
  std::vector<int64_t> uncached;
  std::set<uint64_t> seen;
  double first_s = 0;
  double last_s = 0;
  TimedRequest a;
  while (source.next(a)) {
    if (p.requests == 0) first_s = a.arrival_s;
    last_s = a.arrival_s;
    ++p.requests;
    prompts.push_back(a.spec.prompt_tokens);
    uncached.push_back(uncached_tokens(a.spec, seen));
    p.max_prompt_tokens = std::max(p.max_prompt_tokens, a.spec.prompt_tokens);
    p.max_request_tokens = std::max(p.max_request_tokens, a.spec.prompt_tokens + a.spec.output_tokens);
  }
  if (p.requests == 0) throw InputError("--workload", "at least one request", "none");
  p.span_s = last_s - first_s;
  p.rate_per_s = p.span_s > 0 ? static_cast<double>(p.requests) / p.span_s : 0.0;
  p.p90_prompt_tokens = p90_floor(prompts);
  p.p90_uncached_tokens = p90_floor(uncached);
  return p;
}

}  // namespace tokenline
