// Tensor- and expert-parallel forms of the MLP and MoE layers on the CPU kernels plus a Communicator.
// Each rank calls with its own shard; results equal the unsharded layer up to summation order.
#pragma once

#include "kernels/communicator.h"
#include "kernels/params.h"

namespace tokenline::cpu {

// SwiGLU MLP with a TP shard: w_gate_up holds this rank's inter_local gate rows then its inter_local up
// rows (column split), w_down its inter_local columns (row split, [hidden, inter_local]); the partial
// outputs are all-reduced, so every rank ends with the full out[n_tokens, hidden].
struct MlpTpParams {
  float* out = nullptr;             // [n_tokens, hidden]
  const float* x = nullptr;         // [n_tokens, hidden] (replicated)
  const void* w_gate_up = nullptr;  // [2 * inter_local, hidden]
  const void* w_down = nullptr;     // [hidden, inter_local]
  DType w_dtype = DType::kF32;
  int32_t n_tokens = 0, hidden = 0, inter_local = 0;
};
void mlp_tp(Communicator& comm, MlpTpParams p);

// EP MoE: p describes this rank's tokens (routing already done) and its local experts, which must be
// [rank * n_local_experts, +n_local_experts). Rows go to the owning ranks by all-to-all-v (dispatch), run
// there, come back by all-to-all-v and are summed with their routing weights in (token, k) order (combine).
void moe_experts_ep(Communicator& comm, MoeExpertsParams p);

}  // namespace tokenline::cpu
