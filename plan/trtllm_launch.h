// The TensorRT-LLM launch commands that realise a candidate (plan priced by a TensorRT-LLM profile): one
// `trtllm-serve` line per server role with its extra LLM API options (a YAML file, written out as the
// `cat` line before it), and for disaggregated candidates the `trtllm-serve disaggregated` front end.
// Spellings as in trtllm-serve and TensorRT-LLM's llm_args.py: --tp_size is the server's world size (with
// attention DP every rank runs its own attention and scheduler: enable_attention_dp), --ep_size the MoE
// expert-parallel size, --max_num_tokens and --max_batch_size the per-rank step budget and request limit.
#pragma once

#include <string>
#include <vector>

#include "plan/candidate_space.h"

namespace tokenline {

// `model_path` is printed as given (the user's checkpoint path or hub name).
std::vector<std::string> trtllm_launch_lines(const Candidate& c, const std::string& model_path);

}  // namespace tokenline
