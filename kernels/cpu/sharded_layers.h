// Tensor- and expert-parallel forms of the MLP and MoE layers on the CPU kernels plus a Communicator.
// Each rank calls with its own shard; results equal the unsharded layer up to summation order.
#pragma once

#include <cstdint>
#include <vector>

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

// moe_experts_ep in its three phases, so that a caller can time dispatch, the expert GEMMs and combine
// apart. Call dispatch, compute, combine in order with the same p on every rank of comm (host memory).
class EpMoe {
 public:
  void dispatch(Communicator& comm, const MoeExpertsParams& p);  // each (token, k) row to its expert's rank
  void compute(const MoeExpertsParams& p);                       // local experts on the rows received
  void combine(Communicator& comm, const MoeExpertsParams& p);   // rows back; p.out = weighted sum

 private:
  std::vector<std::vector<int64_t>> by_rank_;  // [rank] (t * topk + k) slots sent there, in order
  std::vector<int64_t> send_rows_, recv_rows_;
  std::vector<float> recv_x_, y_;
  std::vector<int32_t> recv_ids_;
};

}  // namespace tokenline::cpu
