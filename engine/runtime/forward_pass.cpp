#include "engine/runtime/forward_pass.h"

#include <algorithm>
#include <cmath>

#include "kernels/cpu/kernels.h"

namespace tokenline {
namespace {

// Adds the seconds from construction to destruction to out.op_s[op].
class OpTimer {
 public:
  OpTimer(Clock& clock, ForwardOutput& out, RunOp op)
      : clock_(clock), out_(out), op_(op), t0_(clock.now_s()) {}
  ~OpTimer() { out_.op_s[static_cast<size_t>(op_)] += clock_.now_s() - t0_; }
  OpTimer(const OpTimer&) = delete;
  OpTimer& operator=(const OpTimer&) = delete;

 private:
  Clock& clock_;
  ForwardOutput& out_;
  RunOp op_;
  double t0_;
};

KvLayout layout_of(const ModelShape& s) {
  return s.fp8_kv ? KvLayout::kFp8DsMla : KvLayout::kBf16;
}

int32_t rows_of(const ForwardInput& in) {
  return static_cast<int32_t>(in.token_ids.size());
}

PagedKvTable table_of(const ForwardInput& in, int32_t page_tokens) {
  return PagedKvTable{page_tokens, static_cast<int32_t>(in.last_page_len.size()), in.indptr.data(),
                      in.indices.data(), in.last_page_len.data()};
}

// out[m, n] = x[m, k] * w[n, k]^T
void linear(std::vector<float>& out, const float* x, const float* w, int32_t m, int32_t n, int32_t k) {
  out.resize(static_cast<size_t>(m) * static_cast<size_t>(n));
  cpu::gemm({out.data(), x, w, nullptr, DType::kF32, m, n, k, false});
}

void add_into(std::vector<float>& h, const std::vector<float>& delta) {
  for (size_t i = 0; i < h.size(); ++i) h[i] += delta[i];
}

}  // namespace

void ForwardInput::clear() {
  token_ids.clear();
  seq.clear();
  pos.clear();
  indptr.assign(1, 0);
  indices.clear();
  last_page_len.clear();
  sample_rows.clear();
  max_context = 0;
}

ForwardPass::ForwardPass(const ModelShape& shape, const ModelWeights& weights, int64_t total_pages,
                         int32_t page_tokens)
    : shape_(shape), weights_(weights), page_tokens_(page_tokens) {
  const auto slots = static_cast<size_t>(total_pages * page_tokens);
  const auto kv_bytes = static_cast<size_t>(kv_token_bytes(layout_of(shape), shape.kv_lora, shape.rope));
  for (int32_t l = 0; l < shape.layers; ++l) {
    kv_.emplace_back(slots * kv_bytes);
    const bool full = shape.indexer_full[static_cast<size_t>(l)] != 0;
    idx_k_.emplace_back(full ? slots * static_cast<size_t>(shape.idx_dim) * 2 : 0);
  }
}

void ForwardPass::run(const ForwardInput& in, Clock& clock, ForwardOutput& out) {
  out.op_s.fill(0.0);
  const int32_t n = rows_of(in);
  {
    OpTimer t(clock, out, RunOp::kEmbed);
    h_.resize(static_cast<size_t>(n) * static_cast<size_t>(shape_.hidden));
    cpu::embedding(
        {h_.data(), weights_.embed(), in.token_ids.data(), DType::kF32, n, shape_.hidden, 0, shape_.vocab});
  }
  for (int32_t l = 0; l < shape_.layers; ++l) {
    attention(l, in, clock, out);
    mlp(l, in, clock, out);
  }
  head(in, clock, out);
}

void ForwardPass::attention(int32_t l, const ForwardInput& in, Clock& clock, ForwardOutput& out) {
  const ModelShape& s = shape_;
  const LayerWeights& w = weights_.layer(l);
  const int32_t n = rows_of(in), qk = s.nope + s.rope;
  const PagedKvTable table = table_of(in, page_tokens_);
  {
    OpTimer t(clock, out, RunOp::kRmsnorm);
    x_.resize(h_.size());
    cpu::rmsnorm({x_.data(), nullptr, h_.data(), w.attn_norm, n, s.hidden, s.hidden, s.hidden, s.eps});
  }
  {
    OpTimer t(clock, out, RunOp::kAProj);
    linear(q_a_, x_.data(), w.q_a, n, s.q_lora, s.hidden);
    linear(kv_a_, x_.data(), w.kv_a, n, s.kv_lora + s.rope, s.hidden);
  }
  {
    OpTimer t(clock, out, RunOp::kNormRopeKvWrite);
    cpu::rmsnorm({q_a_.data(), nullptr, q_a_.data(), w.q_a_norm, n, s.q_lora, s.q_lora, s.q_lora, s.eps});
    const int32_t row = s.kv_lora + s.rope;
    cpu::rmsnorm({kv_a_.data(), nullptr, kv_a_.data(), w.kv_norm, n, s.kv_lora, row, row, s.eps});
    cpu::rope({kv_a_.data(), in.pos.data(), n, 1, row, s.kv_lora, s.rope, s.rope_theta});
    cpu::kv_write({kv_[static_cast<size_t>(l)].data(), kv_a_.data(), kv_a_.data() + s.kv_lora, in.seq.data(),
                   in.pos.data(), table, layout_of(s), n, row, s.kv_lora, s.rope});
  }
  {
    OpTimer t(clock, out, RunOp::kQBProj);
    linear(q_, q_a_.data(), w.q_b, n, s.heads * qk, s.q_lora);
    cpu::rope({q_.data(), in.pos.data(), n, s.heads, qk, s.nope, s.rope, s.rope_theta});
    q_latent_.resize(static_cast<size_t>(n) * static_cast<size_t>(s.heads * s.kv_lora));
    cpu::mla_absorb_q(
        {q_latent_.data(), q_.data(), w.kv_b, DType::kF32, n, s.heads, s.nope, s.rope, s.v, s.kv_lora});
  }
  if (s.indexer_full[static_cast<size_t>(l)] != 0) select(l, in, x_, clock, out);
  {
    OpTimer t(clock, out, RunOp::kSparseMla);
    o_latent_.resize(q_latent_.size());
    cpu::mla_attention_sparse({o_latent_.data(), q_latent_.data(), q_.data() + s.nope,
                               kv_[static_cast<size_t>(l)].data(), in.seq.data(), in.pos.data(), topk_.data(),
                               table, layout_of(s), n, s.heads, s.kv_lora, s.rope, qk, s.idx_topk,
                               1.0f / std::sqrt(static_cast<float>(qk))});
  }
  OpTimer t(clock, out, RunOp::kOProj);
  o_.resize(static_cast<size_t>(n) * static_cast<size_t>(s.heads * s.v));
  cpu::mla_absorb_out({o_.data(), o_latent_.data(), w.kv_b, DType::kF32, n, s.heads, s.nope, s.v, s.kv_lora});
  linear(tmp_, o_.data(), w.o, n, s.hidden, s.heads * s.v);
  add_into(h_, tmp_);
}

// DSA lightning indexer on a full layer: writes this step's index keys, scores every cached key, keeps
// the top-k positions (shared layers reuse them until the next full layer).
void ForwardPass::select(int32_t l, const ForwardInput& in, const std::vector<float>& x, Clock& clock,
                         ForwardOutput& out) {
  const ModelShape& s = shape_;
  const LayerWeights& w = weights_.layer(l);
  const int32_t n = rows_of(in);
  const PagedKvTable table = table_of(in, page_tokens_);
  {
    OpTimer t(clock, out, RunOp::kIndexerScore);
    linear(idx_q_, q_a_.data(), w.idx_q, n, s.idx_heads * s.idx_dim, s.q_lora);
    linear(idx_k_rows_, x.data(), w.idx_k, n, s.idx_dim, s.hidden);
    cpu::layernorm(
        {idx_k_rows_.data(), idx_k_rows_.data(), w.idx_k_norm, w.idx_k_norm_bias, n, s.idx_dim, s.eps});
    linear(hw_, x.data(), w.idx_w, n, s.idx_heads, s.hidden);
    const float scale = 1.0f / std::sqrt(static_cast<float>(s.idx_heads * s.idx_dim));
    for (float& v : hw_) v *= scale;
    cpu::rope({idx_q_.data(), in.pos.data(), n, s.idx_heads, s.idx_dim, 0, s.rope, s.rope_theta});
    cpu::rope({idx_k_rows_.data(), in.pos.data(), n, 1, s.idx_dim, 0, s.rope, s.rope_theta});
    cpu::index_k_write({idx_k_[static_cast<size_t>(l)].data(), idx_k_rows_.data(), in.seq.data(),
                        in.pos.data(), table, n, s.idx_dim});
    scores_.resize(static_cast<size_t>(n) * static_cast<size_t>(in.max_context));
    cpu::indexer_score({scores_.data(), idx_q_.data(), hw_.data(), idx_k_[static_cast<size_t>(l)].data(),
                        in.seq.data(), in.pos.data(), table, n, s.idx_heads, s.idx_dim, in.max_context});
  }
  OpTimer t(clock, out, RunOp::kTopkSelect);
  topk_.resize(static_cast<size_t>(n) * static_cast<size_t>(s.idx_topk));
  cpu::topk_select({topk_.data(), scores_.data(), in.pos.data(), n, in.max_context, s.idx_topk});
}

void ForwardPass::mlp(int32_t l, const ForwardInput& in, Clock& clock, ForwardOutput& out) {
  const ModelShape& s = shape_;
  const LayerWeights& w = weights_.layer(l);
  const int32_t n = rows_of(in);
  {
    OpTimer t(clock, out, RunOp::kRmsnorm);
    cpu::rmsnorm({x_.data(), nullptr, h_.data(), w.ffn_norm, n, s.hidden, s.hidden, s.hidden, s.eps});
  }
  if (!s.is_moe_layer(l)) {
    OpTimer t(clock, out, RunOp::kDenseMlp);
    linear(tmp_, x_.data(), w.dense_gate_up, n, 2 * s.dense_inter, s.hidden);
    tmp2_.resize(static_cast<size_t>(n) * static_cast<size_t>(s.dense_inter));
    cpu::silu_mul({tmp2_.data(), tmp_.data(), n, s.dense_inter});
    linear(tmp_, tmp2_.data(), w.dense_down, n, s.hidden, s.dense_inter);
    add_into(h_, tmp_);
    return;
  }
  {
    OpTimer t(clock, out, RunOp::kRouter);
    linear(tmp_, x_.data(), w.gate, n, s.experts, s.hidden);
    expert_ids_.resize(static_cast<size_t>(n) * static_cast<size_t>(s.experts_per_token));
    router_w_.resize(expert_ids_.size());
    cpu::router({expert_ids_.data(), router_w_.data(), tmp_.data(), w.gate_bias, n, s.experts, s.n_group,
                 s.topk_group, s.experts_per_token, s.routed_scaling, true});
  }
  {
    OpTimer t(clock, out, RunOp::kExpertGemm);
    tmp_.resize(h_.size());
    cpu::moe_experts({tmp_.data(), x_.data(), expert_ids_.data(), router_w_.data(), w.experts_gate_up,
                      w.experts_down, DType::kF32, n, s.experts_per_token, s.hidden, s.moe_inter, 0,
                      s.experts});
    add_into(h_, tmp_);
  }
  OpTimer t(clock, out, RunOp::kSharedExpert);
  const int32_t inter = s.moe_inter * s.shared_experts;
  linear(tmp_, x_.data(), w.shared_gate_up, n, 2 * inter, s.hidden);
  tmp2_.resize(static_cast<size_t>(n) * static_cast<size_t>(inter));
  cpu::silu_mul({tmp2_.data(), tmp_.data(), n, inter});
  linear(tmp_, tmp2_.data(), w.shared_down, n, s.hidden, inter);
  add_into(h_, tmp_);
}

void ForwardPass::head(const ForwardInput& in, Clock& clock, ForwardOutput& out) {
  const ModelShape& s = shape_;
  const auto rows = static_cast<int32_t>(in.sample_rows.size());
  out.logits.clear();
  out.sampled.clear();
  if (rows == 0) return;
  {
    OpTimer t(clock, out, RunOp::kLmHead);
    x_.resize(static_cast<size_t>(rows) * static_cast<size_t>(s.hidden));
    for (int32_t i = 0; i < rows; ++i) {
      const auto src = static_cast<size_t>(in.sample_rows[static_cast<size_t>(i)]) * s.hidden;
      std::copy_n(h_.begin() + static_cast<std::ptrdiff_t>(src), s.hidden,
                  x_.begin() + static_cast<std::ptrdiff_t>(i) * s.hidden);
    }
    cpu::rmsnorm(
        {x_.data(), nullptr, x_.data(), weights_.final_norm(), rows, s.hidden, s.hidden, s.hidden, s.eps});
    linear(out.logits, x_.data(), weights_.lm_head(), rows, s.vocab, s.hidden);
  }
  OpTimer t(clock, out, RunOp::kSample);
  out.sampled.assign(static_cast<size_t>(rows), -1);
  const std::vector<float> temperature(static_cast<size_t>(rows), 0.0f),
      top_p(static_cast<size_t>(rows), 1.0f);
  const std::vector<int32_t> top_k(static_cast<size_t>(rows), 0);
  const std::vector<uint64_t> zeros(static_cast<size_t>(rows), 0);
  cpu::sample({out.sampled.data(), out.logits.data(), temperature.data(), top_k.data(), top_p.data(),
               zeros.data(), zeros.data(), rows, s.vocab});
}

}  // namespace tokenline
