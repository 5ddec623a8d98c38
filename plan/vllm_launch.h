// The vLLM launch commands that realise a candidate (plan --profile with a vLLM engine block): one
// `vllm serve` line per server role (co-located; or PD prefill and decode servers exchanging KV through
// NIXL) and what goes in front of them. Spellings as in vLLM's engine arguments: --tensor-parallel-size
// is per data-parallel rank; each data-parallel rank runs its own engine core and scheduler, so
// --max-num-batched-tokens and --max-num-seqs are the plan's per-rank figures as they are.
#pragma once

#include <string>
#include <vector>

#include "plan/candidate_space.h"

namespace tokenline {

// `model_path` is printed as given (the user's checkpoint path or hub name).
std::vector<std::string> vllm_launch_lines(const Candidate& c, const std::string& model_path);

}  // namespace tokenline
