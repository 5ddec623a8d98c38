// price_rank_from_profile: the measured-time overlay on one rank's roofline terms. An op is re-priced only
// when every component it needs has a curve; otherwise it keeps its roofline time (source stays roofline).
#include <algorithm>
#include <cmath>
#include <limits>
#include <span>
#include <tuple>

#include "cost/op_profile_pricing.h"

namespace tokenline {

double Dsv4Module::PrefixRoof::at(double b, double x, double p) const {
  return std::max(b * x * (c_token + c_pair * (p + x / 2)), m0 + b * (x * m_token + (p + x) * m_key));
}

double Dsv4Module::prefill_at(double seqs, double tokens, double prefix) const {
  if (prefix <= prefixes.front()) return prefill.front().at(seqs, tokens);
  const size_t n = prefixes.size();
  if (prefix >= prefixes.back()) {
    const double last = prefill.back().at(seqs, tokens), at = prefixes.back();
    double slope = 0;
    if (!end.empty() && end_total - tokens > at)
      slope = (end.at(seqs, tokens) - last) / (end_total - tokens - at);
    else if (n >= 2)
      slope = (last - prefill[n - 2].at(seqs, tokens)) / (at - prefixes[n - 2]);
    return std::max(last + std::max(0.0, slope) * (prefix - at), roof.at(seqs, tokens, prefix));
  }
  const size_t hi = size_t(std::upper_bound(prefixes.begin(), prefixes.end(), prefix) - prefixes.begin());
  const double u = (prefix - prefixes[hi - 1]) / (prefixes[hi] - prefixes[hi - 1]);
  const double lo_s = prefill[hi - 1].at(seqs, tokens);
  return lo_s + u * (prefill[hi].at(seqs, tokens) - lo_s);
}

namespace {

constexpr int64_t kGraphBucketStep = 8;  // SGLang captures 1, 2, 4, 8, then every 8 up to cuda_graph_max_bs
constexpr double kNotPriced = std::numeric_limits<double>::quiet_NaN();

void set_profile(Term& t, double s) {
  t.time_s = s;
  t.launch_s = 0;
  t.roofline_s = 0;
  t.source = TermSource::kProfile;
}

// Sum of per-layer component curves at the given token counts, times `layers`; false if one is missing.
struct Part {
  const OpCurve* curve;
  double tokens;
};
bool price_parts(Term& t, int layers, std::initializer_list<Part> parts) {
  double s = 0;
  for (const Part& p : parts) {
    if (p.tokens <= 0) continue;
    if (p.curve->empty()) return false;
    s += p.curve->at(p.tokens);
  }
  set_profile(t, layers * s);
  return true;
}

// Attention over the rank's sequences: decode at the mean context, prefill per sequence's new tokens
// plus the prefix's extra (query, key) pairs at the roofline rate. False if a needed grid is missing.
bool attention_s(const ProfileCurves& pc, const ProfileWork& w, double& s) {
  s = 0;
  if (w.decode_seqs > 0) {
    if (pc.attn_decode.empty()) return false;
    s += pc.attn_decode.at(w.decode_seqs, w.decode_context);
  }
  if (w.prefill_seqs > 0) {
    if (pc.attn_prefill.empty()) return false;
    const double x = w.prefill_tokens / w.prefill_seqs;
    const double table_keys = w.prefill_seqs * x * (x + 1) / 2;
    s +=
        pc.attn_prefill.at(w.prefill_seqs, x) + std::max(0.0, w.prefill_keys - table_keys) * pc.prefill_key_s;
  }
  return true;
}

// Attention over at most `cap` keys a query as the grids see it, asked at min(ctx, cap) (docs/layers.md):
// decode at the mean keys within the cap (decode_context); prefill as chunks of at most cap new tokens each,
// whose causal pairs the table holds, plus the further pairs (prefill_keys) at the roofline rate
// (attention_s's prefix term). A window layer's cap is its window W; a block-sparse layer's (MiniMax-M3)
// its top-k blocks' tokens, each query's own selection read as a window of that many keys.
ProfileWork capped_view(const ProfileWork& w, int64_t cap, double decode_context, double prefill_keys) {
  ProfileWork v = w;
  v.decode_context = decode_context;
  if (w.prefill_seqs > 0)
    v.prefill_tokens = w.prefill_seqs * std::min(w.prefill_tokens / w.prefill_seqs, double(cap));
  v.prefill_keys = prefill_keys;
  return v;
}

// The decode sequences the kernels run: the CUDA-graph bucket when the step is replayed (profile_work pads
// the token counts to it), else the sequences themselves.
double kernel_decode_seqs(const ProfileWork& w) {
  return w.graph ? double(cuda_graph_bucket(int64_t(w.decode_seqs))) : w.decode_seqs;
}

// One layer's MLA block. The rows were measured with one query token per sequence (batch = tokens), so a
// step whose sequences verify several tokens each (MTP's TARGET_VERIFY) takes the block at its tokens and
// the shortest measured context, plus the rise with context of its sequences alone: the verify pass runs
// the decode kernel with every draft token of a sequence in one query tile, reading that sequence's cached
// KV once (SGLang trtllm_mla_backend.py forward_extend, is_target_verify: q viewed [bs, draft_token_num,
// heads, dim] into _run_decode_kernel; FlashMLA likewise folds seqlen_q into the query heads), not once per
// token. Rows of another KV dtype: the block at the shortest context plus the attention table's rise from
// there to the batch's context in the model's dtype.
// A decode module's rows at `tokens` query tokens of the step's decode sequences (verify_module_s: MTP's
// verify pass as described above; DeepSeek-V4's modules are read the same way).
double verify_module_s(const OpGrid& g, const ProfileWork& w, double tokens) {
  const double seqs = kernel_decode_seqs(w);
  if (tokens <= seqs) return g.at(tokens, w.decode_context);
  const double x0 = g.rows.front().xs.front();
  return g.at(tokens, x0) + std::max(0.0, g.at(seqs, w.decode_context) - g.at(seqs, x0));
}

double mla_module_s(const ProfileCurves& pc, const ProfileWork& w) {
  const OpGrid& g = pc.mla_module_decode;
  if (pc.mla_module_other_kv) {
    const double x0 = g.rows.front().xs.front();
    return g.at(w.tokens, x0) + std::max(0.0, pc.attn_decode.at(w.decode_seqs, w.decode_context) -
                                                  pc.attn_decode.at(w.decode_seqs, x0));
  }
  return verify_module_s(g, w, w.tokens);
}

// The fused MLA decode module covers a_proj .. o_proj. Its time is shared among those ops in proportion
// to their roofline times, so each row still shows where the block's time would go.
constexpr Op kMlaModuleOps[] = {Op::kAProj, Op::kNormRopeKvWrite, Op::kQBProj, Op::kSparseMla, Op::kOProj};

void price_mla_module(const ProfileCurves& pc, const ProfileWork& w, int layers,
                      std::array<Term, kOpCount>& terms) {
  const double group_s = layers * mla_module_s(pc, w);
  double roof_s = 0;
  for (Op op : kMlaModuleOps) roof_s += terms[size_t(op)].time_s;
  for (Op op : kMlaModuleOps) {
    Term& t = terms[size_t(op)];
    set_profile(t, roof_s > 0 ? group_s * t.time_s / roof_s : group_s / std::size(kMlaModuleOps));
  }
}

// A DSA part over the rank's decode and prefill sequences (prefill: plus the prefix's extra pairs at
// pair_s each); false if a needed grid is missing.
bool dsa_part_s(const OpGrid& decode, const OpGrid& prefill, double pair_s, const ProfileWork& w, double& s) {
  s = 0;
  if (w.decode_seqs > 0) {
    if (decode.empty()) return false;
    s += decode.at(w.decode_seqs, w.decode_context);
  }
  if (w.prefill_seqs > 0) {
    if (prefill.empty()) return false;
    const double x = w.prefill_tokens / w.prefill_seqs;
    s += prefill.at(w.prefill_seqs, x) +
         std::max(0.0, w.prefill_keys - w.prefill_seqs * x * (x + 1) / 2) * pair_s;
  }
  return true;
}

// DSA: sparse attention on every layer; indexer logits (+ its q/k projections) and top-k on the full layers.
// With the decode indexer module's rows, decode sequences take their whole indexer from them (on the
// indexer_score row; top_k then prices the prefill part only) and the parts price the prefill.
// An MTP sequence's verify tokens are queries of their own here, each with its own top-k keys: SGLang's NSA
// backend expands TARGET_VERIFY into bs x draft tokens rows of one query each (nsa_backend.py
// init_forward_metadata, is_target_verify: cu_seqlens_q over bs * speculative_num_draft_tokens,
// max_seqlen_q 1), so the decode rows are read at the decode tokens, not the sequences.
// Whether a step's prefill runs as SGLang's dense short-sequence MHA (pc.dsa_dense_prefill_keys): a prefill
// batch (no decode beside it: SGLang's extend batch) whose sequences all hold at most that many keys.
bool dense_dsa_prefill(const ProfileCurves& pc, const ProfileWork& w) {
  return pc.dsa_dense_prefill_keys > 0 && w.prefill_seqs > 0 && w.decode_seqs == 0 &&
         w.prefill_max_keys <= pc.dsa_dense_prefill_keys;
}

void price_dsa(const CostModel& cm, const ProfileWork& step, std::array<Term, kOpCount>& terms) {
  const ProfileCurves& pc = profile_curves(cm);
  const ModelConfig& m = cm.model;
  if (dense_dsa_prefill(pc, step)) {
    // Dense MHA over every key, the indexer only caching its keys (nsa_indexer: no query, logits or top-k
    // on the MHA path).
    double s = 0;
    if (attention_s(pc, step, s)) set_profile(terms[size_t(Op::kSparseMla)], m.attention_layers() * s);
    set_profile(terms[size_t(Op::kTopkSelect)], 0);
    price_parts(terms[size_t(Op::kIndexerScore)], m.indexer_full_layers, {{&pc.index_k_proj, step.tokens}});
    return;
  }
  ProfileWork w = step;
  w.decode_seqs = step.decode_tokens;
  double s = 0;
  if (dsa_part_s(pc.dsa_attn_decode, pc.dsa_attn_prefill, 0, w, s))
    set_profile(terms[size_t(Op::kSparseMla)], m.attention_layers() * s);
  const int Lf = m.indexer_full_layers;
  const bool module = w.decode_seqs > 0 && !pc.dsa_indexer_decode.empty();
  ProfileWork parts = w;
  if (module) {  // the parts price what prefill adds
    parts.decode_seqs = parts.decode_context = 0;
    parts.tokens = w.prefill_tokens;
  }
  if (dsa_part_s(pc.dsa_topk_decode, pc.dsa_topk_prefill, pc.dsa_topk_pair_s, parts, s))
    set_profile(terms[size_t(Op::kTopkSelect)], Lf * s);
  if (!dsa_part_s(pc.dsa_logits_decode, pc.dsa_logits_prefill, pc.dsa_logits_pair_s, parts, s)) return;
  Term& score = terms[size_t(Op::kIndexerScore)];
  if (!price_parts(score, Lf, {{&pc.index_q_proj, parts.tokens}, {&pc.index_k_proj, parts.tokens}})) return;
  score.time_s += Lf * s;
  if (module) score.time_s += Lf * pc.dsa_indexer_decode.at(w.decode_seqs, w.decode_context);
}

// The projections around attention (a_proj, q_b_proj with its batched GEMM, o_proj with its), by tokens.
void price_projections(const CostModel& cm, const ProfileWork& w, std::array<Term, kOpCount>& terms) {
  const ProfileCurves& pc = profile_curves(cm);
  const int L = cm.model.attention_layers();
  const double decode_tokens = w.prefill_seqs > 0 ? w.tokens - w.prefill_tokens : w.tokens;
  if (const int Lg = cm.model.mixer_layers(MixerKind::kGatedDeltaNet); Lg > 0)
    price_parts(terms[size_t(Op::kGdnProj)], Lg,
                {{&pc.gdn_in, w.tokens}, {&pc.gdn_ba, w.tokens}, {&pc.gdn_out, w.tokens}});
  if (const int Lm = cm.model.mixer_layers(MixerKind::kMamba2); Lm > 0)
    price_parts(terms[size_t(Op::kMamba2Proj)], Lm, {{&pc.mamba2_in, w.tokens}, {&pc.mamba2_out, w.tokens}});
  if (const int Lk = cm.model.mixer_layers(MixerKind::kKda); Lk > 0)  // f_b, and g_b with a low-rank gate
    price_parts(terms[size_t(Op::kKdaProj)], Lk,
                {{&pc.kda_in, w.tokens},
                 {&pc.kda_down, w.tokens},
                 {&pc.kda_up, w.tokens},
                 {&pc.kda_up, cm.model.kda.full_rank_gate ? 0 : w.tokens},
                 {&pc.kda_out, w.tokens}});
  if (L == 0) return;
  price_parts(terms[size_t(Op::kAProj)], L, {{&pc.a_proj, w.tokens}});
  if (cm.model.attention == AttentionKind::kMla) {
    // decode absorbs W_UK / W_UV into batched GEMMs; prefill (MHA) expands the latent through kv_b_proj
    price_parts(terms[size_t(Op::kQBProj)], L,
                {{&pc.q_b_proj, w.tokens}, {&pc.bmm_pre, decode_tokens}, {&pc.kv_b_proj, w.prefill_tokens}});
    price_parts(terms[size_t(Op::kOProj)], L,
                {{&pc.o_proj, w.tokens},
                 {&pc.bmm_post, decode_tokens},
                 {&pc.o_gate, cm.model.attn_output_gate ? w.tokens : 0}});
  } else {
    price_parts(terms[size_t(Op::kOProj)], L, {{&pc.o_proj, w.tokens}});
  }
}

// The GDN scan from the gdn table (its conv1d and recurrence kernels, per layer): decode at the batch the
// kernels run (the CUDA-graph bucket when replayed), prefill at the rank's sequences and mean new tokens each
// (as attention_s). Left on the roofline when a needed curve is missing.
void price_gdn_scan(const CostModel& cm, const ProfileWork& w, std::array<Term, kOpCount>& terms) {
  const ProfileCurves& pc = profile_curves(cm);
  const int Lg = cm.model.mixer_layers(MixerKind::kGatedDeltaNet);
  if (Lg == 0) return;
  double s = 0;
  if (w.decode_seqs > 0) {
    if (pc.gdn_conv_decode.empty() || pc.gdn_scan_decode.empty()) return;
    const double b = kernel_decode_seqs(w);
    s += pc.gdn_conv_decode.at(b) + pc.gdn_scan_decode.at(b);
  }
  if (w.prefill_seqs > 0) {
    if (pc.gdn_conv_prefill.empty() || pc.gdn_scan_prefill.empty()) return;
    const double x = w.prefill_tokens / w.prefill_seqs;
    s += pc.gdn_conv_prefill.at(w.prefill_seqs, x) + pc.gdn_scan_prefill.at(w.prefill_seqs, x);
  }
  if (s > 0) set_profile(terms[size_t(Op::kGdnScan)], Lg * s);
}

// The KDA scan from the kda table, per layer, as the GDN scan: decode at the kernels' batch, prefill at the
// rank's sequences and mean new tokens each; each phase the sum of the kernels it runs. Left on the roofline
// where the table has no rows of the model's shard (a phase the step needs unresolved).
void price_kda_scan(const CostModel& cm, const ProfileWork& w, std::array<Term, kOpCount>& terms) {
  const ProfileCurves& pc = profile_curves(cm);
  const int Lk = cm.model.mixer_layers(MixerKind::kKda);
  if (Lk == 0) return;
  double s = 0;
  if (w.decode_seqs > 0) {
    if (pc.kda_decode.empty()) return;
    const double b = kernel_decode_seqs(w);
    for (const OpCurve& c : pc.kda_decode) s += c.at(b);
  }
  if (w.prefill_seqs > 0) {
    if (pc.kda_prefill.empty()) return;
    const double x = w.prefill_tokens / w.prefill_seqs;
    for (const OpGrid& g : pc.kda_prefill) s += g.at(w.prefill_seqs, x);
  }
  if (s > 0) set_profile(terms[size_t(Op::kKdaScan)], Lk * s);
}

// The DSA block rows that price a step's whole attention block: `full` for the layers scoring their own
// top-k, `skip` for those reusing the previous full layer's (null for a model without such layers). Both null
// unless the step is a pure decode batch of one query token per sequence (an MTP verify keeps the parts) or a
// prefill batch with no decode beside it (SGLang's extend batch) and no cached prefix (the rows were measured
// without), and the rows the model's layers need were resolved.
struct DsaBlockGrids {
  const OpGrid* full = nullptr;
  const OpGrid* skip = nullptr;
};

DsaBlockGrids dsa_block_grids(const CostModel& cm, const ProfileWork& w) {
  const ProfileCurves& pc = profile_curves(cm);
  const bool shared = cm.model.indexer_shared_layers() > 0;
  auto pick = [&](const OpGrid& full, const OpGrid& skip) -> DsaBlockGrids {
    if (full.empty() || (shared && skip.empty())) return {};
    return {&full, shared ? &skip : nullptr};
  };
  if (w.prefill_seqs == 0 && w.decode_seqs > 0 && w.decode_tokens == w.decode_seqs)
    return pick(pc.dsa_block_decode, pc.dsa_block_skip_decode);
  if (w.decode_seqs == 0 && w.prefill_seqs > 0) {
    const double x = w.prefill_tokens / w.prefill_seqs;
    if (w.prefill_keys <= w.prefill_seqs * x * (x + 1) / 2 * (1 + 1e-9))
      return pick(pc.dsa_block_prefill, pc.dsa_block_skip_prefill);
  }
  return {};
}

// Whether a module's rows price the whole attention block, a_proj .. o_proj: a pure decode batch of an MLA
// model whose module was measured, a step of a DSA model the block rows cover (dsa_block_grids), or any step
// of a DeepSeek-V4 model whose modules the dsv4 rows measure.
bool attn_module_prices(const CostModel& cm, const ProfileWork& w) {
  const ProfileCurves& pc = profile_curves(cm);
  if (cm.model.attention == AttentionKind::kCompressed) return !pc.dsv4_csa.empty();
  if (cm.model.has_indexer()) return dsa_block_grids(cm, w).full != nullptr;
  if (cm.model.has_block_sparse()) return !pc.msa.empty();
  return cm.model.attention == AttentionKind::kMla && w.prefill_seqs == 0 && !pc.mla_module_decode.empty();
}

// A measured block's time over the ops it covers, in proportion to their roofline times (each row still shows
// where the block's time would go).
void spread_block(double block_s, std::span<const Op> ops, std::array<Term, kOpCount>& terms) {
  double roof_s = 0;
  for (Op op : ops) roof_s += terms[size_t(op)].time_s;
  for (Op op : ops) {
    Term& t = terms[size_t(op)];
    set_profile(t, block_s * (roof_s > 0 ? t.time_s / roof_s : 1.0 / double(ops.size())));
  }
}

// The DSA block's time over its ops (the indexer's and top-k's beside the MLA module's), in proportion to
// their roofline times: decode at the sequences the kernels run and their context, prefill at the sequences
// and their new tokens each; the full layers from their rows, the others from the skip rows.
constexpr Op kDsaBlockOps[] = {Op::kAProj,      Op::kNormRopeKvWrite, Op::kQBProj, Op::kIndexerScore,
                               Op::kTopkSelect, Op::kSparseMla,       Op::kOProj};

void price_dsa_block(const DsaBlockGrids& g, const ProfileWork& w, const ModelConfig& m,
                     std::array<Term, kOpCount>& terms) {
  auto at = [&](const OpGrid& grid) {
    return w.prefill_seqs > 0 ? grid.at(w.prefill_seqs, w.prefill_tokens / w.prefill_seqs)
                              : grid.at(kernel_decode_seqs(w), w.decode_context);
  };
  const int shared = m.indexer_shared_layers();
  const double block_s =
      (m.attention_layers() - shared) * at(*g.full) + (shared > 0 ? shared * at(*g.skip) : 0);
  spread_block(block_s, kDsaBlockOps, terms);
}

// One DeepSeek-V4 module's decode part: its rows hold one query token per sequence, read as the MLA
// module's (verify_module_s: a step verifying several tokens a sequence reads a sequence's entries once) at
// the decode sequences' tokens (a mixed batch's prefill tokens are the prefill part's).
double dsv4_decode_s(const Dsv4Module& d, const ProfileWork& w) {
  return verify_module_s(d.decode, w, w.prefill_seqs > 0 ? w.decode_tokens : w.tokens);
}

// One DeepSeek-V4 module's prefill part: the step's prefill sequences at their mean new tokens and mean
// cached prefix (from the causal pairs: a sequence of x new tokens after p cached ones has x p + x (x + 1) /
// 2).
double dsv4_prefill_s(const Dsv4Module& d, const ProfileWork& w) {
  const double b = w.prefill_seqs, x = w.prefill_tokens / w.prefill_seqs;
  const double prefix = std::max(0.0, (w.prefill_keys / b - x * (x + 1) / 2) / x);
  return d.prefill_at(b, x, prefix);
}

// DeepSeek-V4's attention block from the dsv4 rows: every CSA layer's module and every other layer's as an
// HCA one (a window-only layer has no compressor or compressed entries: priced as HCA, aiconfigurator's rule
// in sdk/models/deepseek_v4.py; 2 of Flash's 43 layers). A step holding decode and prefill sequences (a mixed
// batch) takes both parts. Spread over the module's ops in proportion to their roofline times.
constexpr Op kDsv4BlockOps[] = {Op::kAProj,      Op::kNormRopeKvWrite, Op::kQBProj,     Op::kIndexerScore,
                                Op::kTopkSelect, Op::kSparseMla,       Op::kWindowAttn, Op::kOProj};

void price_dsv4_block(const ProfileCurves& pc, const ProfileWork& w, const ModelConfig& m,
                      std::array<Term, kOpCount>& terms) {
  const int csa = m.compressed.layers_of(4), other = m.layers - csa;
  double block_s = 0;
  if (w.decode_seqs > 0)
    block_s += csa * dsv4_decode_s(pc.dsv4_csa, w) + other * dsv4_decode_s(pc.dsv4_hca, w);
  if (w.prefill_seqs > 0)
    block_s += csa * dsv4_prefill_s(pc.dsv4_csa, w) + other * dsv4_prefill_s(pc.dsv4_hca, w);
  spread_block(block_s, kDsv4BlockOps, terms);
}

// MiniMax-M3's attention block from the msa rows (docs/layers.md "MiniMax-M3"): every block-sparse layer's
// whole block (projections, indexer, sparse attention) as measured, the dense layers' attention from the GQA
// grids (else their share of the roofline row) and their projections and KV writes at their roofline share;
// spread over the block's ops in proportion to their roofline times. A mixed batch takes both parts.
constexpr Op kMsaBlockOps[] = {Op::kAProj,      Op::kNormRopeKvWrite, Op::kIndexerScore,
                               Op::kTopkSelect, Op::kSparseMla,       Op::kOProj};

void price_msa_block(const CostModel& cm, const ProfileWork& w, std::array<Term, kOpCount>& terms) {
  const ProfileCurves& pc = profile_curves(cm);
  const int L = cm.model.attention_layers(), La = cm.full_attention_layers, Ls = cm.block_sparse_layers;
  const int Ld = La - Ls;
  double block_s = 0;
  if (w.decode_seqs > 0) block_s += Ls * dsv4_decode_s(pc.msa, w);
  if (w.prefill_seqs > 0) block_s += Ls * dsv4_prefill_s(pc.msa, w);
  if (Ld > 0) {
    double attn_s = 0;
    const double proj_s = terms[size_t(Op::kAProj)].time_s + terms[size_t(Op::kNormRopeKvWrite)].time_s +
                          terms[size_t(Op::kOProj)].time_s;
    block_s += proj_s * Ld / L;
    block_s += attention_s(pc, w, attn_s) ? Ld * attn_s : terms[size_t(Op::kSparseMla)].time_s * Ld / La;
  }
  spread_block(block_s, kMsaBlockOps, terms);
}

// The attention of the block: the MLA module's whole block where it prices it, else DSA's parts or the
// attention grid (the projections priced apart, by tokens).
void price_attention(const CostModel& cm, const ProfileWork& w, std::array<Term, kOpCount>& terms) {
  const ProfileCurves& pc = profile_curves(cm);
  const ModelConfig& m = cm.model;
  if (m.attention == AttentionKind::kCompressed) {
    if (!pc.dsv4_csa.empty()) price_dsv4_block(pc, w, m, terms);
    return;
  }
  if (m.has_indexer()) {
    if (const DsaBlockGrids block = dsa_block_grids(cm, w); block.full)
      price_dsa_block(block, w, m, terms);
    else
      price_dsa(cm, w, terms);
    return;
  }
  if (m.has_block_sparse() && !pc.msa.empty()) {
    price_msa_block(cm, w, terms);
    return;
  }
  if (attn_module_prices(cm, w)) {
    price_mla_module(pc, w, m.attention_layers(), terms);
    return;
  }
  double attn_s = 0;
  const int La = cm.full_attention_layers, Lw = cm.window_layers;
  // Gemma 4's full layers (512-wide heads, their own KV heads) match no table row: their attention stays
  // on the roofline; the window layers are looked up at the model's head width (docs/layers.md).
  const bool full_shape_apart = m.attention == AttentionKind::kGqa && m.full_layer_shape_differs();
  // MiniMax-M3: Ls of the La full layers block-sparse, each over its selected blocks.
  const int Ls = cm.block_sparse_layers;
  double sparse_s = 0;
  if (La > 0 && !full_shape_apart && attention_s(pc, w, attn_s) &&
      (Ls == 0 ||
       attention_s(pc, capped_view(w, m.block_sparse.topk_tokens(), w.bs_decode_context, w.bs_prefill_keys),
                   sparse_s)))
    set_profile(terms[size_t(Op::kSparseMla)], (La - Ls) * attn_s + Ls * sparse_s);
  if (Lw > 0 &&
      attention_s(pc, capped_view(w, m.window_tokens, w.win_decode_context, w.win_prefill_keys), attn_s))
    set_profile(terms[size_t(Op::kWindowAttn)], Lw * attn_s);
}

// The ops the token curves alone price, besides the projections: the dense MLP, the MoE router, the
// shared expert (fused into the MoE kernel: its table time in fused_table_s, the roofline bound applied
// by the caller) and the LM head.
void price_token_ops(const CostModel& cm, const ProfileWork& w, std::array<Term, kOpCount>& terms,
                     double& fused_table_s) {
  const ProfileCurves& pc = profile_curves(cm);
  const ModelConfig& m = cm.model;
  const int Lm = m.moe_layers(), Ld = m.mlp_dense_layers();
  fused_table_s = kNotPriced;
  if (Ld > 0)
    price_parts(terms[size_t(Op::kDenseMlp)], Ld, {{&pc.dense_up, w.tokens}, {&pc.dense_down, w.tokens}});
  if (Lm > 0) {
    price_parts(terms[size_t(Op::kRouter)], Lm, {{&pc.router, w.tokens}});
    if (pc.fused_shared_rows > 0 && w.tokens > 0) {
      // One more expert in the fused kernel, chosen by every token: the table's MoE at the kernel's rows
      // beyond the routed ones.
      const OpCurve& fused = pc.moe_fused_shared.empty() ? pc.moe : pc.moe_fused_shared;
      fused_table_s = Lm * std::max(0.0, fused.at(w.tokens * pc.fused_shared_rows) - pc.moe.at(w.tokens));
    } else if (m.shared_experts > 0) {
      price_parts(terms[size_t(Op::kSharedExpert)], Lm,
                  {{&pc.shared_up, w.tokens}, {&pc.shared_down, w.tokens}});
    }
  }
  if (w.lm_tokens > 0) price_parts(terms[size_t(Op::kLmHead)], 1, {{&pc.lm_head, w.lm_tokens}});
}

// DeepSeek-V4's hyper-connection mixes from the dsv4 rows: a layer's pre row (both sites' hc_pre, each with
// the RMSNorm it fuses) and post row (both hc_post), so the rmsnorm op holds them and the norms.
void price_mhc(const CostModel& cm, const ProfileWork& w, std::array<Term, kOpCount>& terms) {
  const ProfileCurves& pc = profile_curves(cm);
  if (pc.mhc_pre.empty() || w.tokens <= 0) return;
  set_profile(terms[size_t(Op::kRmsnorm)],
              cm.model.layers * (pc.mhc_pre.at(w.tokens) + pc.mhc_post.at(w.tokens)));
}

// Where the expert's own roofline is its weight read (a few hundred tokens and below), the fused shared
// expert costs at most that read: there 1/topk more rows reach about topk experts the routed ones left
// unread in the table, while the kernel reads one more expert's weights.
void price_fused_shared(double table_s, Term& shared) {
  if (std::isnan(table_s)) return;
  const bool weight_bound = shared.memory_s >= shared.compute_s;
  set_profile(shared, weight_bound ? std::min(table_s, shared.memory_s) : table_s);
}

// The ops that price_projections and price_token_ops price from tokens alone (DecodeTokenOps' order).
constexpr Op kTokenOps[] = {Op::kAProj,   Op::kQBProj,   Op::kOProj,  Op::kGdnProj,      Op::kMamba2Proj,
                            Op::kKdaProj, Op::kDenseMlp, Op::kRouter, Op::kSharedExpert, Op::kLmHead};
static_assert(std::size(kTokenOps) == std::tuple_size_v<decltype(DecodeTokenOps::time_s)>);

// A pure decode rank's token ops remembered by whole tokens under a run (ProfileCurves::decode_ops), or
// null where not remembered (a prefill, a mixed batch, the MLA module's decode, tokens out of the table).
const DecodeTokenOps* remembered_decode_ops(const CostModel& cm, const ProfileWork& w) {
  const ProfileCurves& pc = profile_curves(cm);
  if (pc.decode_ops.empty() || w.prefill_seqs > 0 || w.lm_tokens != w.tokens || attn_module_prices(cm, w))
    return nullptr;
  if (!(w.tokens >= 1 && w.tokens < double(pc.decode_ops.size()) + 1)) return nullptr;
  const auto n = static_cast<size_t>(w.tokens);
  if (double(n) != w.tokens) return nullptr;
  DecodeTokenOps& slot = pc.decode_ops[n - 1];
  if (!slot.filled) {
    // Priced once by the functions a rank without the table runs, on blank terms: the same doubles.
    std::array<Term, kOpCount> blank{};
    ProfileWork decode;
    decode.tokens = decode.lm_tokens = w.tokens;
    decode.decode_seqs = 1;
    price_projections(cm, decode, blank);
    price_token_ops(cm, decode, blank, slot.fused_table_s);
    for (size_t i = 0; i < std::size(kTokenOps); ++i) {
      const Term& t = blank[size_t(kTokenOps[i])];
      slot.time_s[i] = t.source == TermSource::kProfile ? t.time_s : kNotPriced;
    }
    slot.filled = true;
  }
  return &slot;
}

void price_collectives(const ProfileCurves& pc, bool graph, std::array<Term, kOpCount>& terms) {
  for (const Op op : kCollectiveOps) {
    Term& t = terms[size_t(op)];
    if (t.count <= 0) continue;
    const ProfileCurves::CommCurve& c = graph ? pc.comm_graph[size_t(op)] : pc.comm_eager[size_t(op)];
    if (c.curve.empty()) continue;
    const double table_s = double(t.count) * c.curve.at(t.bytes_each);
    if (c.smaller_group && table_s <= t.time_s) continue;  // a bound the roofline already meets
    set_profile(t, table_s);
    t.smaller_group = c.smaller_group;
  }
}

// Outside a CUDA graph every kernel is launched from the CPU: a term takes at least count x the gap.
void eager_floor(const ProfileCurves& pc, std::array<Term, kOpCount>& terms) {
  if (pc.eager_launch_gap_s <= 0) return;
  for (int i = 0; i < kOpCount; ++i) {
    Term& t = terms[size_t(i)];
    const double floor_s = double(t.count) * pc.eager_launch_gap_s;
    if (floor_s <= t.time_s) continue;
    if (t.source == TermSource::kRoofline) t.launch_s += floor_s - t.time_s;
    t.time_s = floor_s;
  }
}

}  // namespace

int64_t cuda_graph_bucket(int64_t batch) {
  if (batch <= 1) return 1;
  if (batch <= 2) return 2;
  if (batch <= 4) return 4;
  return (batch + kGraphBucketStep - 1) / kGraphBucketStep * kGraphBucketStep;
}

void price_rank_from_profile(const CostModel& cm, const ProfileWork& w, std::array<Term, kOpCount>& terms) {
  const ProfileCurves& pc = profile_curves(cm);
  if (pc.own) {
    price_own_ops(pc, w, terms);
    return;
  }
  double fused_table_s = kNotPriced;
  if (const DecodeTokenOps* d = remembered_decode_ops(cm, w)) {
    for (size_t i = 0; i < std::size(kTokenOps); ++i)
      if (!std::isnan(d->time_s[i])) set_profile(terms[size_t(kTokenOps[i])], d->time_s[i]);
    fused_table_s = d->fused_table_s;
  } else {
    if (!attn_module_prices(cm, w)) price_projections(cm, w, terms);
    price_token_ops(cm, w, terms, fused_table_s);
  }
  price_fused_shared(fused_table_s, terms[size_t(Op::kSharedExpert)]);
  price_attention(cm, w, terms);
  price_mhc(cm, w, terms);
  price_gdn_scan(cm, w, terms);
  price_kda_scan(cm, w, terms);
  price_collectives(pc, w.graph, terms);
  if (!w.graph) eager_floor(pc, terms);
}

namespace {

// One GPU's HBM bytes per MoE layer for the rows a contiguous-layout grouped GEMM touches beyond the routed
// ones (TimingParam::kMoeContiguousAlign; docs/hardware-and-engines.md "vLLM's DeepGEMM MoE on Hopper").
// vLLM's DeepGemmExperts (fused_moe/deep_gemm_moe.py, 0.12-0.16) sizes its buffers for the worst case when
// the experts' token counts are not on the CPU (no all-to-all: deep_gemm_utils.compute_aligned_M): M_sum =
// round_up(M x top-k + local experts x (align - 1), align) rows, of which M x top-k x local / E (x the
// busiest GPU's imbalance) are routed to this GPU's experts - the moe table's work. DeepGEMM's SM90
// MGroupedContiguous kernel (deep_gemm/include/deep_gemm/impls/sm90_fp8_gemm_1d2d.cuh at 477618c, vLLM's pin)
// visits every block: its TMA loads A and A's scales and its epilogue stores D for padding blocks, only the
// MMAs are skipped (is_computation_valid); the SiLU-and-mul + FP8 quant between the GEMMs
// (silu_mul_per_token_group_quant_fp8_colmajor) runs over all M_sum rows. A row moves: GEMM1 A read h (FP8)
// + h / 128 scales (FP32), D write 2 n1 (BF16, n1 the gate + up width); the activation read 2 n1 and write i
// (FP8) + i / 128 scales; GEMM2 A read i + scales, D write 2 h; its expert id (int32, filled with -1).
double contiguous_padding_bytes(const CostModel& cm, double all_tokens, double expert_imbalance,
                                int64_t align) {
  const ModelConfig& m = cm.model;
  const double a = double(align), E = double(m.routed_experts), k = double(m.experts_per_token);
  const double local = E / cm.parallel.ep;
  const double m_sum = std::ceil((all_tokens * k + local * (a - 1)) / a) * a;
  const double routed = std::min(m_sum, all_tokens * k * local / E * expert_imbalance);
  const double h = double(m.expert_width()), i = double(m.moe_intermediate) / cm.parallel.moe_tp();
  const double n1 = double(m.mlp_projections - 1) * i;
  constexpr double kScaleBytes = 4.0 / 128, kIdBytes = 4;
  const double per_row = h * (3 + kScaleBytes) + 4 * n1 + i * (2 + 2 * kScaleBytes) + kIdBytes;
  return (m_sum - routed) * per_row;
}

}  // namespace

void price_experts_from_profile(const CostModel& cm, double all_tokens, double expert_imbalance, bool graph,
                                Term& t) {
  const ProfileCurves& pc = profile_curves(cm);
  if (pc.moe.empty() || all_tokens <= 0 || t.count <= 0) return;
  // The table routes evenly; a skewed busiest GPU does the work of expert_imbalance times the tokens.
  set_profile(t, cm.model.moe_layers() * pc.moe.at(all_tokens * expert_imbalance));
  if (pc.moe_contiguous_align > 0) {  // the padding rows' bytes at the roofline's HBM rate, per MoE layer
    const double bytes = cm.model.moe_layers() *
                         contiguous_padding_bytes(cm, all_tokens, expert_imbalance, pc.moe_contiguous_align);
    t.roofline_s = bytes / cm.hbm_bw;
    t.time_s += t.roofline_s;
    t.rank_hbm_bytes += bytes * cm.parallel.tp;
    t.hbm_bytes += bytes * cm.parallel.gpus();
  }
  if (!graph && pc.eager_launch_gap_s > 0)
    t.time_s = std::max(t.time_s, double(t.count) * pc.eager_launch_gap_s);
}

namespace {

// The profile's view of one rank: CUDA-graph replay for pure decode within the largest bucket, whose
// padded batch the GEMMs and MoE run at.
ProfileWork profile_work(const ProfileCurves& pc, const RankWork& w) {
  ProfileWork p;
  p.tokens = w.tokens;
  p.lm_tokens = w.lm_tokens;
  p.decode_seqs = w.decode_seqs;
  p.decode_tokens = w.decode_tokens;
  p.decode_context = w.decode_seqs > 0 ? w.decode_keys / w.decode_seqs : 0;
  p.prefill_seqs = w.prefill_seqs;
  p.prefill_tokens = w.prefill_tokens;
  p.prefill_keys = w.prefill_pairs;
  p.prefill_max_keys = double(w.max_prefill_keys);
  p.win_decode_context = w.decode_seqs > 0 ? w.win_decode_keys / w.decode_seqs : 0;
  p.win_prefill_keys = w.win_prefill_pairs;
  p.bs_decode_context = w.decode_seqs > 0 ? w.bs_decode_keys / w.decode_seqs : 0;
  p.bs_prefill_keys = w.bs_prefill_pairs;
  const int64_t max_bs = pc.cuda_graph_max_bs;
  p.graph = w.prefill_seqs == 0 && w.decode_seqs > 0 && int64_t(w.decode_seqs) <= max_bs;
  if (p.graph) {
    const double padded = double(cuda_graph_bucket(int64_t(w.decode_seqs)));
    p.tokens = w.tokens * padded / w.decode_seqs;
    p.lm_tokens = w.lm_tokens * padded / w.decode_seqs;
  }
  return p;
}

// Per-step CPU time (scheduling, batch preparation, and per request its output processing and streaming;
// each attention rank has its own scheduler, so the rank with the most requests sets it): hidden behind the
// GPU under overlap scheduling.
// Without it the CPU time adds to the GPU's (vLLM V1 0.10-0.13 by default, async_scheduling False:
// vllm/v1/engine/core.py EngineCore.step runs schedule(), execute_model and update_from_output in turn, and
// gpu_model_runner.py waits for the sampled tokens (the GPU -> CPU sync before _bookkeeping_sync) before
// the step returns). Where the profile names the serial step's own terms (sync_step_cpu_s, ...), pc holds
// those here (resolve_step_cpu, op_profile_resolve.cpp); else the overlapped terms, which measure the
// slowest CPU stage async runs show, not the serial part (docs/validation.md "vLLM without async
// scheduling", "vLLM's serial step time from public measurements").
double step_overhead_s(const ProfileCurves& pc, double gpu_s, size_t most_requests) {
  const double cpu_s = pc.step_cpu_overhead_s + pc.step_cpu_per_request_s * double(most_requests);
  return pc.overlap_schedule ? std::max(0.0, cpu_s - gpu_s) : cpu_s;
}

}  // namespace

void ProfileCurves::begin_step(const CostModel& cm, std::span<const std::span<const SeqWork>> per_rank,
                               StepPricing& step) const {
  step.graph = true;
  // Own profiles under DP: each rank's time from the every-group rows, for its peers' load.
  if (!own || cm.parallel.dp_attention <= 1) return;
  for (const std::span<const SeqWork>& rank : per_rank)
    step.rank_s.push_back(own_rank_time_s(*this, profile_work(*this, summarize(cm, rank))));
}

void ProfileCurves::price_rank(const CostModel& cm, const RankWork& w, size_t r, StepPricing& step,
                               Terms& terms) const {
  ProfileWork pw = profile_work(*this, w);
  if (own && cm.parallel.dp_attention > 1)
    pw.peer_load = own_peer_load(step.rank_s, r, cm.parallel.dp_attention);
  price_rank_from_profile(cm, pw, terms);
  step.graph = step.graph && pw.graph;
  step.moe_tokens += pw.tokens - w.tokens;
}

void ProfileCurves::price_experts(const CostModel& cm, double expert_imbalance, const StepPricing& step,
                                  const Term& busiest_rank_ex, Term& ex) const {
  if (own) {  // an own profile priced the busiest rank's experts as its engine runs them
    ex.time_s = busiest_rank_ex.time_s;
    ex.launch_s = 0;
    ex.source = TermSource::kProfile;
  }
  price_experts_from_profile(cm, step.moe_tokens, expert_imbalance, step.graph, ex);
}

namespace {

// The host's floor under a step that holds a context chunk (TimingParam::kEagerHostPerMlaLayerS): such a
// step runs outside a CUDA graph, each MLA layer run - the model's, and an MLA model's MTP draft passes -
// takes the host that long to launch, and the GPU cannot finish before the last launch. Decode-only steps
// (in a graph or above the largest one) keep their ops: the rows that size the term show it on context steps
// only. docs/hardware-and-engines.md "Context steps outside CUDA graphs".
double eager_host_floor_s(const ProfileCurves& pc, const CostModel& cm,
                          std::span<const std::span<const SeqWork>> per_rank, int64_t draft_layers) {
  if (pc.eager_host_per_mla_layer_s <= 0 || cm.model.attention != AttentionKind::kMla) return 0;
  const bool context = std::ranges::any_of(per_rank, [](std::span<const SeqWork> rank) {
    return std::ranges::any_of(rank, [](const SeqWork& s) { return s.prefill; });
  });
  if (!context) return 0;
  const int64_t mla_layers = int64_t(cm.model.mixer_layers(MixerKind::kAttention)) + draft_layers;
  return pc.eager_host_per_mla_layer_s * double(mla_layers);
}

}  // namespace

void ProfileCurves::finish_step(const CostModel& cm, std::span<const std::span<const SeqWork>> per_rank,
                                int64_t draft_layers, StepCost& sc) const {
  size_t most_requests = 0;
  for (const std::span<const SeqWork>& rank : per_rank) most_requests = std::max(most_requests, rank.size());
  // The floor is per decoder layer run: the model's layers, and with MTP each draft pass's layer too.
  for (int i = 0; i < kOpCount; ++i)
    if (derived_op[size_t(i)] && sc.terms[size_t(i)].source == TermSource::kProfile)
      sc.derived_s += sc.terms[size_t(i)].time_s;
  sc.gpu_floor_s = std::max(step_floor_per_layer_s * double(cm.model.layers + draft_layers),
                            eager_host_floor_s(*this, cm, per_rank, draft_layers));
  sc.floor_s = std::max(0.0, sc.gpu_floor_s - sc.total_s);
  sc.total_s += sc.floor_s;
  sc.overhead_s = step_overhead_s(*this, sc.total_s, most_requests);
  sc.total_s += sc.overhead_s;
}

}  // namespace tokenline
