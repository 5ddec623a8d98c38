#include "engine/core/router.h"

namespace tokenline {

// An instance's load is its ranks' summed load; its cached prefix, the longest any of its ranks holds.
int32_t Router::pick(std::span<const Instance* const> instances, const RequestSpec& spec) {
  loads_.clear();
  cached_.clear();
  std::vector<uint64_t> keys;
  if (placement_.reads_caches()) keys = derive_page_keys(spec, page_tokens_);
  for (const Instance* instance : instances) {
    int64_t tokens = 0, cached = 0;
    for (int32_t r = 0; r < instance->dp_ranks(); ++r) {
      tokens += instance->rank(r).load_tokens();
      if (placement_.reads_caches()) {
        const int64_t hit = instance->rank(r).cached_prefix_tokens(keys);
        cached = hit > cached ? hit : cached;
      }
    }
    loads_.push_back(tokens);
    if (placement_.reads_caches()) cached_.push_back(cached);
  }
  return placement_.pick(loads_, cached_, spec.prompt_tokens);
}

}  // namespace tokenline
