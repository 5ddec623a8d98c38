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

void moe_experts_ep(Communicator& comm, MoeExpertsParams p) {
  const int32_t ranks = comm.size();
  const int64_t slots = static_cast<int64_t>(p.n_tokens) * p.topk;
  std::vector<std::vector<int64_t>> by_rank(static_cast<size_t>(ranks));  // (t*topk + k) slots per owner
  for (int64_t i = 0; i < slots; ++i) by_rank[p.expert_ids[i] / p.n_local_experts].push_back(i);
  std::vector<int64_t> send_rows(static_cast<size_t>(ranks)), recv_rows(static_cast<size_t>(ranks));
  std::vector<float> send_x;
  std::vector<int32_t> send_ids;
  for (int32_t r = 0; r < ranks; ++r) {
    send_rows[r] = static_cast<int64_t>(by_rank[r].size());
    for (int64_t slot : by_rank[r]) {
      const float* src = p.x + (slot / p.topk) * p.hidden;
      send_x.insert(send_x.end(), src, src + p.hidden);
      send_ids.push_back(p.expert_ids[slot]);
    }
  }
  all_to_all(comm, recv_rows.data(), send_rows.data(), sizeof(int64_t));
  const std::vector<float> recv_x = exchange(comm, send_x, send_rows, recv_rows, p.hidden);
  const std::vector<int32_t> recv_ids = exchange(comm, send_ids, send_rows, recv_rows, 1);
  const auto rows = static_cast<int32_t>(recv_ids.size());
  std::vector<float> ones(recv_ids.size(), 1.0f), y(static_cast<size_t>(rows) * p.hidden);
  MoeExpertsParams local = p;
  local.out = y.data();
  local.x = recv_x.data();
  local.expert_ids = recv_ids.data();
  local.weights = ones.data();
  local.n_tokens = rows;
  local.topk = 1;
  moe_experts(local);
  const std::vector<float> back =
      exchange(comm, y, recv_rows, send_rows, p.hidden);  // combine: reverse route
  std::vector<const float*> slot_out(static_cast<size_t>(slots));
  const float* cursor = back.data();
  for (int32_t r = 0; r < ranks; ++r) {
    for (int64_t slot : by_rank[r]) {
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

}  // namespace tokenline::cpu
