#include "engine/runtime/forward_pass.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace tokenline {
namespace {

// Adds the seconds from construction to destruction to out.op_s[op], with the backend's queue drained
// at both ends so that an asynchronous backend's kernels land in the op that launched them.
class OpTimer {
 public:
  OpTimer(const KernelSet& k, Clock& clock, ForwardOutput& out, RunOp op)
      : k_(k), clock_(clock), out_(out), op_(op) {
    k_.synchronize();
    t0_ = clock_.now_s();
  }
  ~OpTimer() {
    k_.synchronize();
    out_.op_s[static_cast<size_t>(op_)] += clock_.now_s() - t0_;
  }
  OpTimer(const OpTimer&) = delete;
  OpTimer& operator=(const OpTimer&) = delete;

 private:
  const KernelSet& k_;
  Clock& clock_;
  ForwardOutput& out_;
  RunOp op_;
  double t0_ = 0;
};

KvLayout layout_of(const ModelShape& s) {
  return s.fp8_kv ? KvLayout::kFp8DsMla : KvLayout::kBf16;
}

size_t at(int32_t i) {
  return static_cast<size_t>(i);
}

}  // namespace

void DraftInput::clear() {
  rows.clear();
  next_ids.clear();
  draft_rows.clear();
}

void ForwardInput::clear() {
  token_ids.clear();
  seq.clear();
  pos.clear();
  indptr.assign(1, 0);
  indices.clear();
  last_page_len.clear();
  sample_rows.clear();
  window_indptr.clear();
  window_indices.clear();
  window_first.clear();
  state_slot.clear();
  state_reset.clear();
  max_context = 0;
}

ForwardPass::ForwardPass(const ModelShape& shape, const RankWeights& weights, const KernelSet& kernels,
                         const ForwardConfig& config)
    : shape_(shape), weights_(weights), k_(kernels), config_(config), dims_(weights.dims()) {
  assert((k_.host_memory || (config.comms.tp == nullptr && config.comms.ep == nullptr)) &&
         "the in-process communicators read host memory");
  const int64_t slots = config.total_pages * config.page_tokens;
  if (shape.gqa) {  // full layers in the main pages, window layers in the window pool's, GDN state slots
    const int64_t token = gqa_kv_token_bytes(shape.kv_heads, shape.head_dim);
    for (int32_t l = 0; l < shape.layers; ++l) {
      const LayerMixer m = shape.mixer(l);
      const int64_t pages = m == LayerMixer::kAttention       ? config.total_pages
                            : m == LayerMixer::kSlidingWindow ? config.window_pages
                                                              : 0;
      kv_.emplace_back(k_).resize(pages * config.page_tokens * token);
      idx_k_.emplace_back(k_);
      state_.emplace_back(k_).resize(
          m == LayerMixer::kGatedDeltaNet ? config.state_slots * shape.gdn.state_floats() : 0);
    }
    return;
  }
  const int64_t kv_bytes = kv_token_bytes(layout_of(shape), shape.kv_lora, shape.rope);
  for (int32_t l = 0; l < shape.layers + shape.mtp_layers; ++l) {
    kv_.emplace_back(k_).resize(slots * kv_bytes);
    const bool full = shape.indexer_full[at(l)] != 0;
    idx_k_.emplace_back(k_).resize(full ? slots * shape.idx_dim * 2 : 0);
  }
}

std::vector<KvRegion> ForwardPass::kv_regions() const {
  std::vector<KvRegion> out;
  const int64_t pages = config_.total_pages;
  for (const auto* buffers : {&kv_, &idx_k_}) {
    for (const DeviceBuffer<uint8_t>& b : *buffers) {
      if (b.bytes() == 0) continue;  // a shared layer's indexer keys (it reuses the last full layer's)
      out.push_back(KvRegion{.base = b.data(), .page_bytes = b.bytes() / pages, .pages = pages});
    }
  }
  return out;
}

PagedKvTable ForwardPass::table() const {
  return PagedKvTable{config_.page_tokens, sequences_, indptr_.data(), indices_.data(),
                      last_page_len_.data()};
}

// The window layers' table: each sequence's window pages (its first at win_first_); gqa_slot finds a
// position's page without last_page_len, which is the main table's.
PagedKvTable ForwardPass::window_table() const {
  return PagedKvTable{config_.page_tokens, sequences_, win_indptr_.data(), win_indices_.data(),
                      last_page_len_.data()};
}

void ForwardPass::upload(const ForwardInput& in) {
  n_ = static_cast<int32_t>(in.token_ids.size());
  sequences_ = static_cast<int32_t>(in.last_page_len.size());
  max_context_ = in.max_context;
  token_ids_.assign(in.token_ids);
  seq_.assign(in.seq);
  pos_.assign(in.pos);
  indptr_.assign(in.indptr);
  indices_.assign(in.indices);
  last_page_len_.assign(in.last_page_len);
  if (!shape_.gqa) return;
  win_indptr_.assign(in.window_indptr);
  win_indices_.assign(in.window_indices);
  win_first_.assign(in.window_first);
  state_slot_.assign(in.state_slot);
  reset_states(in);
}

// Zeroes the state slots that start afresh this step, in every GDN layer (a slot's last holder left its
// state there).
void ForwardPass::reset_states(const ForwardInput& in) {
  const int64_t floats = shape_.gdn.state_floats();
  for (size_t i = 0; i < in.state_reset.size(); ++i) {
    if (in.state_reset[i] == 0) continue;
    for (DeviceBuffer<float>& st : state_) {
      if (st.size() == 0) continue;
      k_.scale_add({st.data() + in.state_slot[i] * floats, nullptr, floats, 0.0f, 0.0f});
    }
  }
}

RunOp ForwardPass::op_of(RunOp op) const {
  return drafting_ && !is_collective(op) ? RunOp::kMtpDraft : op;
}

// y[m, n] = x[m, k] * w[n, k]^T
void ForwardPass::linear(DeviceBuffer<float>& y, const float* x, const float* w, int32_t m, int32_t n,
                         int32_t k) {
  y.resize(int64_t{m} * n);
  k_.gemm({y.data(), x, w, nullptr, DType::kF32, m, n, k, false});
}

// y = down(silu(gate x_) * (up x_)) over this rank's `inter` slice; y holds gate|up first, act the product.
void ForwardPass::swiglu(DeviceBuffer<float>& y, DeviceBuffer<float>& act, const float* w_gate_up,
                         const float* w_down, int32_t inter) {
  linear(y, x_.data(), w_gate_up, n_, 2 * inter, shape_.hidden);
  act.resize(int64_t{n_} * inter);
  k_.silu_mul({act.data(), y.data(), n_, inter});
  linear(y, act.data(), w_down, n_, shape_.hidden, inter);
}

void ForwardPass::all_reduce(DeviceBuffer<float>& buf, RunOp op, Clock& clock, ForwardOutput& out) {
  if (config_.comms.tp == nullptr) return;
  OpTimer t(k_, clock, out, op);
  config_.comms.tp->all_reduce_sum(buf.data(), buf.size());
}

void ForwardPass::add_to_residual(const DeviceBuffer<float>& delta) {
  k_.scale_add({h_.data(), delta.data(), h_.size(), 1.0f, 1.0f});
}

void ForwardPass::run(const ForwardInput& in, Clock& clock, ForwardOutput& out) {
  out.op_s.fill(0.0);
  {
    OpTimer t(k_, clock, out, op_of(RunOp::kEmbed));
    upload(in);
    h_.resize(int64_t{n_} * shape_.hidden);
    k_.embedding(
        {h_.data(), weights_.embed(), token_ids_.data(), DType::kF32, n_, shape_.hidden, 0, shape_.vocab});
  }
  for (int32_t l = 0; l < shape_.layers; ++l) {
    attention(l, clock, out);
    mlp(l, clock, out);
  }
  head(in.sample_rows, weights_.final_norm(), clock, out, &out.logits, out.sampled);
}

// DeepSeek-V3's MTP module, chained: the first pass runs the MTP decoder layer over d's rows (filling its
// KV at every position) and drafts from each entry's last row; each further pass feeds every entry's
// newest draft and its MTP hidden state back at the next position, while that position lies inside the
// pages the entry holds (the core allocated them; the next step overwrites what the chain wrote there).
// Every rank runs `chain` passes, some maybe empty, so that collectives meet. Ops are timed as
// mtp_draft, collectives as themselves.
void ForwardPass::draft(const ForwardInput& in, const DraftInput& d, int32_t chain, Clock& clock,
                        ForwardOutput& out) {
  const MtpWeights& w = weights_.mtp();
  drafting_ = true;
  std::vector<int32_t> seq, pos;
  for (const int32_t row : d.rows) {
    seq.push_back(in.seq[static_cast<size_t>(row)]);
    pos.push_back(in.pos[static_cast<size_t>(row)]);
  }
  mtp_pass(d.rows, d.next_ids, seq, pos, clock, out);
  std::vector<int32_t> drafted;
  head(d.draft_rows, w.head_norm, clock, out, nullptr, drafted);
  out.drafts.assign(drafted.size(), {});
  // The chain: per drafting entry, its row in h_, sequence, position and newest draft.
  std::vector<int32_t> entry, row, cseq, cpos;
  for (size_t e = 0; e < drafted.size(); ++e) {
    out.drafts[e].push_back(drafted[e]);
    const auto r = static_cast<size_t>(d.draft_rows[e]);
    entry.push_back(static_cast<int32_t>(e));
    row.push_back(d.draft_rows[e]);
    cseq.push_back(seq[r]);
    cpos.push_back(pos[r]);
  }
  for (int32_t j = 1; j < chain; ++j) chain_pass(in, entry, row, cseq, cpos, clock, out);
  drafting_ = false;
}

// One more draft for every chained entry whose next position is inside its pages (the others leave the
// chain).
void ForwardPass::chain_pass(const ForwardInput& in, std::vector<int32_t>& entry, std::vector<int32_t>& row,
                             std::vector<int32_t>& seq, std::vector<int32_t>& pos, Clock& clock,
                             ForwardOutput& out) {
  std::vector<int32_t> keep_entry, rows_of_h, next_ids, next_seq, next_pos;
  for (size_t i = 0; i < entry.size(); ++i) {
    const auto sq = static_cast<size_t>(seq[i]);
    const int32_t held = (in.indptr[sq + 1] - in.indptr[sq]) * config_.page_tokens;
    if (pos[i] + 1 >= held) continue;
    keep_entry.push_back(entry[i]);
    rows_of_h.push_back(row[i]);
    next_ids.push_back(out.drafts[static_cast<size_t>(entry[i])].back());
    next_seq.push_back(seq[i]);
    next_pos.push_back(pos[i] + 1);
  }
  mtp_pass(rows_of_h, next_ids, next_seq, next_pos, clock, out);
  std::vector<int32_t> all(rows_of_h.size()), drafted;
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int32_t>(i);
  head(all, weights_.mtp().head_norm, clock, out, nullptr, drafted);
  for (size_t i = 0; i < drafted.size(); ++i)
    out.drafts[static_cast<size_t>(keep_entry[i])].push_back(drafted[i]);
  entry = std::move(keep_entry);
  row = std::move(all);
  seq = std::move(next_seq);
  pos = std::move(next_pos);
}

// h_ = eh_proj([enorm(embed(next_ids)) | hnorm(h_[rows_of_h])]), then the MTP decoder layer over those
// rows at (seq, pos); h_ ends holding the MTP layer's output rows.
void ForwardPass::mtp_pass(const std::vector<int32_t>& rows_of_h, const std::vector<int32_t>& next_ids,
                           const std::vector<int32_t>& seq, const std::vector<int32_t>& pos, Clock& clock,
                           ForwardOutput& out) {
  const ModelShape& s = shape_;
  const MtpWeights& w = weights_.mtp();
  const auto m = static_cast<int32_t>(rows_of_h.size());
  {
    OpTimer t(k_, clock, out, RunOp::kMtpDraft);
    token_ids_.assign(next_ids);
    sample_rows_.assign(rows_of_h);
    tmp_.resize(int64_t{m} * s.hidden);
    k_.embedding({tmp_.data(), weights_.embed(), token_ids_.data(), DType::kF32, m, s.hidden, 0, s.vocab});
    tmp2_.resize(int64_t{m} * s.hidden);  // the rows' hidden states (a row gather)
    k_.embedding({tmp2_.data(), h_.data(), sample_rows_.data(), DType::kF32, m, s.hidden, 0, n_});
    tmp3_.resize(int64_t{m} * 2 * s.hidden);
    k_.mtp_input({tmp3_.data(), tmp_.data(), tmp2_.data(), w.enorm, w.hnorm, m, s.hidden, s.eps});
    linear(h_, tmp3_.data(), w.eh_proj, m, s.hidden, 2 * s.hidden);
    seq_.assign(seq);
    pos_.assign(pos);
    n_ = m;
    for (const int32_t p : pos) max_context_ = std::max(max_context_, p + 1);
  }
  attention(s.layers, clock, out);
  mlp(s.layers, clock, out);
}

void ForwardPass::attention(int32_t l, Clock& clock, ForwardOutput& out) {
  if (shape_.gqa) {
    if (shape_.mixer(l) == LayerMixer::kGatedDeltaNet) {
      gated_deltanet(l, clock, out);
    } else {
      gqa_attention(l, clock, out);
    }
    return;
  }
  const ModelShape& s = shape_;
  const LayerWeights& w = weights_.layer(l);
  const int32_t n = n_, heads = dims_.heads, qk = s.nope + s.rope;
  {
    OpTimer t(k_, clock, out, op_of(RunOp::kRmsnorm));
    x_.resize(h_.size());
    k_.rmsnorm({x_.data(), nullptr, h_.data(), w.attn_norm, n, s.hidden, s.hidden, s.hidden, s.eps});
  }
  project_and_write_kv(l, clock, out);
  {
    OpTimer t(k_, clock, out, op_of(RunOp::kQBProj));
    linear(q_, q_a_.data(), w.q_b, n, heads * qk, s.q_lora);
    k_.rope({q_.data(), pos_.data(), n, heads, qk, s.nope, s.rope, s.rope_theta});
    q_latent_.resize(int64_t{n} * heads * s.kv_lora);
    k_.mla_absorb_q(
        {q_latent_.data(), q_.data(), w.kv_b, DType::kF32, n, heads, s.nope, s.rope, s.v, s.kv_lora});
  }
  if (s.indexer_full[at(l)] != 0) select(l, clock, out);
  {
    OpTimer t(k_, clock, out, op_of(RunOp::kSparseMla));
    o_latent_.resize(q_latent_.size());
    k_.mla_attention_sparse({o_latent_.data(), q_latent_.data(), q_.data_at(s.nope), kv_[at(l)].data(),
                             seq_.data(), pos_.data(), topk_.data(), table(), layout_of(s), n, heads,
                             s.kv_lora, s.rope, qk, s.idx_topk, 1.0f / std::sqrt(static_cast<float>(qk))});
  }
  {
    OpTimer t(k_, clock, out, op_of(RunOp::kOProj));
    o_.resize(int64_t{n} * heads * s.v);
    k_.mla_absorb_out({o_.data(), o_latent_.data(), w.kv_b, DType::kF32, n, heads, s.nope, s.v, s.kv_lora});
    linear(tmp_, o_.data(), w.o, n, s.hidden, heads * s.v);
  }
  all_reduce(tmp_, RunOp::kAttnAllreduce, clock, out);
  add_to_residual(tmp_);
}

// A GQA layer over the full context (main pages) or the last window_tokens keys (window pages). q_ rows
// hold per head [query | gate] with attn_output_gate, else the query.
void ForwardPass::gqa_attention(int32_t l, Clock& clock, ForwardOutput& out) {
  const ModelShape& s = shape_;
  const LayerWeights& w = weights_.layer(l);
  const int32_t n = n_, heads = s.heads, kvh = s.kv_heads, hd = s.head_dim;
  const int32_t q_stride = s.attn_output_gate ? 2 * hd : hd;  // per head
  const bool window = s.mixer(l) == LayerMixer::kSlidingWindow;
  {
    OpTimer t(k_, clock, out, RunOp::kRmsnorm);
    x_.resize(h_.size());
    k_.rmsnorm({x_.data(), nullptr, h_.data(), w.attn_norm, n, s.hidden, s.hidden, s.hidden, s.eps});
  }
  {
    OpTimer t(k_, clock, out, RunOp::kAProj);
    linear(q_, x_.data(), w.q_proj, n, heads * q_stride, s.hidden);
    linear(kv_a_, x_.data(), w.k_proj, n, kvh * hd, s.hidden);
    linear(tmp3_, x_.data(), w.v_proj, n, kvh * hd, s.hidden);
  }
  {
    OpTimer t(k_, clock, out, RunOp::kNormRopeKvWrite);
    if (s.qk_norm) {
      k_.rmsnorm({q_.data(), nullptr, q_.data(), w.q_norm, n * heads, hd, q_stride, q_stride, s.eps});
      k_.rmsnorm({kv_a_.data(), nullptr, kv_a_.data(), w.k_norm, n * kvh, hd, hd, hd, s.eps});
    }
    k_.rope({q_.data(), pos_.data(), n, heads, q_stride, 0, hd, s.rope_theta});
    k_.rope({kv_a_.data(), pos_.data(), n, kvh, hd, 0, hd, s.rope_theta});
    k_.gqa_kv_write({kv_[at(l)].data(), kv_a_.data(), tmp3_.data(), seq_.data(), pos_.data(),
                     window ? win_first_.data() : nullptr, window ? window_table() : table(), n, kvh, hd});
  }
  {
    OpTimer t(k_, clock, out, window ? RunOp::kWindowAttn : RunOp::kSparseMla);
    o_latent_.resize(int64_t{n} * heads * hd);
    k_.gqa_attention({o_latent_.data(), q_.data(), kv_[at(l)].data(), seq_.data(), pos_.data(),
                      window ? win_first_.data() : nullptr, s.attention_sinks ? w.sinks : nullptr,
                      window ? window_table() : table(), n, heads, kvh, hd, q_stride,
                      window ? s.window_tokens : 0, 1.0f / std::sqrt(static_cast<float>(hd))});
  }
  {
    OpTimer t(k_, clock, out, RunOp::kOProj);
    if (s.attn_output_gate) k_.sigmoid_gate({o_latent_.data(), q_.data_at(hd), n * heads, hd, hd, q_stride});
    linear(tmp_, o_latent_.data(), w.o, n, s.hidden, heads * hd);
  }
  add_to_residual(tmp_);
}

// A Gated DeltaNet layer (Qwen3.5's linear_attn): in_proj_qkv / z / b / a, the causal conv1d over q|k|v
// and the gated delta rule in each sequence's state slot, the gated RMSNorm with z, out_proj.
void ForwardPass::gated_deltanet(int32_t l, Clock& clock, ForwardOutput& out) {
  const ModelShape& s = shape_;
  const GdnDims& g = s.gdn;
  const LayerWeights& w = weights_.layer(l);
  const int32_t n = n_, channels = g.conv_channels(), v_dim = g.value_heads * g.value_dim;
  {
    OpTimer t(k_, clock, out, RunOp::kRmsnorm);
    x_.resize(h_.size());
    k_.rmsnorm({x_.data(), nullptr, h_.data(), w.attn_norm, n, s.hidden, s.hidden, s.hidden, s.eps});
  }
  {
    OpTimer t(k_, clock, out, RunOp::kGdnProj);
    linear(gdn_qkv_, x_.data(), w.gdn_qkv, n, channels, s.hidden);
    linear(gdn_z_, x_.data(), w.gdn_z, n, v_dim, s.hidden);
    linear(gdn_b_, x_.data(), w.gdn_b, n, g.value_heads, s.hidden);
    linear(gdn_a_, x_.data(), w.gdn_a, n, g.value_heads, s.hidden);
  }
  {
    OpTimer t(k_, clock, out, RunOp::kGdnScan);
    float* state = state_[at(l)].data();
    const int64_t stride = g.state_floats();
    gdn_conv_.resize(int64_t{n} * channels);
    k_.gdn_conv({gdn_conv_.data(), gdn_qkv_.data(), state, w.gdn_conv, seq_.data(), state_slot_.data(), n,
                 channels, g.conv_kernel, stride});
    gdn_o_.resize(int64_t{n} * v_dim);
    k_.gdn_recurrence({gdn_o_.data(), gdn_conv_.data(), gdn_a_.data(), gdn_b_.data(), w.gdn_a_log,
                       w.gdn_dt_bias, state, seq_.data(), state_slot_.data(), n, g.key_heads, g.value_heads,
                       g.key_dim, g.value_dim, channels, stride, g.conv_floats()});
    o_.resize(gdn_o_.size());
    k_.gated_rmsnorm(
        {o_.data(), gdn_o_.data(), gdn_z_.data(), w.gdn_norm, n * g.value_heads, g.value_dim, s.eps});
  }
  {
    OpTimer t(k_, clock, out, RunOp::kGdnProj);
    linear(tmp_, o_.data(), w.gdn_out, n, s.hidden, v_dim);
  }
  add_to_residual(tmp_);
}

// a_proj (q_a and the latent kv_a from x_), their norms, RoPE on the key, and the key's write into the
// layer's paged cache.
void ForwardPass::project_and_write_kv(int32_t l, Clock& clock, ForwardOutput& out) {
  const ModelShape& s = shape_;
  const LayerWeights& w = weights_.layer(l);
  const int32_t n = n_, row = s.kv_lora + s.rope;
  {
    OpTimer t(k_, clock, out, op_of(RunOp::kAProj));
    linear(q_a_, x_.data(), w.q_a, n, s.q_lora, s.hidden);
    linear(kv_a_, x_.data(), w.kv_a, n, row, s.hidden);
  }
  OpTimer t(k_, clock, out, op_of(RunOp::kNormRopeKvWrite));
  k_.rmsnorm({q_a_.data(), nullptr, q_a_.data(), w.q_a_norm, n, s.q_lora, s.q_lora, s.q_lora, s.eps});
  k_.rmsnorm({kv_a_.data(), nullptr, kv_a_.data(), w.kv_norm, n, s.kv_lora, row, row, s.eps});
  k_.rope({kv_a_.data(), pos_.data(), n, 1, row, s.kv_lora, s.rope, s.rope_theta});
  k_.kv_write({kv_[at(l)].data(), kv_a_.data(), kv_a_.data_at(s.kv_lora), seq_.data(), pos_.data(), table(),
               layout_of(s), n, row, s.kv_lora, s.rope});
}

// DSA lightning indexer on a full layer (replicated on every TP rank): writes this step's index keys,
// scores every cached key, keeps the top-k positions (shared layers reuse them until the next full layer).
void ForwardPass::select(int32_t l, Clock& clock, ForwardOutput& out) {
  const ModelShape& s = shape_;
  const LayerWeights& w = weights_.layer(l);
  const int32_t n = n_;
  {
    OpTimer t(k_, clock, out, op_of(RunOp::kIndexerScore));
    linear(idx_q_, q_a_.data(), w.idx_q, n, s.idx_heads * s.idx_dim, s.q_lora);
    linear(idx_k_rows_, x_.data(), w.idx_k, n, s.idx_dim, s.hidden);
    k_.layernorm(
        {idx_k_rows_.data(), idx_k_rows_.data(), w.idx_k_norm, w.idx_k_norm_bias, n, s.idx_dim, s.eps});
    linear(hw_, x_.data(), w.idx_w, n, s.idx_heads, s.hidden);
    const float scale = 1.0f / std::sqrt(static_cast<float>(s.idx_heads * s.idx_dim));
    k_.scale_add({hw_.data(), nullptr, hw_.size(), scale, 0.0f});
    k_.rope({idx_q_.data(), pos_.data(), n, s.idx_heads, s.idx_dim, 0, s.rope, s.rope_theta});
    k_.rope({idx_k_rows_.data(), pos_.data(), n, 1, s.idx_dim, 0, s.rope, s.rope_theta});
    k_.index_k_write(
        {idx_k_[at(l)].data(), idx_k_rows_.data(), seq_.data(), pos_.data(), table(), n, s.idx_dim});
    scores_.resize(int64_t{n} * max_context_);
    k_.indexer_score({scores_.data(), idx_q_.data(), hw_.data(), idx_k_[at(l)].data(), seq_.data(),
                      pos_.data(), table(), n, s.idx_heads, s.idx_dim, max_context_});
  }
  OpTimer t(k_, clock, out, op_of(RunOp::kTopkSelect));
  topk_.resize(int64_t{n} * s.idx_topk);
  k_.topk_select({topk_.data(), scores_.data(), pos_.data(), n, max_context_, s.idx_topk});
}

void ForwardPass::mlp(int32_t l, Clock& clock, ForwardOutput& out) {
  const ModelShape& s = shape_;
  const LayerWeights& w = weights_.layer(l);
  const int32_t n = n_;
  {
    OpTimer t(k_, clock, out, op_of(RunOp::kRmsnorm));
    k_.rmsnorm({x_.data(), nullptr, h_.data(), w.ffn_norm, n, s.hidden, s.hidden, s.hidden, s.eps});
  }
  if (!s.is_moe_layer(l)) {
    OpTimer t(k_, clock, out, op_of(RunOp::kDenseMlp));
    swiglu(tmp_, tmp2_, w.dense_gate_up, w.dense_down, dims_.dense_inter);
  } else {
    routed_experts(l, clock, out);
    if (s.shared_experts > 0) {  // gpt-oss has none
      OpTimer t(k_, clock, out, op_of(RunOp::kSharedExpert));
      swiglu(tmp2_, tmp3_, w.shared_gate_up, w.shared_down, dims_.shared_inter);
      k_.scale_add({tmp_.data(), tmp2_.data(), tmp_.size(), 1.0f, 1.0f});
    }
  }
  all_reduce(tmp_, RunOp::kMlpAllreduce, clock, out);
  add_to_residual(tmp_);
}

// Router, then this rank's routed-expert output in tmp_: its experts' inter slice over every row (ep ==
// 1), or under EP expert_parallel's.
void ForwardPass::routed_experts(int32_t l, Clock& clock, ForwardOutput& out) {
  const ModelShape& s = shape_;
  const LayerWeights& w = weights_.layer(l);
  const int32_t n = n_, topk = s.experts_per_token;
  {
    OpTimer t(k_, clock, out, op_of(RunOp::kRouter));
    linear(tmp_, x_.data(), w.gate, n, s.experts, s.hidden);
    expert_ids_.resize(int64_t{n} * topk);
    router_w_.resize(expert_ids_.size());
    k_.router({expert_ids_.data(), router_w_.data(), tmp_.data(), w.gate_bias, n, s.experts, s.n_group,
               s.topk_group, topk, s.routed_scaling, true});
  }
  tmp_.resize(int64_t{n} * s.hidden);
  MoeExpertsParams p{tmp_.data(),
                     x_.data(),
                     expert_ids_.data(),
                     router_w_.data(),
                     w.experts_gate_up,
                     w.experts_down,
                     DType::kF32,
                     n,
                     topk,
                     s.hidden,
                     dims_.moe_inter,
                     dims_.expert_begin,
                     dims_.local_experts};
  if (config_.comms.ep == nullptr) {
    OpTimer t(k_, clock, out, op_of(RunOp::kExpertGemm));
    k_.moe_experts(p);
    return;
  }
  expert_parallel(p, clock, out);
}

// This TP rank's slice of the rows to their experts' ranks and back (dispatch, expert_gemm, combine);
// the other TP ranks' rows of p.out stay zero, so that the TP all-reduce assembles every row.
void ForwardPass::expert_parallel(MoeExpertsParams p, Clock& clock, ForwardOutput& out) {
  const int64_t hidden = p.hidden, topk = p.topk;
  const int32_t tp = config_.shard.tp, r = config_.shard.tp_rank;
  const int32_t row0 = p.n_tokens * r / tp, row1 = p.n_tokens * (r + 1) / tp;
  k_.scale_add({p.out, nullptr, int64_t{p.n_tokens} * hidden, 0.0f, 0.0f});
  p.out += row0 * hidden;
  p.x += row0 * hidden;
  p.expert_ids += row0 * topk;
  p.weights += row0 * topk;
  p.n_tokens = row1 - row0;
  {
    OpTimer t(k_, clock, out, op_of(RunOp::kDispatch));
    ep_moe_.dispatch(*config_.comms.ep, p);
  }
  {
    OpTimer t(k_, clock, out, op_of(RunOp::kExpertGemm));
    ep_moe_.compute(p);
  }
  OpTimer t(k_, clock, out, op_of(RunOp::kCombine));
  ep_moe_.combine(*config_.comms.ep, p);
}

// The LM head on `rows` of h_ (normed by `norm`), greedy-sampled into `sampled`; logits copied to the
// host when asked.
void ForwardPass::head(const std::vector<int32_t>& rows_of_h, const float* norm, Clock& clock,
                       ForwardOutput& out, std::vector<float>* logits, std::vector<int32_t>& sampled) {
  const ModelShape& s = shape_;
  const auto rows = static_cast<int32_t>(rows_of_h.size());
  if (logits != nullptr) logits->clear();
  sampled.clear();
  if (rows == 0) return;
  sample_rows_.assign(rows_of_h);
  const int32_t vocab_rows = dims_.vocab_rows;
  {
    OpTimer t(k_, clock, out, op_of(RunOp::kLmHead));
    // A row gather is an embedding lookup with h_ as the table.
    x_.resize(int64_t{rows} * s.hidden);
    k_.embedding({x_.data(), h_.data(), sample_rows_.data(), DType::kF32, rows, s.hidden, 0, n_});
    k_.rmsnorm({x_.data(), nullptr, x_.data(), norm, rows, s.hidden, s.hidden, s.hidden, s.eps});
    linear(config_.comms.tp == nullptr ? logits_ : vocab_shards_, x_.data(), weights_.lm_head(), rows,
           vocab_rows, s.hidden);
  }
  if (config_.comms.tp != nullptr) {
    OpTimer t(k_, clock, out, op_of(RunOp::kVocabAllgather));
    const int32_t tp = config_.shard.tp;
    tmp_.resize(int64_t{tp} * rows * vocab_rows);  // [rank][row][vocab_rows]
    config_.comms.tp->all_gather(tmp_.data(), vocab_shards_.data(), vocab_shards_.bytes());
    logits_.resize(int64_t{rows} * s.vocab);
    const int64_t shard_bytes = int64_t{vocab_rows} * static_cast<int64_t>(sizeof(float));
    for (int32_t rank = 0; rank < tp; ++rank) {
      for (int32_t i = 0; i < rows; ++i) {
        k_.copy(logits_.data() + int64_t{i} * s.vocab + int64_t{rank} * vocab_rows,
                tmp_.data() + (int64_t{rank} * rows + i) * vocab_rows, shard_bytes);
      }
    }
  }
  OpTimer t(k_, clock, out, op_of(RunOp::kSample));
  if (temperature_.size() < rows) {  // greedy for every row: the same values each step, uploaded on growth
    temperature_.assign(std::vector<float>(at(rows), 0.0f));
    top_p_.assign(std::vector<float>(at(rows), 1.0f));
    top_k_.assign(std::vector<int32_t>(at(rows), 0));
    sample_seeds_.assign(std::vector<uint64_t>(at(rows), 0));
  }
  sampled_.resize(rows);
  k_.sample({sampled_.data(), logits_.data(), temperature_.data(), top_k_.data(), top_p_.data(),
             sample_seeds_.data(), sample_seeds_.data(), rows, s.vocab});
  if (logits != nullptr) logits_.download(*logits);
  sampled_.download(sampled);
}

}  // namespace tokenline
