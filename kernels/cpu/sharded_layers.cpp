// TP MLP (column/row split + all-reduce) and EP MoE (all-to-all-v dispatch and combine).
#include "kernels/cpu/sharded_layers.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/cpu/kernels.h"

namespace tokenline::cpu {

void mlp_tp(Communicator& comm, MlpTpParams p) {
  std::vector<float> gate_up(static_cast<size_t>(p.n_tokens) * 2 * p.inter_local);
  std::vector<float> act(static_cast<size_t>(p.n_tokens) * p.inter_local);
  gemm(
      {gate_up.data(), p.x, p.w_gate_up, nullptr, p.w_dtype, p.n_tokens, 2 * p.inter_local, p.hidden, false});
  silu_mul({act.data(), gate_up.data(), p.n_tokens, p.inter_local});
  gemm({p.out, act.data(), p.w_down, nullptr, p.w_dtype, p.n_tokens, p.hidden, p.inter_local, false});
  comm.all_reduce_sum(p.out, static_cast<int64_t>(p.n_tokens) * p.hidden);
}

namespace {

// Sends each rank's rows and returns what arrived; counts are in rows of row_elems elements of T.
template <class T>
std::vector<T> exchange(Communicator& comm, const std::vector<T>& send, const std::vector<int64_t>& send_rows,
                        const std::vector<int64_t>& recv_rows, int64_t row_elems) {
  std::vector<int64_t> send_bytes(send_rows.size()), recv_bytes(recv_rows.size());
  int64_t total = 0;
  for (size_t r = 0; r < send_rows.size(); ++r) {
    send_bytes[r] = send_rows[r] * row_elems * static_cast<int64_t>(sizeof(T));
    recv_bytes[r] = recv_rows[r] * row_elems * static_cast<int64_t>(sizeof(T));
    total += recv_rows[r] * row_elems;
  }
  std::vector<T> recv(static_cast<size_t>(total));
  comm.all_to_all_v(recv.data(), recv_bytes.data(), send.data(), send_bytes.data());
  return recv;
}

}  // namespace

void EpMoe::dispatch(Communicator& comm, const MoeExpertsParams& p) {
  const int32_t ranks = comm.size();
  const int64_t slots = static_cast<int64_t>(p.n_tokens) * p.topk;
  by_rank_.assign(static_cast<size_t>(ranks), {});  // (t * topk + k) slots per owning rank
  for (int64_t i = 0; i < slots; ++i) by_rank_[p.expert_ids[i] / p.n_local_experts].push_back(i);
  send_rows_.assign(static_cast<size_t>(ranks), 0);
  recv_rows_.assign(static_cast<size_t>(ranks), 0);
  std::vector<float> send_x;
  std::vector<int32_t> send_ids;
  for (int32_t r = 0; r < ranks; ++r) {
    send_rows_[r] = static_cast<int64_t>(by_rank_[r].size());
    for (int64_t slot : by_rank_[r]) {
      const float* src = p.x + (slot / p.topk) * p.hidden;
      send_x.insert(send_x.end(), src, src + p.hidden);
      send_ids.push_back(p.expert_ids[slot]);
    }
  }
  all_to_all(comm, recv_rows_.data(), send_rows_.data(), sizeof(int64_t));
  recv_x_ = exchange(comm, send_x, send_rows_, recv_rows_, p.hidden);
  recv_ids_ = exchange(comm, send_ids, send_rows_, recv_rows_, 1);
}

void EpMoe::compute(const MoeExpertsParams& p) {
  const auto rows = static_cast<int32_t>(recv_ids_.size());
  const std::vector<float> ones(recv_ids_.size(), 1.0f);
  y_.assign(static_cast<size_t>(rows) * p.hidden, 0.0f);
  MoeExpertsParams local = p;
  local.out = y_.data();
  local.x = recv_x_.data();
  local.expert_ids = recv_ids_.data();
  local.weights = ones.data();
  local.n_tokens = rows;
  local.topk = 1;
  moe_experts(local);
}

void EpMoe::combine(Communicator& comm, const MoeExpertsParams& p) {
  const int64_t slots = static_cast<int64_t>(p.n_tokens) * p.topk;
  const std::vector<float> back = exchange(comm, y_, recv_rows_, send_rows_, p.hidden);  // reverse route
  std::vector<const float*> slot_out(static_cast<size_t>(slots));
  const float* cursor = back.data();
  for (const std::vector<int64_t>& slots_of_rank : by_rank_) {
    for (int64_t slot : slots_of_rank) {
      slot_out[slot] = cursor;
      cursor += p.hidden;
    }
  }
  std::fill(p.out, p.out + static_cast<int64_t>(p.n_tokens) * p.hidden, 0.0f);
  for (int64_t slot = 0; slot < slots; ++slot) {
    float* dst = p.out + (slot / p.topk) * p.hidden;
    for (int32_t i = 0; i < p.hidden; ++i) dst[i] += p.weights[slot] * slot_out[slot][i];
  }
}

void moe_experts_ep(Communicator& comm, MoeExpertsParams p) {
  EpMoe moe;
  moe.dispatch(comm, p);
  moe.compute(p);
  moe.combine(comm, p);
}

}  // namespace tokenline::cpu
