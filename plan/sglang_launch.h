// The SGLang launch commands that realise a candidate: one `python3 -m sglang.launch_server` line per
// server role (co-located; or PD prefill and decode with --disaggregation-mode) plus the router line.
// Spellings as in SGLang's server_args.py: --tp-size counts every GPU of a server; under
// --enable-dp-attention SGLang divides --chunked-prefill-size and --max-running-requests by --dp-size, so
// the per-rank figures of the plan are multiplied by the dp size here.
#pragma once

#include <string>
#include <vector>

#include "cost/engine_behavior.h"
#include "plan/candidate_space.h"

namespace tokenline {

// `model_path` is printed as given (the user's checkpoint path or hub name). `moe_comm`: how the plan priced
// the MoE under EP; kAllToAll (the seed's engine, or an engine block saying alltoall) adds
// --moe-a2a-backend deepep to a layout with EP, SGLang's default (kLocalExperts) adds nothing.
std::vector<std::string> sglang_launch_lines(const Candidate& c, const std::string& model_path,
                                             MoeComm moe_comm);

}  // namespace tokenline
