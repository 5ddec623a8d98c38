// Pricing ledger ops from an OpProfile: the per-(model, parallel) curves resolved once by make_cost_model,
// which are that cost model's TimeSource (time_source.h), and the overlay they apply to one rank's terms.
// Private to cost/.
#pragma once

#include <array>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "cost/cost_model.h"
#include "cost/op_profile.h"
#include "cost/op_profile_curve.h"
#include "cost/rank_work.h"
#include "cost/step_cost.h"
#include "cost/time_source.h"

namespace tokenline {

// A pure decode rank's ops that token curves alone price (a_proj, q_b_proj, o_proj, the linear-attention
// projections, dense MLP, router, shared expert, LM head), remembered by its whole tokens: each op's time
// (NaN: no curve prices it) and the fused shared expert's table time (NaN: not fused).
struct DecodeTokenOps {
  std::array<double, 10> time_s{};
  double fused_table_s = 0;
  bool filled = false;
};

// The curves of one (model, parallel, KV layout, hardware) under one profile, and the time source they make:
// covered ops at their measured times, the rest at the roofline, plus the profile's step floor and CPU
// overhead. Times per layer, seconds.
// Which rows of the GEMM and MoE tables price one weight group (op_profile_resolve.cpp, format_rows): the
// table's dtype label, and whether they time the group's own format (measured) or another one, scaled by the
// rule (derived: each measured point x the group's roofline over the rows' format's roofline, so decode
// GEMMs bound by weight bytes scale by bytes per parameter and compute-bound prefill GEMMs run at the
// format's GEMM rate: BF16 for weight-only formats).
struct FormatRows {
  WeightGroup group = WeightGroup::kAttention;
  std::string format;  // the group's format (weight_format_name)
  std::string rows;    // the dtype label of the rows read ("" when the table has none to read)
  bool derived = false;
};

// DeepSeek-V4's attention module of one layer kind (the dsv4 table's csa or hca rows at the model's hidden
// size and heads per GPU): decode by (sequences, KV length), prefill by (sequences, new tokens each) at each
// measured cached prefix. Empty: the kind stays on the roofline.
struct Dsv4Module {
  OpGrid decode;
  std::vector<double> prefixes;  // ascending
  std::vector<OpGrid> prefill;   // prefill[i]: the rows at prefixes[i]
  // The last chunk of an end_total-token prompt (vLLM's and TensorRT-LLM's rows: prefix end_total - tokens)
  // by (sequences, tokens); empty where not measured.
  OpGrid end;
  double end_total = 0;
  // The module's prefill roofline with a cached prefix p (b sequences of x new tokens each): compute per new
  // token and per (query, key) pair, memory per new token and per key read once a sequence.
  struct PrefixRoof {
    double c_token = 0, c_pair = 0, m0 = 0, m_token = 0, m_key = 0;
    double at(double b, double x, double p) const;
  } roof;
  bool empty() const { return decode.empty() || prefill.empty(); }
  // Linear in the prefix between the two measured prefixes around it. Beyond the last, linear on: toward the
  // last-chunk row of the same new tokens where it lies beyond (a baseline of tens of thousands of tokens),
  // else with the last two prefixes' slope, never falling (the module's prefix work - the indexer's scores,
  // the compressed entries read - grows linearly with the prefix), and never below the roofline there.
  double prefill_at(double seqs, double tokens, double prefix) const;
};

struct ProfileCurves final : TimeSource {
  // GEMM-like components of ops, latency by tokens on one GPU (empty: no table covers it)
  OpCurve a_proj, q_b_proj, kv_b_proj, bmm_pre, bmm_post, o_proj;
  OpCurve o_gate;  // MLA's output gate (Kimi's g_proj, hidden -> heads / tp x v_head_dim); empty without
  OpCurve dense_up, dense_down, shared_up, shared_down, router, lm_head;
  // Linear-attention projections (GEMMs of the gemm table): GDN in_proj_qkvz, in_proj_ba, out_proj;
  // Mamba-2 in_proj, out_proj. Mamba-2's scan has no table converted: roofline (docs/layers.md).
  OpCurve gdn_in, gdn_ba, gdn_out, mamba2_in, mamba2_out;
  // KDA's (kda_proj): q, k, v and a full-rank output gate in one GEMM; the low-rank down projections (f_a,
  // g_a) with b_proj in another; each low-rank up projection (head_dim -> P / tp); o_proj.
  OpCurve kda_in, kda_down, kda_up, kda_out;
  // The GDN scan (the gdn table, where the profile has one): the causal conv1d and the recurrence, each its
  // own kernel; decode by sequences, prefill by (sequences, new tokens each). Empty: roofline.
  OpCurve gdn_conv_decode, gdn_scan_decode;
  OpGrid gdn_conv_prefill, gdn_scan_prefill;
  // The KDA scan (the kda table, where it measured the model's shard): the kernels a phase runs, summed -
  // decode the fused kernel alone where the shard has one, else conv + recurrence; prefill the q / k / v
  // convs
  // + the chunked scan. Empty: roofline.
  std::vector<OpCurve> kda_decode;
  std::vector<OpGrid> kda_prefill;
  OpCurve moe;  // fused MoE layer by the tokens entering it (all attention ranks together)
  // The shared expert fused into the MoE kernel as expert topk + 1 (shared_experts_fusion, where SGLang
  // fuses it): 0 when it runs as its own GEMMs, else (topk + 1) / topk, the kernel's rows per token over
  // the table's.
  double fused_shared_rows = 0;
  OpCurve moe_fused_shared;  // moe again, remembering whole multiples of fused_shared_rows (a run's)
  // Under a run (CostOptions::remembered_tokens), by whole tokens - 1: filled on first use.
  mutable std::vector<DecodeTokenOps> decode_ops;
  // attention by (sequences, tokens): decode x = context length, prefill x = new tokens per sequence
  OpGrid attn_decode, attn_prefill;
  OpGrid mla_module_decode;          // whole MLA block in decode (a_proj .. o_proj), when the model matches
  bool mla_module_other_kv = false;  // the module's rows were measured with another KV dtype
  double prefill_key_s = 0;  // roofline seconds per extra (query, key) pair beyond the table's causal keys
  // DSA (models with an indexer, when the rows match the model): sparse attention, indexer logits, top-k
  OpGrid dsa_attn_decode, dsa_attn_prefill, dsa_logits_decode, dsa_logits_prefill, dsa_topk_decode,
      dsa_topk_prefill;
  OpGrid dsa_indexer_decode;  // the whole decode indexer (projections, paged logits, top-k) as one module
  // The whole DSA attention block (a_proj .. o_proj with the indexer) under SGLang's TensorRT-LLM NSA backend
  // (dsa_trtllm_backend): decode by (sequences, context), prefill without a prefix by (sequences, new tokens
  // each), of a layer scoring its own top-k and (skip) of one reusing the previous full layer's; empty unless
  // the backend is chosen and the dsa table measures the model's blocks (skip: only for a model with such
  // layers).
  OpGrid dsa_block_decode, dsa_block_prefill, dsa_block_skip_decode, dsa_block_skip_prefill;
  OpCurve index_q_proj, index_k_proj;  // indexer wq_b; wk + weights_proj (one GEMM of both outputs)
  double dsa_logits_pair_s = 0, dsa_topk_pair_s = 0;  // roofline per extra (query, key) pair in prefill
  // SGLang's dense prefill of short DSA sequences (op_profile_price.cpp dense_dsa_prefill): the MLA prefill
  // attention grid (attn_prefill, prefill_key_s) prices a prefill batch whose sequences all hold at most
  // dsa_dense_prefill_keys keys; 0: the engine has no such path, every prefill is sparse.
  double dsa_dense_prefill_keys = 0;
  // DeepSeek-V4 (kCompressed): the whole attention module of its CSA and HCA layers (a window-only layer is
  // priced as an HCA one, as aiconfigurator's model does), and the two hyper-connection mixes of a layer by
  // tokens. Empty where the profile has no dsv4 rows of the model's shape.
  Dsv4Module dsv4_csa, dsv4_hca;
  // MiniMax-M3's block-sparse attention block of one layer (msa table), read as a DeepSeek-V4 module: decode
  // by (sequences, KV length), prefill by (sequences, new tokens, cached prefix). Empty without rows of the
  // model's shape.
  Dsv4Module msa;
  OpCurve mhc_pre, mhc_post;
  // collectives by message bytes: CUDA-graph path and eager path, per ledger op (empty: roofline); a curve
  // of a smaller group than the op's was measured on fewer GPUs and bounds the roofline from below
  struct CommCurve {
    OpCurve curve;
    bool smaller_group = false;
  };
  std::array<CommCurve, kOpCount> comm_graph, comm_eager;
  // own profiles (the ops table, op_profile_own.cpp): per ledger op, its whole step on one rank by
  // (sequences, keys) in decode and (sequences, new tokens each) in prefill; pair_s prices a prefill
  // prefix's extra (query, key) pairs. own: the table covers every op (an op without rows costs 0).
  struct OwnCurves {
    std::array<OpGrid, kOpCount> decode, prefill;
    std::array<double, kOpCount> pair_s{};
    std::array<double, kOpCount> fixed_s{};  // the smaller of the decode and prefill fits' intercepts
  };
  bool own = false;
  OwnCurves own_all;    // every attention group ran the shape
  OwnCurves own_alone;  // only one ran it, the others idle (DP layouts; empty where not measured)
  std::array<double, kOpCount> own_scale{};  // per op: a run's op times over the profile's (own_op_scales)
  // Per weight group priced from the gemm / moe tables: the rows read (FormatRows). derived_op: the ops whose
  // profile time comes from another format's rows by the rule; finish_step sums them into
  // StepCost::derived_s.
  std::vector<FormatRows> format_rows;
  std::array<bool, kOpCount> derived_op{};
  // timing parameters
  double step_cpu_overhead_s = 0;
  double step_cpu_per_request_s = 0;  // x the most requests one attention rank's scheduler holds in the step
  double step_floor_per_layer_s = 0;  // x the decoder layers a step runs (the model's, MTP draft passes')
  double eager_host_per_mla_layer_s = 0;  // x the MLA layers an eager step runs (TimingParam::kEagerHost...)
  bool overlap_schedule = false;
  int64_t cuda_graph_max_bs = 0;
  double eager_launch_gap_s = 0;
  int64_t moe_contiguous_align = 0;  // rows; 0: the routed rows only (TimingParam::kMoeContiguousAlign)

  // TimeSource (op_profile_price.cpp)
  bool measured() const override { return true; }
  void begin_step(const CostModel& cm, std::span<const std::span<const SeqWork>> per_rank,
                  StepPricing& step) const override;
  void price_rank(const CostModel& cm, const RankWork& w, size_t r, StepPricing& step,
                  Terms& terms) const override;
  void price_experts(const CostModel& cm, double expert_imbalance, const StepPricing& step,
                     const Term& busiest_rank_ex, Term& ex) const override;
  void finish_step(const CostModel& cm, std::span<const std::span<const SeqWork>> per_rank,
                   int64_t draft_layers, StepCost& sc) const override;
};

// The curves a profile-priced cost model holds. REQUIRES: cm.time_source->measured().
inline const ProfileCurves& profile_curves(const CostModel& cm) {
  return static_cast<const ProfileCurves&>(*cm.time_source);
}

// The bytes of one token in a collective's message: rank_collectives' hidden-state and logit messages are
// exactly tokens x this; dispatch's and combine's are about tokens x this x the expert skew (at an even
// load and a power-of-two tp, exactly tokens x this). 0 for compute ops.
double collective_bytes_per_token(const CostModel& cm, Op op);
// The message a comm table row is keyed by, per byte of a collective term's bytes_each: the table's bytes
// are bytes_each x this (dp_attention for the DP gather and scatter, whose bytes_each is one DP rank's
// share of the gathered buffer; 1 otherwise). Sources at the definition (step_cost.cpp).
double comm_table_scale(const CostModel& cm, Op op);

// Builds the curves for cm's model and layout (cm's rates set, its time source still the roofline).
std::shared_ptr<const ProfileCurves> resolve_profile(const OpProfile& profile, const CostModel& cm);

// The ops table of an own profile (`tokenline profile`): throws InputError when the profile was measured on
// another model or layout, or a row names an unknown op or phase (file:line).
void resolve_own_ops(const OpProfile& profile, const CostModel& cm, ProfileCurves& pc);

// One attention rank's step as the profile prices it.
struct ProfileWork {
  double tokens = 0;          // tokens through the GEMMs (padded up to the CUDA-graph bucket)
  double lm_tokens = 0;       // tokens whose logits are computed
  double decode_seqs = 0;     // decoding sequences (an MTP sequence's verify tokens count once)
  double decode_tokens = 0;   // their tokens (an MTP sequence's verify tokens each; not padded)
  double decode_context = 0;  // mean keys each decode token attends to
  double prefill_seqs = 0;
  double prefill_tokens = 0;
  double prefill_keys = 0;      // causal (query, key) pairs of the prefill chunks, prefix included
  double prefill_max_keys = 0;  // most keys one prefill sequence holds after its chunk
  // Window layers (RankWork's win_*): what decode_context and prefill_keys are over at most W keys.
  double win_decode_context = 0;
  double win_prefill_keys = 0;
  // MiniMax-M3's block-sparse layers (RankWork's bs_*): the same over at most the top-k blocks' keys.
  double bs_decode_context = 0;
  double bs_prefill_keys = 0;
  bool graph = false;  // replayed from a CUDA graph (pure decode within the largest bucket)
  // Own profiles under DP: the other attention groups' work over this one's, each capped at 1, mean over
  // them (own_peer_load): 0 while they idle, 1 when as busy as this one; < 0: not known, taken as 1.
  double peer_load = -1;
};

// The CUDA-graph bucket SGLang pads a decode batch of `batch` to: 1, 2, 4, 8, then multiples of 8.
int64_t cuda_graph_bucket(int64_t batch);

// Re-prices the covered ops of one rank's terms from the profile (time_s, source); roofline figures
// (flops, bytes, compute_s, memory_s) stay. No allocation.
void price_rank_from_profile(const CostModel& cm, const ProfileWork& w, std::array<Term, kOpCount>& terms);

// Prices every op of one rank's terms from the ops table (pc.own): decode part + prefill part, from the
// every-group rows and, under DP, the alone rows weighted by w.peer_load.
void price_own_ops(const ProfileCurves& pc, const ProfileWork& w, std::array<Term, kOpCount>& terms);

// One rank's scaled op time from the every-group rows (pc.own): what own_peer_load compares.
double own_rank_time_s(const ProfileCurves& pc, const ProfileWork& w);

// Rank r's peer_load among `rank_s` (each attention rank's own_rank_time_s; ranks beyond it idle) of
// `groups` attention ranks.
double own_peer_load(std::span<const double> rank_s, size_t r, int groups);

// Re-prices the routed experts from the fused-MoE table: all_tokens over every rank, the busiest EP GPU
// holding expert_imbalance times the mean.
void price_experts_from_profile(const CostModel& cm, double all_tokens, double expert_imbalance, bool graph,
                                Term& t);

}  // namespace tokenline
