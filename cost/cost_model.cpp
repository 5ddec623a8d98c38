// make_cost_model: the rates a step's roofline and collectives use, ideal (the seed's) or achieved.
#include "cost/cost_model.h"

#include <algorithm>

#include "common/input_error.h"
#include "cost/op_profile_pricing.h"
#include "cost/step_cost.h"
#include "cost/time_source_transfer.h"
#include "engine/model/linear_state.h"

namespace tokenline {
namespace {

// The seed's own assumptions (--ideal), each quoted from the seed article.
constexpr double kSeedHbmBw = 4.8e12;        // "带宽按每卡 4.8TB/s HBM"
constexpr double kSeedNvlinkRingBw = 787e9;  // "NVLink(ring 有效带宽约 787GB/s)"
constexpr double kSeedIbBw = 25e9;           // "IB(200Gb/s ≈ 25GB/s)"
constexpr double kSeedCollectiveLaunchS =
    5e-6;  // "每次约 3–5µs": the upper end gives its 156 x 5 us ≈ 0.8 ms

// One full-attention layer's parameters (an MTP layer's attention; a hybrid's MTP layer is full attention).
double attention_params_per_layer(const ModelConfig& model, const ParamCounts& p) {
  if (model.linear_layers() == 0) return p.attention / model.layers;
  ModelConfig full = model;
  full.mixers.clear();
  return count_params(full).attention / model.layers;
}

void require_positive(double v, const std::string& hw, const char* field) {
  if (!(v > 0)) throw InputError("hardware " + hw + ": " + field, "a positive value", std::to_string(v));
}

}  // namespace

CostModel make_cost_model(const ModelConfig& model, const Parallel& parallel, KvLayout kv_layout,
                          const Hardware& hardware, const CostOptions& options) {
  validate_parallel(parallel, model, "--parallel");
  if (!layout_fits(kv_layout, model)) {
    throw InputError("--kv-layout", "a KV layout for " + model.name + "'s attention",
                     std::string(kv_layout_name(kv_layout)));
  }
  if (options.indexer_q_tile_tokens < 1 || options.max_chunk_tokens < 1) {
    throw InputError("cost options", "indexer_q_tile_tokens and max_chunk_tokens >= 1", "a value < 1");
  }
  require_positive(hardware.peak_flops_fp8, hardware.name, "peak_flops.fp8");
  require_positive(hardware.peak_flops_bf16, hardware.name, "peak_flops.bf16");
  require_positive(hardware.peak_flops_fp32, hardware.name, "peak_flops.fp32");
  CostModel cm;
  cm.model = model;
  cm.parallel = parallel;
  cm.kv_layout = kv_layout;
  cm.hardware = hardware;
  cm.options = options;
  const int domain = hardware.gpus_per_node > 0 ? hardware.gpus_per_node : kNvlinkDomainGpus;
  cm.link = options.force_ib || parallel.gpus() > domain ? Link::kIb : Link::kNvlink;
  if (const EngineBehavior* engine = profile_engine(options.profile.get())) cm.moe_comm = engine->moe_comm;
  const Efficiency e = options.ideal ? Efficiency{} : hardware.efficiency;
  if (options.ideal) {
    cm.hbm_bw = kSeedHbmBw;
    cm.link_bw = cm.link == Link::kIb ? kSeedIbBw : kSeedNvlinkRingBw;
    cm.collective_launch_s = kSeedCollectiveLaunchS;
    cm.kernel_launch_s = 0;  // the seed assumes one CUDA Graph replay per step
  } else {
    require_positive(hardware.hbm_bw, hardware.name, "hbm.bw");
    cm.hbm_bw = hardware.hbm_bw * e.hbm;
    const double bw = cm.link == Link::kIb ? hardware.ib_bw * e.ib : hardware.nvlink_ring_bw * e.nvlink;
    require_positive(bw, hardware.name, cm.link == Link::kIb ? "ib.bw_per_direction" : "nvlink.ring_bw");
    cm.link_bw = bw;
    cm.collective_launch_s = hardware.collective_launch_s;
    cm.kernel_launch_s = hardware.kernel_launch_s;
  }
  for (size_t g = 0; g < kWeightGroupCount; ++g) {
    const auto group = static_cast<WeightGroup>(g);
    cm.group_gemm_flops[g] = group_gemm_peak_flops(model, group, hardware) * e.gemm;
    cm.group_bytes_per_param[g] = group_bytes_per_param(model, group);
  }
  cm.gemm_flops = cm.gemm_rate(WeightGroup::kAttention);
  cm.attention_flops = hardware.peak_flops(Dtype::kBf16) * e.attention;  // FP8 KV dequantized to BF16
  cm.indexer_flops = hardware.peak_flops(Dtype::kFp8) * e.attention;     // FP8 indexer logits
  cm.vector_flops = hardware.peak_flops(Dtype::kFp32);
  cm.kv_bytes_token_layer = kv_bytes_per_token_layer(kv_layout, model);
  cm.window_kv_bytes_token_layer = kv_bytes_per_token_layer(kv_layout, model, false);
  cm.indexer_bytes_token_layer = indexer_bytes_per_token_layer(model);
  cm.indexer_read_bytes_token_layer = options.indexer_read_scales ? indexer_bytes_per_token_layer(model)
                                                                  : indexer_key_bytes_per_token_layer(model);
  cm.weight_bytes_per_param = cm.bpp(WeightGroup::kAttention);
  cm.full_attention_layers = model.full_attention_layers();
  cm.window_layers = model.window_tokens > 0 ? model.window_layers() : 0;
  cm.chunked_window = model.chunked_attention();
  cm.block_sparse_layers = model.has_block_sparse() ? model.mixer_layers(MixerKind::kBlockSparse) : 0;
  if (model.attention == AttentionKind::kCompressed) {  // docs/layers.md "DeepSeek-V4"
    const CompressedAttention& a = model.compressed;
    cm.full_attention_layers = 0;
    cm.window_layers = model.layers;  // every layer keeps its last window_tokens entries
    // The compressors' state rides with the window, as SGLang sizes its rings by SWA pages: a full window
    // of a request holds the request's whole state (engine/model/linear_state.h compressor_state_bytes).
    cm.window_kv_bytes_token_layer =
        cm.kv_bytes_token_layer + (compressor_state_bytes(model) + model.layers * model.window_tokens - 1) /
                                      (model.layers * model.window_tokens);
    const double index_key = double(compressed_index_key_bytes(model));
    cm.compressed_kv_bytes_token = a.layers_of(4) * (double(cm.kv_bytes_token_layer) + index_key) / 4 +
                                   a.layers_of(128) * double(cm.kv_bytes_token_layer) / 128;
  }
  const ParamCounts p = count_params(model);
  const double h = double(model.hidden);
  // One MoE decoder layer's attention, eh_proj (2h -> h), and the experts one token touches.
  cm.mtp_active_params =
      attention_params_per_layer(model, p) + 2 * h * h + model.expert_params() * model.experts_per_token +
      model.mlp_params(model.moe_intermediate) * model.shared_experts + model.latent_proj_params();
  cm.mtp_params = p.mtp;
  cm.time_source = roofline_time_source();
  if (options.profile) {
    if (options.ideal) throw InputError("--profile", "no --ideal (the seed's figures are rooflines)", "both");
    if (options.profile->transferred) {  // another GPU's profile, carried by efficiency
      cm.time_source = transferred_time_source(cm);
      return cm;
    }
    if (options.profile->hardware != hardware.name) {
      throw InputError("--profile " + options.profile->name,
                       "hardware " + options.profile->hardware + " (what its tables were measured on)",
                       "hardware " + hardware.name);
    }
    cm.time_source = resolve_profile(*options.profile, cm);
  }
  return cm;
}

double PdTransfer::time_s(Link link, const CostModel& cm) const {
  const Hardware& hw = cm.hardware;
  const bool ideal = cm.options.ideal;
  switch (link) {
    case Link::kNvlink:
      return (ideal ? 0 : hw.nvlink_latency_s) +
             total_bytes() / (ideal ? kSeedNvlinkRingBw : hw.nvlink_ring_bw * hw.efficiency.nvlink);
    case Link::kIb:
      return (ideal ? 0 : hw.ib_latency_s) +
             total_bytes() / (ideal ? kSeedIbBw : hw.ib_bw * hw.efficiency.ib);
  }
  return 0;
}

PdTransfer pd_transfer(const CostModel& cm, int64_t context) {
  PdTransfer t;
  // Window layers hand over the window's KV only (SGLang and vLLM send what the decode side attends to).
  t.kv_bytes = cm.context_kv_bytes_token() * double(context);
  if (cm.window_layers > 0)
    t.kv_bytes += double(cm.window_kv_bytes_token_layer) * cm.window_layers *
                  double(std::min(context, cm.model.window_tokens));
  if (cm.model.linear_layers() > 0)  // a hybrid also hands over each linear layer's state (whole, at tp 1)
    t.kv_bytes += double(linear_state_bytes_per_request(cm.model, 1));
  t.indexer_bytes = double(cm.indexer_bytes_token_layer) * cm.model.indexer_cache_layers() * double(context);
  return t;
}

}  // namespace tokenline
