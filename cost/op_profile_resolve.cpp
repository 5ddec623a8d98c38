// resolve_profile: picks, for one model and layout, the measured rows of each op's shape (or the nearest
// measured shape, scaled by the two shapes' rooflines) and turns them into curves, once per CostModel.
// Shapes are SGLang's: MLA's fused q_a/kv_a projection is replicated on every TP rank, q_b / kv_b / o_proj
// and the MLPs are split by TP, the LM head and the MoE gate run in BF16 whatever the weight dtype.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <limits>
#include <string>
#include <string_view>

#include "common/input_error.h"
#include "cost/op_profile_pricing.h"
#include "cost/time_source_transfer.h"

namespace tokenline {
namespace {

constexpr double kMsToS = 1e-3;
constexpr double kActBytes = 2;  // BF16 activations

template <size_t N>
double log_distance(const std::array<double, N>& a, const std::array<double, N>& b) {
  double d = 0;
  for (size_t i = 0; i < N; ++i) d += std::abs(std::log(a[i] / b[i]));
  return d;
}

// The measured key nearest `want` in log distance among rows passing `keep` (ties: the smaller key), or
// an empty optional-like {found=false}.
template <size_t N, class Keep, class Key>
bool nearest_key(const ProfileTable& t, const std::array<double, N>& want, Keep keep, Key key,
                 std::array<double, N>& best) {
  double best_d = std::numeric_limits<double>::infinity();
  for (size_t r = 0; r < t.rows(); ++r) {
    if (!keep(r)) continue;
    const std::array<double, N> k = key(r);
    const double d = log_distance(k, want);
    if (d < best_d || (d == best_d && k < best)) {
      best_d = d;
      best = k;
    }
  }
  return best_d < std::numeric_limits<double>::infinity();
}

OpRoofline gemm_roof(double n, double k, double flops, double bpp, double bw) {
  OpRoofline r;
  r.cx = 2 * n * k / flops;
  r.m0 = n * k * bpp / bw;
  r.mx = (n + k) * kActBytes / bw;
  return r;
}

struct Rates {
  double gemm = 0, bf16_gemm = 0, attention = 0, hbm = 0, link = 0, bpp = 1;
};

Rates rates_of(const CostModel& cm) {
  const double e = cm.hardware.efficiency.gemm;
  return {cm.gemm_flops,      cm.hardware.peak_flops(Dtype::kBf16) * e,
          cm.attention_flops, cm.hbm_bw,
          cm.link_bw,         cm.weight_bytes_per_param};
}

// ---- weight formats: which rows of a GEMM or MoE table (dtype in column 0) price a weight group ----

// The dtype labels of aiconfigurator's collections that time a format's own kernel, best first: per-tensor
// FP8 takes the "fp8" rows where a table has them, else the block-FP8 ones (vLLM's per-tensor kernel is not
// its block kernel, but both multiply FP8 by FP8 over the same bytes); NVFP4 "nvfp4" (SGLang's
// flashinfer/cutedsl and vLLM's trtllm FP4 MoE, the FP4 GEMMs), with BF16 activations (ModelOpt W4A16_NVFP4)
// "w4a16_nvfp4" (no shipped table has them: the BF16 rows at NVFP4 bytes); MXFP4 "w4a16_mxfp4" (gpt-oss
// experts: vLLM's mxfp4 MoE, SGLang's triton MoE on Hopper); MXFP8 the block-FP8 rows (no collection times
// it: E4M3 x E4M3 with a scale per 32 values along K); INT4 and INT8 weight-only "int4_wo" / "int8_wo"
// (Marlin). An FP8 format with BF16 activations (w8a16) has no rows of its own.
std::vector<std::string_view> own_rows(const WeightFormat& f) {
  switch (f.kind) {
    case WeightFormatKind::kBf16:
    case WeightFormatKind::kFp16:
    case WeightFormatKind::kFp32:
      return {"bfloat16"};
    case WeightFormatKind::kFp8PerTensor:
    case WeightFormatKind::kFp8PerChannel:
      if (f.weight_only) return {};
      return {"fp8", "fp8_block"};
    case WeightFormatKind::kFp8Block:
      if (f.weight_only) return {};
      return {"fp8_block"};
    case WeightFormatKind::kNvfp4:
      if (f.weight_only) return {"w4a16_nvfp4"};  // ModelOpt W4A16_NVFP4: aiconfigurator's label
      return {"nvfp4"};
    case WeightFormatKind::kMxfp4:
      return {"w4a16_mxfp4"};
    case WeightFormatKind::kMxfp8:  // no MXFP8 rows: the block-scaled FP8 ones, the same bytes nearly
      return {"fp8_block", "fp8"};
    case WeightFormatKind::kInt4:
      if (!f.weight_only) return {};
      return {"int4_wo"};
    case WeightFormatKind::kInt8:
      if (!f.weight_only) return {};
      return {"int8_wo"};
  }
  return {};
}

// The format a dtype label times (the rows' side of the rule).
WeightFormat rows_format(std::string_view rows) {
  if (rows == "fp8") return {.kind = WeightFormatKind::kFp8PerTensor};
  if (rows == "fp8_block") return {.kind = WeightFormatKind::kFp8Block, .group = 128};
  return {.kind = WeightFormatKind::kBf16};
}

// The group's format: the one most of its parameters are in (a checkpoint's exclusions keep some of a group
// in BF16: DeepSeek-V3.1-NVFP4's attention holds q_a / q_b / kv_a / kv_b in BF16 and o_proj in NVFP4); pure
// when every parameter is. Presets: the model's weight dtype (FP8 with its block edge).
std::pair<WeightFormat, bool> group_format(const ModelConfig& m, WeightGroup g) {
  if (!m.weights.per_group) {
    if (m.weight_dtype == Dtype::kFp8 && m.weight_block > 0)
      return {{.kind = WeightFormatKind::kFp8Block, .group = m.weight_block}, true};
    return {weight_format_of(m.weight_dtype), true};
  }
  constexpr double kMajority = 0.5;
  const double s = m.weights.share(g);
  return {s >= kMajority ? m.weights.quantized_of(g) : m.weights.unquantized, s <= 0 || s >= 1};
}

// Whether t has rows of that dtype passing `usable` (the MoE's: of the layout's routing, TP and EP).
template <class Usable>
bool has_rows(const ProfileTable& t, std::string_view rows, Usable usable) {
  for (size_t i = 0; i < t.rows(); ++i)
    if (t.text_at(i, 0) == rows && usable(i)) return true;
  return false;
}

// The rows pricing group g's GEMMs in table t, and the two rates scaling them: `want` the group's (its
// bytes per parameter and GEMM rate on this hardware, exclusions included), `got` the rows' format's.
// Where the table has none of the format's own rows, the rows of the format its math runs in: BF16 for
// weight-only formats (W4A16, Marlin; FP4 on a GPU without an FP4 rate dequantizes to BF16), block-FP8,
// then per-tensor FP8, then BF16 for FP8 and FP4 math - the nearest measured kernel, scaled by the rule.
struct PickedRows {
  FormatRows info;
  Rates want, got;
};

template <class Usable>
PickedRows pick_rows(const ProfileTable& t, const CostModel& cm, WeightGroup g, Usable usable) {
  const auto [format, pure] = group_format(cm.model, g);
  PickedRows p;
  p.info.group = g;
  p.info.format = weight_format_name(format);
  p.want = rates_of(cm);
  p.want.gemm = cm.gemm_rate(g);
  p.want.bpp = cm.bpp(g);
  p.got = p.want;
  for (std::string_view r : own_rows(format)) {
    if (!has_rows(t, r, usable)) continue;
    p.info.rows = std::string(r);
    if (!pure) {  // the majority format's rows, scaled to the group's mix of formats
      p.got.gemm = weight_gemm_peak_flops(format, cm.hardware) * cm.hardware.efficiency.gemm;
      p.got.bpp = weight_bytes_per_param(format, cm.model.hidden);
    }
    return p;
  }
  const double rate = weight_gemm_peak_flops(format, cm.hardware);
  const std::vector<std::string_view> nearest =
      rate <= cm.hardware.peak_flops_bf16 ? std::vector<std::string_view>{"bfloat16"}
                                          : std::vector<std::string_view>{"fp8_block", "fp8", "bfloat16"};
  for (std::string_view r : nearest) {
    if (!has_rows(t, r, usable)) continue;
    const WeightFormat measured = rows_format(r);
    p.info.rows = std::string(r);
    p.info.derived = true;
    p.got.gemm = weight_gemm_peak_flops(measured, cm.hardware) * cm.hardware.efficiency.gemm;
    p.got.bpp = weight_bytes_per_param(measured, cm.model.hidden);
    return p;
  }
  return p;
}

PickedRows pick_rows(const ProfileTable& t, const CostModel& cm, WeightGroup g) {
  return pick_rows(t, cm, g, [](size_t) { return true; });
}

// The BF16 rows at BF16 rates (the LM head and the MoE gate, BF16 in SGLang whatever the weight format).
PickedRows bf16_rows(const CostModel& cm) {
  PickedRows p;
  p.info.rows = "bfloat16";
  p.want = rates_of(cm);
  p.want.gemm = p.want.bf16_gemm;
  p.want.bpp = 2;
  p.got = p.want;
  return p;
}

// A GEMM of n x k weights by tokens from the picked rows (the nearest measured shape, scaled by the two
// shapes' rooflines and, for derived rows, the two formats').
OpCurve gemm_curve(const ProfileTable& t, double n, double k, const PickedRows& p) {
  if (t.empty() || n < 1 || k < 1 || p.info.rows.empty()) return {};
  const std::string_view dtype = p.info.rows;
  auto keep = [&](size_t i) { return t.text_at(i, 0) == dtype; };
  std::array<double, 2> nk{};
  if (!nearest_key<2>(
          t, {n, k}, keep,
          [&](size_t i) {
            return std::array<double, 2>{t.at(i, 1), t.at(i, 2)};
          },
          nk))
    return {};
  std::vector<std::pair<double, double>> pts;
  for (size_t i = 0; i < t.rows(); ++i)
    if (keep(i) && t.at(i, 1) == nk[0] && t.at(i, 2) == nk[1])
      pts.emplace_back(t.at(i, 0), t.at(i, 3) * kMsToS);
  return make_curve(std::move(pts), 1, gemm_roof(n, k, p.want.gemm, p.want.bpp, p.want.hbm),
                    gemm_roof(nk[0], nk[1], p.got.gemm, p.got.bpp, p.got.hbm));
}

OpRoofline moe_roof(const std::array<double, 4>& s, double moe_tp, double ep, const Rates& r) {
  const double h = s[0], inter = s[1], topk = s[2], experts = s[3];
  OpRoofline roof;
  roof.cx = topk * 2 * 3 * h * inter / (moe_tp * ep) / r.gemm;
  roof.m0 = experts / ep * 3 * h * inter / moe_tp * r.bpp / r.hbm;
  roof.mx = topk / ep * (2 * h + 3 * inter / moe_tp) * kActBytes / r.hbm;
  return roof;
}

// A fused-MoE layer's roofline (seconds) at `tokens` tokens reading only the experts they reach: under
// balanced routing a token misses a given expert with probability 1 - topk/experts, so `tokens` tokens
// reach experts x (1 - (1 - topk/experts)^tokens) of them (all, past a few hundred tokens at top-8 of
// 256). A shape the table lacks is scaled from the nearest measured one by this ratio: the measured rows
// read only the experts their tokens reached too, and scaling by every expert's weights (moe_roof's m0)
// priced Mixtral's 8 experts at 16 tokens faster than their weights can be read.
double moe_reach_roof_s(const std::array<double, 4>& s, double moe_tp, double ep, const Rates& r,
                        double tokens) {
  const double topk = s[2], experts = s[3];
  OpRoofline roof = moe_roof(s, moe_tp, ep, r);
  roof.m0 *= 1 - std::pow(1 - std::min(1.0, topk / experts), tokens);  // the share of experts reached
  return roof.at(1, tokens);
}

// Where SGLang fuses the shared expert into the MoE kernel (models/deepseek_v2.py,
// determine_num_fused_shared_experts, 0.5.x): DeepseekV3ForCausalLM's shape - 256 routed experts, one
// shared - and no DeepEP all-to-all, which turns it off by default (tokenline: MoE EP 1; with EP > 1 the
// shared expert stays separate). Priced per attention rank, so only without DP attention (with it the
// kernel runs every rank's tokens; tokenline then keeps the shared expert's own GEMMs).
bool fuses_shared_expert(const CostModel& cm) {
  constexpr int kDeepSeekV3RoutedExperts = 256;  // the allow-list's n_routed_experts for DeepSeek-V3 / R1
  const ModelConfig& m = cm.model;
  return m.routed_experts == kDeepSeekV3RoutedExperts && m.shared_experts == 1 && m.experts_per_token > 0 &&
         cm.parallel.ep == 1 && cm.parallel.dp_attention == 1;
}

// The moe table's routing name for a routing alpha: 0 "balanced", else "power_law_<alpha>" (%g).
std::string routing_name(double alpha) {
  if (alpha <= 0) return "balanced";
  char buf[32];
  std::snprintf(buf, sizeof buf, "power_law_%g", alpha);
  return buf;
}

// MXFP4 experts on Marlin (timing moe_w4a16_marlin = 1): vLLM's get_mxfp4_backend
// (vllm/model_executor/layers/quantization/mxfp4.py, 0.10-0.18) returns Mxfp4Backend.MARLIN when
// VLLM_MXFP4_USE_MARLIN=1 is set - fused_marlin_moe with FP4 (E2M1) weights and E8M0 scales per 32 - where on
// Hopper it would otherwise run the Triton matmul_ogs kernels. The same fused_marlin_moe kernel is what the
// int4_wo rows time (aiconfigurator's vllm_marlin_moe: compressed-tensors INT4, group 32, BF16 scales), so
// those rows price it, scaled by the two formats' bytes (both multiply in BF16). Since issue 44's MoE backend
// tables, `sim --moe-backend marlin` prices it from Marlin's own MXFP4 rows where a profile has them
// (h200-vllm's moe_marlin.csv); this parameter keeps the INT4-row pricing selectable.
// Kimi-K2.5's compressed-tensors group_size: the int4_wo rows' shape.
constexpr int64_t kMarlinRowsGroup = 32;
template <class Usable>
void take_marlin_rows(const ProfileTable& t, const CostModel& cm, Usable usable, PickedRows& p) {
  if (group_format(cm.model, WeightGroup::kRoutedExperts).first.kind != WeightFormatKind::kMxfp4) return;
  if (!has_rows(t, "int4_wo", usable)) return;
  const WeightFormat int4{.kind = WeightFormatKind::kInt4, .group = kMarlinRowsGroup, .weight_only = true};
  p.info.rows = "int4_wo";
  p.info.derived = true;
  p.got.gemm = weight_gemm_peak_flops(int4, cm.hardware) * cm.hardware.efficiency.gemm;
  p.got.bpp = weight_bytes_per_param(int4, cm.model.hidden);
}

// Columns: dtype, routing | tokens, hidden, inter, topk, experts, moe_tp, moe_ep, latency_ms. The rows of the
// routed experts' format (pick_rows), of the profile's routing and the layout's MoE TP and EP; Marlin's rows
// for MXFP4 experts when `marlin` (take_marlin_rows).
OpCurve moe_curve(const ProfileTable& t, const CostModel& cm, double routing_alpha, bool marlin,
                  PickedRows& picked) {
  const ModelConfig& m = cm.model;
  // The tables time gated experts (gate_up and down GEMMs); a plain two-matrix expert (Nemotron-H's squared
  // ReLU) is priced by its roofline rather than by a kernel it does not run.
  if (t.empty() || !m.is_moe() || m.mlp_projections != 3) return {};
  const std::string routing = routing_name(routing_alpha);
  const double mtp = cm.parallel.moe_tp(), ep = cm.parallel.ep;
  auto layout = [&](size_t i) { return t.text_at(i, 1) == routing && t.at(i, 5) == mtp && t.at(i, 6) == ep; };
  picked = pick_rows(t, cm, WeightGroup::kRoutedExperts, layout);
  if (marlin) take_marlin_rows(t, cm, layout, picked);
  if (picked.info.rows.empty()) return {};
  const std::string_view dtype = picked.info.rows;
  auto keep = [&](size_t i) { return t.text_at(i, 0) == dtype && layout(i); };
  auto key = [&](size_t i) { return std::array<double, 4>{t.at(i, 1), t.at(i, 2), t.at(i, 3), t.at(i, 4)}; };
  const std::array<double, 4> want{double(m.hidden), double(m.moe_intermediate), double(m.experts_per_token),
                                   double(m.routed_experts)};
  std::array<double, 4> got{};
  if (!nearest_key<4>(t, want, keep, key, got)) return {};
  std::vector<std::pair<double, double>> pts;
  for (size_t i = 0; i < t.rows(); ++i) {
    if (!keep(i) || key(i) != got) continue;
    const double tokens = t.at(i, 0), s = t.at(i, 7) * kMsToS;
    pts.emplace_back(tokens,
                     s * moe_reach_roof_s(want, mtp, ep, picked.want, tokens) /
                         moe_reach_roof_s(got, mtp, ep, picked.got, tokens));  // 1 at a measured shape
  }
  const OpRoofline roof = moe_roof(want, mtp, ep, picked.want);  // beyond the last row: every expert reached
  return make_curve(std::move(pts), 1, roof, roof);
}

// MLA absorbed batched GEMMs (pre: q_nope x W_UK, post: latent x W_UV) by tokens, heads per GPU.
OpCurve bmm_curve(const ProfileTable& t, const CostModel& cm, std::string_view op) {
  const ModelConfig& m = cm.model;
  if (t.empty()) return {};
  const Rates r = rates_of(cm);
  std::string_view dtype = m.weight_dtype == Dtype::kFp8 ? "fp8" : "bfloat16";
  // A collection without FP8 BMM rows (TensorRT-LLM on B200 times them in BF16 only): its BF16 rows.
  bool any = false;
  for (size_t i = 0; i < t.rows() && !any; ++i) any = t.text_at(i, 0) == op && t.text_at(i, 1) == dtype;
  if (!any) dtype = "bfloat16";
  const double a = op == "pre" ? double(m.qk_nope_head_dim) : double(m.kv_lora_rank);
  const double c = op == "pre" ? double(m.kv_lora_rank) : double(m.v_head_dim);
  auto roof = [&](double heads) {
    OpRoofline x;
    x.cx = heads * 2 * a * c / r.gemm;
    x.m0 = heads * a * c * r.bpp / r.hbm;
    x.mx = heads * (a + c) * kActBytes / r.hbm;
    return x;
  };
  auto keep = [&](size_t i) { return t.text_at(i, 0) == op && t.text_at(i, 1) == dtype; };
  const double heads = double(m.heads) / cm.parallel.tp;
  std::array<double, 1> got{};
  if (!nearest_key<1>(
          t, {heads}, keep, [&](size_t i) { return std::array<double, 1>{t.at(i, 1)}; }, got))
    return {};
  std::vector<std::pair<double, double>> pts;
  for (size_t i = 0; i < t.rows(); ++i)
    if (keep(i) && t.at(i, 1) == got[0]) pts.emplace_back(t.at(i, 0), t.at(i, 2) * kMsToS);
  return make_curve(std::move(pts), 1, roof(heads), roof(got[0]));
}

// A (batch, tokens) grid from the rows passing `keep`; b_col/x_col/lat_col index numeric columns.
template <class Keep>
OpGrid make_grid(const ProfileTable& t, Keep keep, int b_col, int x_col, int lat_col, const OpRoofline& roof,
                 const OpRoofline& measured) {
  std::vector<std::pair<double, std::vector<std::pair<double, double>>>> by_b;
  for (size_t i = 0; i < t.rows(); ++i) {
    if (!keep(i)) continue;
    const double b = t.at(i, b_col);
    size_t j = 0;
    while (j < by_b.size() && by_b[j].first != b) ++j;
    if (j == by_b.size()) by_b.push_back({b, {}});
    by_b[j].second.emplace_back(t.at(i, x_col), t.at(i, lat_col) * kMsToS);
  }
  std::sort(by_b.begin(), by_b.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  OpGrid g;
  for (auto& [b, pts] : by_b) g.add_row(make_curve(std::move(pts), b, roof, measured));
  return g;
}

std::string_view kv_dtype_name(KvLayout layout) {
  switch (layout) {
    case KvLayout::kBf16:
      return "bfloat16";
    case KvLayout::kFp8DsMla:
    case KvLayout::kFp8E4m3:
    case KvLayout::kNvfp4DsMla:  // no FP4 rows measured: the FP8 kernel is the nearest
      return "fp8";
  }
  return "fp8";
}

// The GEMMs of each weight group from the rows of its format (pick_rows); the router and the LM head from
// the BF16 rows. Records the rows each group read and the ops priced from another format's rows.
void resolve_gemms(const ProfileTable& g, const CostModel& cm, ProfileCurves& pc) {
  const ModelConfig& m = cm.model;
  const double tp = cm.parallel.tp, h = double(m.hidden);
  auto rows = [&](WeightGroup group, std::initializer_list<Op> ops) {
    PickedRows p = pick_rows(g, cm, group);
    for (Op op : ops) pc.derived_op[size_t(op)] = pc.derived_op[size_t(op)] || p.info.derived;
    if (!p.info.rows.empty()) pc.format_rows.push_back(p.info);
    return p;
  };
  const PickedRows attn = rows(WeightGroup::kAttention, {Op::kAProj, Op::kQBProj, Op::kOProj});
  if (m.attention == AttentionKind::kMla) {
    pc.a_proj = gemm_curve(g, double(m.q_lora_rank + m.kv_lora_rank + m.qk_rope_head_dim), h, attn);
    pc.q_b_proj = gemm_curve(g, m.heads / tp * double(m.qk_nope_head_dim + m.qk_rope_head_dim),
                             double(m.q_lora_rank > 0 ? m.q_lora_rank : m.hidden), attn);
    pc.kv_b_proj =
        gemm_curve(g, m.heads / tp * double(m.qk_nope_head_dim + m.v_head_dim), double(m.kv_lora_rank), attn);
    pc.o_proj = gemm_curve(g, h, m.heads / tp * double(m.v_head_dim), attn);
    if (m.attn_output_gate) pc.o_gate = gemm_curve(g, m.heads / tp * double(m.v_head_dim), h, attn);
  } else if (m.attention == AttentionKind::kGqa) {
    // (DeepSeek-V4's projections, kCompressed, stay on the roofline: its grouped wo_a has no table.)
    const double kvh = std::max(1.0, m.kv_heads / tp), vd = double(m.gqa_value_dim(false));
    const double q_heads = m.heads / tp * (m.attn_output_gate ? 2 : 1);  // the gate rides on q_proj
    pc.a_proj = gemm_curve(g, (q_heads + kvh) * double(m.head_dim) + kvh * vd, h, attn);
    pc.o_proj = gemm_curve(g, h, m.heads / tp * vd, attn);
  }
  if (m.mixer_layers(MixerKind::kGatedDeltaNet) > 0) {  // SGLang's Qwen3-Next layer: three GEMMs
    const GdnShape& d = m.gdn;
    const double key = double(d.key_heads) * double(d.key_head_dim);
    const double value = double(d.value_heads) * double(d.value_head_dim);
    const PickedRows gdn = rows(WeightGroup::kAttention, {Op::kGdnProj});
    pc.gdn_in = gemm_curve(g, (2 * key + 2 * value) / tp, h, gdn);
    pc.gdn_ba = gemm_curve(g, 2.0 * d.value_heads / tp, h, gdn);
    pc.gdn_out = gemm_curve(g, h, value / tp, gdn);
  }
  if (m.mixer_layers(MixerKind::kKda) > 0) {  // aiconfigurator's Kimi-K3 KDA GEMMs (095f58a kimi_k3.py)
    const KdaShape& k = m.kda;
    const double p = double(k.width()), d = double(k.head_dim);
    const PickedRows kda = rows(WeightGroup::kAttention, {Op::kKdaProj});
    pc.kda_in = gemm_curve(g, (k.full_rank_gate ? 4 : 3) * p / tp, h, kda);
    pc.kda_down = gemm_curve(g, (k.full_rank_gate ? 1 : 2) * d + k.heads / tp, h, kda);
    pc.kda_up = gemm_curve(g, p / tp, d, kda);
    pc.kda_out = gemm_curve(g, h, p / tp, kda);
  }
  if (m.mixer_layers(MixerKind::kMamba2) > 0) {
    const Mamba2Shape& d = m.mamba;
    const double inner = double(d.inner());
    const PickedRows mamba = rows(WeightGroup::kAttention, {Op::kMamba2Proj});
    pc.mamba2_in =
        gemm_curve(g, (2 * inner + 2.0 * d.groups * double(d.state_size) + d.heads) / tp, h, mamba);
    pc.mamba2_out = gemm_curve(g, h, inner / tp, mamba);
  }
  if (m.mlp_dense_layers() > 0) {
    const PickedRows dense = rows(WeightGroup::kDenseMlp, {Op::kDenseMlp});
    // gate and up fused (a plain MLP, Nemotron-H's squared ReLU: up only)
    pc.dense_up = gemm_curve(g, (m.mlp_projections - 1) * double(m.dense_intermediate) / tp, h, dense);
    pc.dense_down = gemm_curve(g, h, double(m.dense_intermediate) / tp, dense);
  }
  const PickedRows bf16 = bf16_rows(cm);
  if (m.is_moe()) {
    pc.router = gemm_curve(g, double(m.routed_experts), h, bf16);
    const double sh = double(m.moe_intermediate) * m.shared_experts;
    if (sh > 0) {
      const PickedRows shared = rows(WeightGroup::kSharedExperts, {Op::kSharedExpert});
      pc.shared_up = gemm_curve(g, (m.mlp_projections - 1) * sh / tp, h, shared);
      pc.shared_down = gemm_curve(g, h, sh / tp, shared);
    }
  }
  pc.lm_head = gemm_curve(g, double(m.vocab) / tp, h, bf16);
}

struct AttnShape {
  double heads = 0, kv_heads = 0, head_dim = 0;  // per GPU
  double mla_qk = 0, mla_v = 0;  // MLA prefill: per-head query-key and value widths (0: the model's)
  double gqa_v = 0;              // GQA: the value width (0: head_dim; MiMo-V2-Flash's values are narrower)
};

// The per-head widths the MLA prefill rows were measured at: DeepSeek-V3's causal MHA, query-key 128 + 64
// RoPE, value 128 (scripts/build-profile build_mla: FlashAttention-3 "over the same causal MHA (192 / 128
// head dims)"). A model of other widths (GLM-5: 192 + 64, 256) scales from them by its roofline.
constexpr double kMlaTableQk = 192, kMlaTableV = 128;

// Attention roofline by (sequences b, tokens x): decode reads x cached keys per sequence; prefill attends
// causally over x new tokens (b x (x^2 + x) / 2 pairs).
OpRoofline attn_roof(const CostModel& cm, const AttnShape& s, bool decode) {
  const ModelConfig& m = cm.model;
  const bool mla = m.attention == AttentionKind::kMla;
  const double f = cm.attention_flops, bw = cm.hbm_bw;
  const double kv_bytes = double(cm.kv_bytes_token_layer) * (mla ? 1 : s.kv_heads / std::max(1, m.kv_heads));
  OpRoofline r;
  if (decode) {
    const double gqa_v = s.gqa_v > 0 ? s.gqa_v : s.head_dim;
    const double per_key = mla ? s.heads * 2 * double(2 * m.kv_lora_rank + m.qk_rope_head_dim)
                               : s.heads * 2 * (s.head_dim + gqa_v);
    r.cbx = per_key / f;
    r.mbx = kv_bytes / bw;
    return r;
  }
  const double qk = !mla           ? s.head_dim
                    : s.mla_qk > 0 ? s.mla_qk
                                   : double(m.qk_nope_head_dim + m.qk_rope_head_dim);
  const double v = !mla ? (s.gqa_v > 0 ? s.gqa_v : s.head_dim) : s.mla_v > 0 ? s.mla_v : double(m.v_head_dim);
  const double per_pair = s.heads * 2 * (qk + v);
  r.cbx = r.cbxx = per_pair / 2 / f;
  r.mbx = (s.heads * (qk + v) * 2 + s.kv_heads * (qk + v)) * kActBytes / bw;
  return r;
}

AttnShape attn_shape(const CostModel& cm) {
  const ModelConfig& m = cm.model;
  const double tp = cm.parallel.tp;
  if (m.attention == AttentionKind::kMla) return {m.heads / tp, m.heads / tp, double(m.qk_nope_head_dim)};
  return {
      m.heads / tp, std::max(1.0, m.kv_heads / tp), double(m.head_dim), 0, 0, double(m.gqa_value_dim(false))};
}

OpGrid attention_grid(const OpProfile& p, const CostModel& cm, bool decode) {
  // DeepSeek-V4's compressed attention (one 512-wide KV head over windows and compressed entries) matches
  // no MLA or GQA table: the roofline prices it.
  if (cm.model.attention == AttentionKind::kCompressed) return {};
  const bool mla = cm.model.attention == AttentionKind::kMla;
  const ProfileTable& t =
      p.table(mla ? (decode ? ProfileTableKind::kMlaDecode : ProfileTableKind::kMlaPrefill)
                  : (decode ? ProfileTableKind::kGqaDecode : ProfileTableKind::kGqaPrefill));
  if (t.empty()) return {};
  const std::string_view kv = kv_dtype_name(cm.kv_layout);
  const AttnShape want = attn_shape(cm);
  const int shape_cols = mla ? 1 : 3;  // mla: heads; gqa: heads, kv_heads, head_dim
  auto key = [&](size_t i) {
    return std::array<double, 3>{t.at(i, 0), mla ? want.kv_heads : t.at(i, 1),
                                 mla ? want.head_dim : t.at(i, 2)};
  };
  auto kv_ok = [&](size_t i) { return t.text_at(i, 0) == kv; };
  std::array<double, 3> got{};
  if (!nearest_key<3>(t, {want.heads, want.kv_heads, want.head_dim}, kv_ok, key, got)) return {};
  const AttnShape measured{got[0], got[1], got[2], kMlaTableQk, kMlaTableV};
  auto keep = [&](size_t i) { return kv_ok(i) && key(i) == got; };
  return make_grid(t, keep, shape_cols, shape_cols + 1, shape_cols + 2, attn_roof(cm, want, decode),
                   attn_roof(cm, measured, decode));
}

std::string_view comm_table_op(Op op, bool graph) {
  switch (op_collective(op)) {
    case CollectiveKind::kAllReduce:
      return graph ? "custom_ar_graph" : "custom_ar_eager";
    case CollectiveKind::kAllGather:
      return "nccl_all_gather";
    case CollectiveKind::kReduceScatter:
      return "nccl_reduce_scatter";
    case CollectiveKind::kAllToAll:
      return "nccl_alltoall";
    case CollectiveKind::kNone:
      break;
  }
  return "";
}

// The collective's rows at the group's GPU count; for a group the table did not measure on the same NVLink
// domain (gb200 / gb300 measure 2 and 4 GPUs, one tray, where an NVL72 rank group spans up to 72), the rows
// of the largest group it measured below it, marked smaller_group: a ring, tree or pairwise collective of the
// same whole buffer (the tables' key) takes no less time over more GPUs - more steps, each no larger - so
// those rows bound it from below (price_collectives), where the roofline alone (one launch and the bytes at
// link rate) would price 32 GPUs below what the table measured on 4.
ProfileCurves::CommCurve comm_curve(const ProfileTable& t, const CostModel& cm, Op op, bool graph) {
  const int gpus = collective_group(op, cm.parallel);
  if (t.empty() || gpus < 2 || cm.link == Link::kIb) return {};  // the tables measure one NVLink node
  const std::string_view name = comm_table_op(op, graph);
  double measured = 0;  // the group the rows are read at: gpus, else the largest measured below it
  for (size_t i = 0; i < t.rows(); ++i)
    if (t.text_at(i, 0) == name && t.at(i, 0) <= gpus) measured = std::max(measured, t.at(i, 0));
  if (measured < 2) return {};
  // Rows keyed by the ledger's message: a row of x bytes prices a term whose bytes_each is x / scale (the
  // lookup at bytes_each is the table's at bytes_each x scale, the size the row was measured at).
  const double scale = comm_table_scale(cm, op);
  std::vector<std::pair<double, double>> pts;
  for (size_t i = 0; i < t.rows(); ++i)
    if (t.text_at(i, 0) == name && t.at(i, 0) == measured)
      pts.emplace_back(t.at(i, 1) / scale, t.at(i, 2) * kMsToS);
  OpRoofline roof;
  roof.mx = 1 / cm.link_bw;
  return {make_curve(std::move(pts), 1, roof, roof), measured < gpus};
}

// The whole MLA decode block (measured on DeepSeek-V3's dimensions: used only when the model's hidden
// size, q_lora rank and heads per GPU match the rows), from the rows of the model's KV dtype, else of any
// other (`kv` says which; the caller corrects the attention part).
OpGrid resolve_mla_module(const OpProfile& p, const CostModel& cm, std::string& kv) {
  const ProfileTable& t = p.table(ProfileTableKind::kMlaModuleDecode);
  const ModelConfig& m = cm.model;
  // A measured module has no output gate: Kimi's gated MLA stays on its GEMM curves.
  if (t.empty() || m.attention != AttentionKind::kMla || m.attn_output_gate) return {};
  const double heads = double(m.heads) / cm.parallel.tp;
  auto shape_ok = [&](size_t i) {
    return t.at(i, 0) == double(m.hidden) && t.at(i, 1) == double(m.q_lora_rank) && t.at(i, 2) == heads;
  };
  kv = std::string(kv_dtype_name(cm.kv_layout));
  bool found = false;
  for (size_t i = 0; i < t.rows() && !found; ++i) found = shape_ok(i) && t.text_at(i, 0) == kv;
  for (size_t i = 0; i < t.rows() && !found; ++i)
    if (shape_ok(i)) {
      kv = std::string(t.text_at(i, 0));
      found = true;
    }
  if (!found) return {};
  auto keep = [&](size_t i) { return shape_ok(i) && t.text_at(i, 0) == kv; };
  OpRoofline roof = attn_roof(cm, attn_shape(cm), true);
  return make_grid(t, keep, 3, 4, 5, roof, roof);
}

// ---- DSA: GLM-5's sparse attention, indexer logits and top-k (rows must match the model's hidden size) ----

struct DsaRoofs {
  OpRoofline attn_decode, attn_prefill, logits_decode, logits_prefill, topk_decode, topk_prefill;
};

// heads: attention heads per GPU. Sparse attention reads top-k keys per query whatever the context (so no
// slope in context); the indexer scores every cached key per query (replicated, not split by TP).
DsaRoofs dsa_roofs(const CostModel& cm, double heads) {
  const ModelConfig& m = cm.model;
  const double topk = double(m.indexer_topk),
               per_key = heads * 2 * double(2 * m.kv_lora_rank + m.qk_rope_head_dim);
  const double idx_per_pair = 2 * double(m.indexer_heads) * double(m.indexer_head_dim);
  constexpr double kScoreBytes = 4;  // FP32 logits written by the indexer, read by top-k
  DsaRoofs r;
  r.attn_decode.cb = topk * per_key / cm.attention_flops;
  r.attn_decode.mb = topk * double(cm.kv_bytes_token_layer) / cm.hbm_bw;
  r.attn_prefill.cbx = r.attn_decode.cb;
  r.attn_prefill.mbx = r.attn_decode.mb;
  r.logits_decode.cbx = idx_per_pair / cm.indexer_flops;
  r.logits_decode.mbx = double(cm.indexer_read_bytes_token_layer) / cm.hbm_bw;
  r.logits_prefill.cbx = r.logits_prefill.cbxx = idx_per_pair / 2 / cm.indexer_flops;
  r.topk_decode.mbx = kScoreBytes / cm.hbm_bw;
  r.topk_prefill.mbx = r.topk_prefill.mbxx = kScoreBytes / 2 / cm.hbm_bw;
  return r;
}

// The rows of one DSA part at the nearest measured heads per GPU. Rows must match the model's hidden size,
// except the decode indexer module's (any_hidden): it reads every cached index key per sequence, a cost its
// shape shares across DSA models (index head dim 128, FP8 keys), and its roofline does not depend on the
// heads, so those rows price it unscaled.
OpGrid dsa_grid(const ProfileTable& t, const CostModel& cm, std::string_view module, std::string_view phase,
                OpRoofline DsaRoofs::*roof, bool any_hidden = false) {
  auto keep_part = [&](size_t i) {
    return t.text_at(i, 0) == module && t.text_at(i, 1) == phase &&
           (any_hidden || t.at(i, 0) == double(cm.model.hidden));
  };
  const double heads = double(cm.model.heads) / cm.parallel.tp;
  std::array<double, 1> got{};
  if (!nearest_key<1>(
          t, {heads}, keep_part, [&](size_t i) { return std::array<double, 1>{t.at(i, 1)}; }, got))
    return {};
  auto keep = [&](size_t i) { return keep_part(i) && t.at(i, 1) == got[0]; };
  return make_grid(t, keep, 2, 3, 4, dsa_roofs(cm, heads).*roof, dsa_roofs(cm, got[0]).*roof);
}

// The block rows price a model of their hidden size: module block_trtllm its layers that score their own
// top-k, block_skip_trtllm (needed only by a model with such layers) those that reuse the previous one's.
bool block_rows_price(const ProfileTable& t, const ModelConfig& m) {
  if (!m.has_indexer()) return false;
  auto has = [&](std::string_view module) {
    for (size_t i = 0; i < t.rows(); ++i)
      if (t.text_at(i, 0) == module && t.at(i, 0) == double(m.hidden)) return true;
    return false;
  };
  return has("block_trtllm") && (m.indexer_shared_layers() == 0 || has("block_skip_trtllm"));
}

void resolve_dsa(const OpProfile& p, const CostModel& cm, ProfileCurves& pc) {
  const ModelConfig& m = cm.model;
  const ProfileTable& t = p.table(ProfileTableKind::kDsa);
  pc.dsa_attn_decode = dsa_grid(t, cm, "attn", "decode", &DsaRoofs::attn_decode);
  pc.dsa_attn_prefill = dsa_grid(t, cm, "attn", "prefill", &DsaRoofs::attn_prefill);
  pc.dsa_logits_decode = dsa_grid(t, cm, "logits", "decode", &DsaRoofs::logits_decode);
  pc.dsa_logits_prefill = dsa_grid(t, cm, "logits", "prefill", &DsaRoofs::logits_prefill);
  pc.dsa_topk_decode = dsa_grid(t, cm, "topk", "decode", &DsaRoofs::topk_decode);
  pc.dsa_topk_prefill = dsa_grid(t, cm, "topk", "prefill", &DsaRoofs::topk_prefill);
  pc.dsa_indexer_decode = dsa_grid(t, cm, "indexer", "decode", &DsaRoofs::logits_decode, true);
  // SGLang's TensorRT-LLM NSA backend (--nsa-prefill-backend trtllm --nsa-decode-backend trtllm): the block
  // rows time self_attn.forward whole under it (aiconfigurator collector/sglang/collect_mla_module.py,
  // kernel_source sglang_dsa_indexer_trtllm, and sglang_dsa_skip_indexer_trtllm for a layer reusing the
  // previous full layer's top-k; short prefills its dense sglang_dsa_dense_mha_trtllm_ragged path).
  if (p.param(TimingParam::kDsaTrtllmBackend) == 1 && block_rows_price(t, m)) {
    pc.dsa_block_decode = dsa_grid(t, cm, "block_trtllm", "decode", &DsaRoofs::attn_decode);
    pc.dsa_block_prefill = dsa_grid(t, cm, "block_trtllm", "prefill", &DsaRoofs::attn_prefill);
    if (m.indexer_shared_layers() > 0) {
      pc.dsa_block_skip_decode = dsa_grid(t, cm, "block_skip_trtllm", "decode", &DsaRoofs::attn_decode);
      pc.dsa_block_skip_prefill = dsa_grid(t, cm, "block_skip_trtllm", "prefill", &DsaRoofs::attn_prefill);
    }
  }
  const DsaRoofs r = dsa_roofs(cm, double(m.heads) / cm.parallel.tp);
  pc.dsa_logits_pair_s = 2 * r.logits_prefill.cbxx;
  pc.dsa_topk_pair_s = 2 * r.topk_prefill.mbxx;
  const ProfileTable& g = p.table(ProfileTableKind::kGemm);
  const double q_in = double(m.q_lora_rank > 0 ? m.q_lora_rank : m.hidden);
  const PickedRows index = pick_rows(g, cm, WeightGroup::kIndexer);
  pc.derived_op[size_t(Op::kIndexerScore)] = index.info.derived;
  if (!index.info.rows.empty()) pc.format_rows.push_back(index.info);
  pc.index_q_proj = gemm_curve(g, double(m.indexer_heads) * double(m.indexer_head_dim), q_in, index);
  pc.index_k_proj = gemm_curve(g, double(m.indexer_head_dim + m.indexer_heads), double(m.hidden), index);
}

// ---- Gated DeltaNet: the conv1d and the recurrence from the gdn table (build-profile build_gdn) ----

// One GPU's GDN shape: key heads, key dim, value heads, value dim, conv width (the table's key columns).
using GdnKey = std::array<double, 5>;

// The rooflines of the GDN kernels at one GPU's shape, `state_bytes` per recurrent state element (the
// collector's float32 for measured rows, the model's for the wanted shape). Per sequence in decode (x:
// sequences); per (sequence, token) in prefill (b sequences of x new tokens). conv: the packed q, k, v
// channels through a `conv`-wide causal filter, its window read and written per sequence; scan: decode reads
// and writes the state at 7 FLOPs per element (step_cost.cpp's recurrent step), prefill the chunked scan's
// per-token FLOPs over 64-token chunks, the state read and written once per sequence.
struct GdnRoofs {
  OpRoofline conv_decode, scan_decode, conv_prefill, scan_prefill;
};

GdnRoofs gdn_roofs(const CostModel& cm, const GdnKey& k, double state_bytes) {
  constexpr double kChunk = 64, kStepFlops = 7;
  const double kh = k[0], kd = k[1], vh = k[2], vd = k[3], conv = k[4];
  const double channels = 2 * kh * kd + vh * vd, state = vh * kd * vd;
  const double f = cm.attention_flops, bw = cm.hbm_bw;
  GdnRoofs r;
  r.conv_decode.cx = 2 * channels * conv / f;
  r.conv_decode.mx = 2 * channels * conv * kActBytes / bw;
  r.scan_decode.cx = kStepFlops * state / f;
  r.scan_decode.mx = (2 * state * state_bytes + (channels + vh * vd) * kActBytes) / bw;
  r.conv_prefill.cbx = 2 * channels * conv / f;
  r.conv_prefill.mbx = 2 * channels * kActBytes / bw;
  r.scan_prefill.cbx = vh * (2 * kChunk * (kd + vd) + 4 * kd * vd) / f;
  r.scan_prefill.mbx = (channels + vh * vd) * kActBytes / bw;
  r.scan_prefill.mb = 2 * state * state_bytes / bw;
  return r;
}

// The GDN rows of one kernel and phase.
bool gdn_part(const ProfileTable& t, size_t i, std::string_view kernel, std::string_view phase) {
  return t.text_at(i, 0) == kernel && t.text_at(i, 1) == phase;
}

GdnKey gdn_key(const ProfileTable& t, size_t i) {
  return GdnKey{t.at(i, 0), t.at(i, 1), t.at(i, 2), t.at(i, 3), t.at(i, 4)};
}

// The measured shape of one kernel and phase nearest the model's per-GPU shape (log distance, the rule of
// the other tables); false when the table has no row of them.
bool gdn_nearest(const ProfileTable& t, std::string_view kernel, std::string_view phase, const GdnKey& want,
                 GdnKey& got) {
  return nearest_key<5>(
      t, want, [&](size_t i) { return gdn_part(t, i, kernel, phase); },
      [&](size_t i) { return gdn_key(t, i); }, got);
}

// The collector's recurrent state: float32 (collector/sglang/collect_gdn.py, recurrent_state dtype).
constexpr double kGdnMeasuredStateBytes = 4;

// Decode rows (batch -> latency) of one kernel at its nearest measured shape, scaled by the rooflines' ratio
// where the shape differs.
OpCurve gdn_decode_curve(const ProfileTable& t, const CostModel& cm, std::string_view kernel,
                         const GdnKey& want, const OpRoofline& roof, OpRoofline GdnRoofs::*part) {
  GdnKey got{};
  if (!gdn_nearest(t, kernel, "decode", want, got)) return {};
  std::vector<std::pair<double, double>> pts;
  for (size_t i = 0; i < t.rows(); ++i)
    if (gdn_part(t, i, kernel, "decode") && gdn_key(t, i) == got)
      pts.emplace_back(t.at(i, 5), t.at(i, 7) * kMsToS);
  return make_curve(std::move(pts), 1, roof, gdn_roofs(cm, got, kGdnMeasuredStateBytes).*part);
}

// Prefill rows (sequences x new tokens -> latency) of one kernel, likewise.
OpGrid gdn_prefill_grid(const ProfileTable& t, const CostModel& cm, std::string_view kernel,
                        const GdnKey& want, const OpRoofline& roof, OpRoofline GdnRoofs::*part) {
  GdnKey got{};
  if (!gdn_nearest(t, kernel, "prefill", want, got)) return {};
  auto keep = [&](size_t i) { return gdn_part(t, i, kernel, "prefill") && gdn_key(t, i) == got; };
  return make_grid(t, keep, 5, 6, 7, roof, gdn_roofs(cm, got, kGdnMeasuredStateBytes).*part);
}

void resolve_gdn(const OpProfile& p, const CostModel& cm, ProfileCurves& pc) {
  const ProfileTable& t = p.table(ProfileTableKind::kGdn);
  const ModelConfig& m = cm.model;
  if (t.empty() || m.mixer_layers(MixerKind::kGatedDeltaNet) == 0) return;
  const double tp = cm.parallel.tp;
  const GdnKey want{m.gdn.key_heads / tp, double(m.gdn.key_head_dim), m.gdn.value_heads / tp,
                    double(m.gdn.value_head_dim), double(m.gdn.conv_kernel)};
  const GdnRoofs roof = gdn_roofs(cm, want, double(m.ssm_state_bytes));
  pc.gdn_conv_decode = gdn_decode_curve(t, cm, "conv", want, roof.conv_decode, &GdnRoofs::conv_decode);
  pc.gdn_scan_decode = gdn_decode_curve(t, cm, "scan", want, roof.scan_decode, &GdnRoofs::scan_decode);
  pc.gdn_conv_prefill = gdn_prefill_grid(t, cm, "conv", want, roof.conv_prefill, &GdnRoofs::conv_prefill);
  pc.gdn_scan_prefill = gdn_prefill_grid(t, cm, "scan", want, roof.scan_prefill, &GdnRoofs::scan_prefill);
}

// ---- Kimi Delta Attention: the convs and the recurrence from the kda table (build-profile build_kda) ----

// The KDA kernels' rooflines at one GPU's shard: GDN's (gdn_roofs) with key and value heads alike - q, k and
// v through their convs (3 x P channels), a heads x head_dim x head_dim state, the 64-token chunked scan -
// the work step_cost.cpp's linear_mixer_ops counts for both kinds (the per-channel decay is no more bytes or
// FLOPs to first order). Edges only: the rows are read at the model's own shard, so no point is scaled.
GdnRoofs kda_roofs(const CostModel& cm, double heads, double head_dim, double conv) {
  return gdn_roofs(cm, GdnKey{heads, head_dim, heads, head_dim, conv}, double(cm.model.ssm_state_bytes));
}

OpRoofline roof_sum(const OpRoofline& a, const OpRoofline& b) {
  return {a.c0 + b.c0, a.cb + b.cb, a.cx + b.cx, a.cbx + b.cbx, a.cbxx + b.cbxx,
          a.m0 + b.m0, a.mb + b.mb, a.mx + b.mx, a.mbx + b.mbx, a.mbxx + b.mbxx};
}

// KDA rows need the model's own shard: the kernels differ between shards (SGLang runs its fused decode kernel
// on the 12-head one only), so no other shard's rows stand in for it. A model whose shard is not measured
// (Kimi-Linear-48B: 32 heads at TP1, aiconfigurator timed Kimi-K3's 96 / 48 / 24 / 12) keeps the roofline.
// Decode: the fused kernel's rows where the shard has them, else the conv update's and the recurrence's (both
// needed); prefill: the q / k / v convs' and the chunked scan's. docs/layers.md "Kimi Linear and Kimi-K3".
void resolve_kda(const OpProfile& p, const CostModel& cm, ProfileCurves& pc) {
  const ProfileTable& t = p.table(ProfileTableKind::kKda);
  const ModelConfig& m = cm.model;
  if (t.empty() || m.mixer_layers(MixerKind::kKda) == 0 || m.kda.heads % cm.parallel.tp != 0) return;
  const double heads = double(m.kda.heads / cm.parallel.tp), dim = double(m.kda.head_dim);
  const double conv = double(m.kda.conv_kernel);
  auto keep = [&](std::string_view kernel, std::string_view phase) {
    return [&t, kernel, phase, heads, dim, conv](size_t i) {
      return t.text_at(i, 0) == kernel && t.text_at(i, 1) == phase && t.at(i, 0) == heads &&
             t.at(i, 1) == dim && t.at(i, 2) == conv;
    };
  };
  const GdnRoofs r = kda_roofs(cm, heads, dim, conv);
  auto decode = [&](std::string_view kernel, const OpRoofline& roof) {
    std::vector<std::pair<double, double>> pts;
    const auto kept = keep(kernel, "decode");
    for (size_t i = 0; i < t.rows(); ++i)
      if (kept(i)) pts.emplace_back(t.at(i, 3), t.at(i, 5) * kMsToS);
    return pts.empty() ? OpCurve{} : make_curve(std::move(pts), 1, roof, roof);
  };
  if (OpCurve fused = decode("fused", roof_sum(r.conv_decode, r.scan_decode)); !fused.empty()) {
    pc.kda_decode = {std::move(fused)};
  } else {
    OpCurve c = decode("conv", r.conv_decode), s = decode("scan", r.scan_decode);
    if (!c.empty() && !s.empty()) pc.kda_decode = {std::move(c), std::move(s)};
  }
  OpGrid c = make_grid(t, keep("conv", "prefill"), 3, 4, 5, r.conv_prefill, r.conv_prefill);
  OpGrid s = make_grid(t, keep("scan", "prefill"), 3, 4, 5, r.scan_prefill, r.scan_prefill);
  if (!c.empty() && !s.empty()) pc.kda_prefill = {std::move(c), std::move(s)};
}

// ---- DeepSeek-V4: the attention module of a CSA or HCA layer and the hyper-connection mixes (dsv4 table)
// ----

// The rooflines of one layer's attention module at one GPU's heads (what the rows time: scripts/build-profile
// build_dsv4), for the tables' edges only (rows are read at the model's own shape, so no point is scaled):
// decode per (sequences b, KV length x), prefill per (sequences b, new tokens x each) at no prefix. Weights:
// wq_a, wkv, the compressor and (CSA) the indexer's projections replicated, wq_b and the grouped wo_a / wo_b
// split tp ways; keys: the 128-token window plus, on CSA layers, the indexer's top-k entries (its scores over
// every fourth token's entry), on HCA layers every 128th token's entry. Prefill's compressed keys are causal:
// half the pairs of a sequence's x tokens.
struct Dsv4Roofs {
  OpRoofline decode, prefill;
  Dsv4Module::PrefixRoof prefix;
};

Dsv4Roofs dsv4_roofs(const CostModel& cm, int ratio) {
  const ModelConfig& m = cm.model;
  const CompressedAttention& a = m.compressed;
  const double h = double(m.hidden), hd = double(m.head_dim), q_lora = double(m.q_lora_rank);
  const double tp = cm.parallel.tp, heads = double(m.heads) / tp;
  const bool csa = ratio == 4;
  const double ih = double(a.index_heads), ihd = double(a.index_head_dim);
  const double replicated =
      h * (q_lora + hd) + (csa ? 4 : 2) * h * hd + (csa ? q_lora * ih * ihd + h * ih + 4 * h * ihd : 0);
  const double split = (q_lora * double(m.heads) * hd + double(m.heads) * hd * double(a.o_lora_rank)) / tp +
                       double(a.o_groups) * double(a.o_lora_rank) * h / tp;
  const double weights = replicated + split, kv = double(cm.kv_bytes_token_layer);
  const double per_key = heads * 4 * hd / cm.attention_flops;  // QK and PV over one 512-wide entry
  const double fixed_keys = double(m.window_tokens) + (csa ? double(a.index_topk) : 0);
  Dsv4Roofs r;
  r.decode.m0 = weights * cm.weight_bytes_per_param / cm.hbm_bw;
  r.decode.mb = fixed_keys * kv / cm.hbm_bw;
  r.decode.cb = 2 * weights / cm.gemm_flops + fixed_keys * per_key;
  if (csa) {
    r.decode.mbx = double(compressed_index_key_bytes(m)) / 4 / cm.hbm_bw;
    r.decode.cbx = 2 * ih * ihd / 4 / cm.indexer_flops;
  } else {
    r.decode.mbx = kv / double(ratio) / cm.hbm_bw;
    r.decode.cbx = per_key / double(ratio);
  }
  r.prefill.m0 = r.decode.m0;
  r.prefill.mbx = (h + heads * hd) * 2 * kActBytes / cm.hbm_bw;
  r.prefill.cbx = 2 * weights / cm.gemm_flops + fixed_keys * per_key;
  r.prefill.cbxx = csa ? 2 * ih * ihd / 4 / 2 / cm.indexer_flops : per_key / double(ratio) / 2;
  r.prefix = {r.prefill.cbx, 2 * r.prefill.cbxx, r.prefill.m0, r.prefill.mbx, r.decode.mbx};
  return r;
}

// One module's rows of the model's hidden size and heads per GPU (DeepSeek-V4's, MiniMax-M3's): decode as one
// grid, prefill one grid per measured prefix. Empty when the table has no rows of that shape.
Dsv4Module module_rows(const ProfileTable& t, const CostModel& cm, std::string_view module,
                       const Dsv4Roofs& roof) {
  const double hidden = double(cm.model.hidden), heads = double(cm.model.heads) / cm.parallel.tp;
  auto shape = [&](size_t i, std::string_view phase) {
    return t.text_at(i, 0) == module && t.text_at(i, 1) == phase && t.at(i, 0) == hidden &&
           t.at(i, 1) == heads;
  };
  Dsv4Module d;
  d.roof = roof.prefix;
  d.decode = make_grid(
      t, [&](size_t i) { return shape(i, "decode"); }, 3, 4, 5, roof.decode, roof.decode);
  for (size_t i = 0; i < t.rows(); ++i)
    if (shape(i, "prefill") &&
        std::find(d.prefixes.begin(), d.prefixes.end(), t.at(i, 2)) == d.prefixes.end())
      d.prefixes.push_back(t.at(i, 2));
  std::sort(d.prefixes.begin(), d.prefixes.end());
  for (double prefix : d.prefixes)
    d.prefill.push_back(make_grid(
        t, [&](size_t i) { return shape(i, "prefill") && t.at(i, 2) == prefix; }, 3, 4, 5, roof.prefill,
        roof.prefill));
  // The last-chunk rows, where they all end at one prompt length.
  double total = 0;
  bool one_total = true;
  for (size_t i = 0; i < t.rows(); ++i) {
    if (!shape(i, "prefill_end")) continue;
    if (total == 0) total = t.at(i, 2) + t.at(i, 4);
    one_total = one_total && t.at(i, 2) + t.at(i, 4) == total;
  }
  if (total > 0 && one_total) {
    d.end = make_grid(
        t, [&](size_t i) { return shape(i, "prefill_end"); }, 3, 4, 5, roof.prefill, roof.prefill);
    d.end_total = total;
  }
  if (d.decode.empty() || d.prefill.empty()) return {};
  return d;
}

Dsv4Module dsv4_module(const ProfileTable& t, const CostModel& cm, std::string_view module) {
  return module_rows(t, cm, module, dsv4_roofs(cm, module == "csa" ? 4 : 128));
}

// The hyper-connection pre or post mixes of one layer (both sites) by tokens, at the model's hidden size and
// hc_mult.
OpCurve mhc_curve(const ProfileTable& t, const CostModel& cm, std::string_view module) {
  const ModelConfig& m = cm.model;
  std::vector<std::pair<double, double>> pts;
  for (size_t i = 0; i < t.rows(); ++i)
    if (t.text_at(i, 0) == module && t.at(i, 0) == double(m.hidden) &&
        t.at(i, 1) == double(m.compressed.hc_mult))
      pts.emplace_back(t.at(i, 4), t.at(i, 5) * kMsToS);
  if (pts.empty()) return {};
  // Two sites, each a (2 + hc) x hc map of hc x hidden per token, read and written (step_cost.cpp's mixes).
  const double hc = double(m.compressed.hc_mult), h = double(m.hidden);
  OpRoofline roof;
  roof.cx = 2 * 2 * hc * h * (2 + hc) * hc / cm.vector_flops;
  roof.mx = 2 * 2 * hc * h * kActBytes / cm.hbm_bw;
  return make_curve(std::move(pts), 1, roof, roof);
}

// DeepSeek-V4's rows where the profile measured the model's shape with FP8 attention GEMMs (the rows'
// FP8-block projections; another attention format stays on the roofline). docs/layers.md "DeepSeek-V4".
void resolve_dsv4(const OpProfile& p, const CostModel& cm, ProfileCurves& pc) {
  const ProfileTable& t = p.table(ProfileTableKind::kDsv4);
  const ModelConfig& m = cm.model;
  if (t.empty() || m.attention != AttentionKind::kCompressed) return;
  pc.mhc_pre = mhc_curve(t, cm, "mhc_pre");
  pc.mhc_post = mhc_curve(t, cm, "mhc_post");
  if (pc.mhc_pre.empty() || pc.mhc_post.empty()) pc.mhc_pre = pc.mhc_post = {};
  const WeightFormat attn = group_format(m, WeightGroup::kAttention).first;
  const bool fp8 = !attn.weight_only && (attn.kind == WeightFormatKind::kFp8Block ||
                                         attn.kind == WeightFormatKind::kFp8PerTensor ||
                                         attn.kind == WeightFormatKind::kFp8PerChannel);
  if (!fp8) return;
  pc.dsv4_csa = dsv4_module(t, cm, "csa");
  pc.dsv4_hca = dsv4_module(t, cm, "hca");
  // Both kinds or neither: a model whose layers are of both kinds is priced whole from the rows or not at
  // all.
  if (pc.dsv4_csa.empty() || pc.dsv4_hca.empty()) pc.dsv4_csa = pc.dsv4_hca = {};
}

// ---- MiniMax-M3: the block-sparse attention block of a sparse layer (msa table) ----

// The roofline of one sparse layer's block at one GPU's heads (what the rows time: scripts/build-profile
// build_msa), for the tables' edges only: the fused q / k / v / index_q / index_k projection and o_proj; the
// top-k blocks' keys; the indexer's scores over every cached index key (half the pairs of a prefill's own
// tokens: causal).
Dsv4Roofs msa_roofs(const CostModel& cm) {
  const ModelConfig& m = cm.model;
  const BlockSparseShape& b = m.block_sparse;
  const double h = double(m.hidden), hd = double(m.head_dim), tp = cm.parallel.tp,
               heads = double(m.heads) / tp;
  const double kv_heads = std::max(1.0, std::ceil(double(m.kv_heads) / tp));
  const double ih = std::max(1.0, std::ceil(double(b.index_heads) / tp)), id = double(b.index_dim);
  const double weights = h * (heads * hd + 2 * kv_heads * hd + ih * id + id) + heads * hd * h;
  const double kv = double(cm.kv_bytes_token_layer) * kv_heads / double(m.kv_heads);  // this GPU's heads
  const double per_key = heads * 4 * hd / cm.attention_flops, keys = double(b.topk_tokens());
  const double index_key = double(cm.indexer_bytes_token_layer);
  Dsv4Roofs r;
  r.decode.m0 = weights * cm.weight_bytes_per_param / cm.hbm_bw;
  r.decode.mb = keys * kv / cm.hbm_bw;
  r.decode.cb = 2 * weights / cm.gemm_flops + keys * per_key;
  r.decode.mbx = index_key / cm.hbm_bw;
  r.decode.cbx = 2 * ih * id / cm.attention_flops;
  r.prefill.m0 = r.decode.m0;
  r.prefill.mbx = (h + heads * hd) * 2 * kActBytes / cm.hbm_bw;
  r.prefill.cbx = 2 * weights / cm.gemm_flops + keys * per_key;
  r.prefill.cbxx = ih * id / cm.attention_flops;
  r.prefix = {r.prefill.cbx, 2 * r.prefill.cbxx, r.prefill.m0, r.prefill.mbx, r.decode.mbx};
  return r;
}

// MiniMax-M3's rows where the profile measured the model's shape (docs/layers.md "MiniMax-M3"):
// msa_<gemm>_<kv>, the GEMM format of its attention weights (bf16; fp8 for FP8 and MXFP8 projections: the
// block-FP8 rows) and the run's KV dtype, else the other KV dtype's rows (the sparse layers read 2,048 keys a
// query at most); a format without rows (NVFP4, INT4, FP8 under SGLang, which timed BF16 GEMMs only) keeps
// the parts.
void resolve_msa(const OpProfile& p, const CostModel& cm, ProfileCurves& pc) {
  const ProfileTable& t = p.table(ProfileTableKind::kMsa);
  const ModelConfig& m = cm.model;
  if (t.empty() || !m.has_block_sparse() || m.attention != AttentionKind::kGqa) return;
  const WeightFormat f = group_format(m, WeightGroup::kAttention).first;
  const std::string_view gemm = f.kind == WeightFormatKind::kBf16   ? "bf16"
                                : weight_dtype_of(f) == Dtype::kFp8 ? "fp8"  // FP8 math: FP8 and MXFP8 kinds
                                                                    : "";
  if (gemm.empty()) return;
  const bool fp8_kv = cm.kv_layout == KvLayout::kFp8E4m3;
  const Dsv4Roofs roof = msa_roofs(cm);
  const std::string prefix = "msa_" + std::string(gemm) + "_";
  pc.msa = module_rows(t, cm, prefix + (fp8_kv ? "fp8" : "bf16"), roof);
  if (pc.msa.empty()) pc.msa = module_rows(t, cm, prefix + (fp8_kv ? "bf16" : "fp8"), roof);
}

void resolve_collectives(const OpProfile& p, const CostModel& cm, ProfileCurves& pc) {
  const ProfileTable& t = p.table(ProfileTableKind::kComm);
  for (int i = 0; i < kOpCount; ++i) {
    if (!is_collective(Op(i))) continue;
    pc.comm_graph[size_t(i)] = comm_curve(t, cm, Op(i), true);
    pc.comm_eager[size_t(i)] = comm_curve(t, cm, Op(i), false);
  }
}

// The step's CPU terms. With overlap they are the CPU stage a step waits for only where it outlasts the GPU;
// without it the step's serial CPU part, added to the GPU's. A profile that names the serial step's own
// terms (sync_step_cpu_s, sync_step_cpu_per_request_s; either absent is 0) prices a step without overlap
// with them, one that names neither with the overlapped ones. vLLM V1 without --async-scheduling
// (vllm/v1/engine/core.py EngineCore.step: schedule, execute_model, update_from_output in turn) idles the
// GPU for the engine core's and the worker's serial CPU time, not for the slowest CPU stage async runs show
// (docs/validation.md "vLLM's serial step time from public measurements").
void resolve_step_cpu(const OpProfile& p, ProfileCurves& pc) {
  pc.overlap_schedule = p.param(TimingParam::kOverlapSchedule) != 0;
  const bool serial_terms =
      p.given(TimingParam::kSyncStepCpuS) || p.given(TimingParam::kSyncStepCpuPerRequestS);
  const bool serial = !pc.overlap_schedule && serial_terms;
  pc.step_cpu_overhead_s = p.param(serial ? TimingParam::kSyncStepCpuS : TimingParam::kStepCpuOverheadS);
  pc.step_cpu_per_request_s =
      p.param(serial ? TimingParam::kSyncStepCpuPerRequestS : TimingParam::kStepCpuPerRequestS);
}

// timing.speed_scale: every time the profile measured on its machine (the ops table as scaled, the step
// terms) x the scale. Only own profiles carry a machine's speed probe to scale by.
void apply_speed_scale(const OpProfile& p, ProfileCurves& pc) {
  const double speed = p.param(TimingParam::kSpeedScale);
  if (speed == 1) return;
  if (!pc.own)
    throw InputError(
        p.origin + ": timing.speed_scale",
        "1 for a profile of another engine's kernels (a speed scale applies to profiles measured "
        "by `tokenline profile`)",
        std::to_string(speed));
  for (double& s : pc.own_scale) s *= speed;
  pc.step_cpu_overhead_s *= speed;
  pc.step_cpu_per_request_s *= speed;
  pc.step_floor_per_layer_s *= speed;
  pc.eager_host_per_mla_layer_s *= speed;
  pc.eager_launch_gap_s *= speed;
}

// Every decode step and most chunks price the token curves at a whole token count of a few thousand or
// less, the prefill attention grids at a chunk's whole tokens per sequence, the fused shared expert at
// (topk + 1) / topk of that many tokens, and the collectives at that many tokens' messages.
void remember_curves(const CostModel& cm, ProfileCurves& pc) {
  const int64_t up_to = cm.options.remembered_tokens;
  if (up_to <= 0) return;
  for (OpCurve* c : {&pc.a_proj,    &pc.q_b_proj,   &pc.kv_b_proj,  &pc.bmm_pre,      &pc.bmm_post,
                     &pc.o_proj,    &pc.o_gate,     &pc.gdn_in,     &pc.gdn_ba,       &pc.gdn_out,
                     &pc.mamba2_in, &pc.mamba2_out, &pc.kda_in,     &pc.kda_down,     &pc.kda_up,
                     &pc.kda_out,   &pc.dense_up,   &pc.dense_down, &pc.shared_up,    &pc.shared_down,
                     &pc.router,    &pc.lm_head,    &pc.moe,        &pc.index_q_proj, &pc.index_k_proj})
    c->tabulate(up_to);
  for (OpGrid* g : {&pc.attn_prefill, &pc.dsa_attn_prefill, &pc.dsa_logits_prefill, &pc.dsa_topk_prefill})
    g->tabulate(up_to);
  if (pc.fused_shared_rows > 0) {
    pc.moe_fused_shared = pc.moe;
    pc.moe_fused_shared.tabulate(up_to, pc.fused_shared_rows);
  }
  if (!pc.own) pc.decode_ops.assign(size_t(up_to), DecodeTokenOps{});  // own profiles price every op apart
  for (int i = 0; i < kOpCount; ++i) {
    const double unit = collective_bytes_per_token(cm, Op(i));
    if (unit <= 0) continue;
    pc.comm_graph[size_t(i)].curve.tabulate(up_to, unit);
    pc.comm_eager[size_t(i)].curve.tabulate(up_to, unit);
  }
}

}  // namespace

std::shared_ptr<const ProfileCurves> resolve_profile(const OpProfile& p, const CostModel& cm) {
  auto pc = std::make_shared<ProfileCurves>();
  resolve_gemms(p.table(ProfileTableKind::kGemm), cm, *pc);
  PickedRows experts;
  pc->moe = moe_curve(p.table(ProfileTableKind::kMoe), cm, p.param(TimingParam::kMoeRoutingAlpha),
                      p.param(TimingParam::kMoeW4a16Marlin) == 1, experts);
  if (!pc->moe.empty()) {
    pc->format_rows.push_back(experts.info);
    pc->derived_op[size_t(Op::kExpertGemm)] = experts.info.derived;
  }
  if (cm.model.attention == AttentionKind::kMla) {
    pc->bmm_pre = bmm_curve(p.table(ProfileTableKind::kMlaBmm), cm, "pre");
    pc->bmm_post = bmm_curve(p.table(ProfileTableKind::kMlaBmm), cm, "post");
  }
  // SGLang runs a DSA prefill batch whose sequences all hold at most index_topk keys as dense MHA
  // (SGLANG_NSA_PREFILL_DENSE_ATTN_KV_LEN_THRESHOLD, set to the model's index_topk; sgl-project/sglang#11892,
  // docs/basic_usage/deepseek_v32.md "Short-sequence MHA prefill": FlashAttention varlen on SM90, TRT-LLM
  // ragged MHA on SM100, MHA_ONE_SHOT): the sparse top-k would select every key. So the MLA prefill rows
  // price it too (op_profile_price.cpp dense_dsa_prefill).
  const bool dense_dsa = cm.model.has_indexer() && p.engine_name == "sglang";
  if (!cm.model.has_indexer() || dense_dsa) {
    pc->attn_prefill = attention_grid(p, cm, false);
    pc->prefill_key_s = 2 * attn_roof(cm, attn_shape(cm), false).cbxx;  // one (query, key) pair
  }
  if (dense_dsa && !pc->attn_prefill.empty()) pc->dsa_dense_prefill_keys = double(cm.model.indexer_topk);
  if (!cm.model.has_indexer()) {  // DSA's sparse attention has no table here: roofline
    pc->attn_decode = attention_grid(p, cm, true);
    std::string module_kv;
    pc->mla_module_decode = resolve_mla_module(p, cm, module_kv);
    // A module measured with another KV dtype: its rows at the shortest context (the block without the
    // cost of cached keys), plus the attention table's own rise with context for the model's dtype.
    pc->mla_module_other_kv = !pc->mla_module_decode.empty() && module_kv != kv_dtype_name(cm.kv_layout);
    if (pc->mla_module_other_kv && pc->attn_decode.empty()) pc->mla_module_decode = {};
  } else {
    resolve_dsa(p, cm, *pc);
  }
  resolve_gdn(p, cm, *pc);
  resolve_kda(p, cm, *pc);
  resolve_dsv4(p, cm, *pc);
  resolve_msa(p, cm, *pc);
  resolve_collectives(p, cm, *pc);
  resolve_own_ops(p, cm, *pc);
  resolve_step_cpu(p, *pc);
  pc->step_floor_per_layer_s = p.param(TimingParam::kStepFloorPerLayerS);
  pc->eager_host_per_mla_layer_s = p.param(TimingParam::kEagerHostPerMlaLayerS);
  if (p.param(TimingParam::kSharedExpertsFusion) != 0 && fuses_shared_expert(cm) && !pc->moe.empty())
    pc->fused_shared_rows = double(cm.model.experts_per_token + 1) / cm.model.experts_per_token;
  if (pc->fused_shared_rows > 0) pc->derived_op[size_t(Op::kSharedExpert)] = experts.info.derived;
  // 0: the engine block's cuda_graph_max_bs, derived for this layout as the engine derives it (one source
  // for the graph buckets priced here and the memory the graphs keep back in memory.cpp).
  pc->cuda_graph_max_bs = int64_t(p.param(TimingParam::kCudaGraphMaxBs));
  if (pc->cuda_graph_max_bs == 0 && p.has_engine) {
    pc->cuda_graph_max_bs =
        resolve_engine(p.engine, cm.hardware, cm.parallel.tp, cm.parallel.dp_attention).cuda_graph_max_bs;
  }
  pc->eager_launch_gap_s = p.param(TimingParam::kEagerLaunchGapS);
  pc->moe_contiguous_align = int64_t(p.param(TimingParam::kMoeContiguousAlign));
  apply_speed_scale(p, *pc);
  remember_curves(cm, *pc);
  return pc;
}

std::string weight_rows_summary(const CostModel& cm) {
  if (!cm.time_source->measured()) return "";
  if (const CostModel* source = transferred_source_model(cm)) return weight_rows_summary(*source);
  std::string out;
  for (const FormatRows& r : profile_curves(cm).format_rows) {
    out += (out.empty() ? "" : "; ") + std::string(weight_group_name(r.group)) + " " + r.format + ": " +
           r.rows + " rows";
    if (r.derived) out += " scaled by bytes and rate (no rows of its own)";
  }
  return out;
}

std::vector<std::string> engine_names() {
  return {"sglang", "vllm", "trtllm"};
}

std::string engine_display_name(const std::string& engine) {
  if (engine == "sglang") return "SGLang";
  if (engine == "vllm") return "vLLM";
  if (engine == "trtllm") return "TensorRT-LLM";
  return engine;
}

std::string profile_for_engine(const std::string& profile, const std::string& engine,
                               const Hardware& hardware) {
  if (engine.empty()) return profile;
  const std::vector<std::string> engines = engine_names();
  if (std::find(engines.begin(), engines.end(), engine) == engines.end())
    throw InputError("--engine", "sglang | vllm | trtllm", "'" + engine + "'");
  if (!profile.empty())
    throw InputError("--engine", "either --engine (the profile <hardware>-<engine>) or --profile",
                     "both (--profile " + profile + ")");
  const std::string name = hardware.name + "-" + engine;
  for (const std::string& n : embedded_profile_names())
    if (n == name) return name;
  // No profile of the engine on this GPU: the nearest GPU's, transferred (time_source_transfer.h).
  const std::vector<std::string> sources = transfer_sources(engine, hardware);
  if (!sources.empty()) return transfer_name(sources.front());
  throw InputError("--engine " + engine, "an engine with a profile on some GPU", "no profile of " + engine);
}

bool has_dsa_block_rows(const OpProfile& profile, const ModelConfig& model) {
  return block_rows_price(profile.table(ProfileTableKind::kDsa), model);
}

}  // namespace tokenline
