// CostModel: the rates and derived constants one (model, parallel layout, KV layout, hardware, options)
// prices its steps with, built once by make_cost_model, and the time source that prices each op
// (time_source.h: the roofline, or a measured op profile overlaid on it).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "cost/engine_behavior.h"
#include "cost/tier_transfer.h"
#include "cost/time_source.h"
#include "engine/model/kv_layout.h"
#include "engine/model/ledger.h"
#include "engine/model/model_config.h"
#include "engine/model/parallel.h"
#include "engine/model/weight_format.h"
#include "topologies/hardware.h"

namespace tokenline {

struct OpProfile;  // op_profile.h

struct CostOptions {
  bool ideal = false;  // seed's assumptions: 4.8 TB/s HBM, 787 GB/s NVLink, 25 GB/s IB,
                       // 5 us per collective, peak FLOPs, no kernel launch cost
  DpGather dp_gather = DpGather::kOncePerStep;
  bool indexer_read_scales = true;     // count the 4 B scale in indexer reads (132 B) or keys only (128 B)
  int64_t indexer_q_tile_tokens = 32;  // prefill: query tokens that share one pass over the indexer keys
  int64_t max_chunk_tokens = 32768;    // largest prefill chunk; sizes the activation reserve
  bool mtp = false;                    // run the MTP draft layer after each decode step
  bool force_ib = false;               // put collectives on IB even inside one NVLink domain
  // Measured op latencies and timing parameters (--profile); null: every op from the roofline. Not with
  // ideal (the seed's figures are rooflines).
  std::shared_ptr<const OpProfile> profile;
  // A run of many steps (`tokenline sim`): the profile's token and message curves remember their value at
  // each whole token count up to this (OpCurve::tabulate), one load per lookup after the first. 0: none (a
  // cost model priced a few times, as plan's pruning makes by the thousand, skips the table's fill).
  int64_t remembered_tokens = 0;
  // How a host-tier load-back overlaps the forward (cost/tier_transfer.h); used only with a host tier.
  TierLoadOverlap tier_load_overlap = TierLoadOverlap::kLayer;
};

// Rates and derived constants prebuilt once per (model, parallel, layout, hardware, options).
struct CostModel {
  ModelConfig model;
  Parallel parallel;
  KvLayout kv_layout = KvLayout::kFp8DsMla;
  Hardware hardware;  // as given; the rates below already apply efficiencies or the ideal figures
  CostOptions options;
  // effective rates, bytes/s and FLOP/s per GPU
  double hbm_bw = 0;
  double gemm_flops = 0;       // weight-dtype GEMMs
  double attention_flops = 0;  // sparse MLA / attention (BF16 math)
  double indexer_flops = 0;    // indexer scoring (FP8 math)
  double vector_flops = 0;     // norms, router softmax, sampling
  double link_bw = 0;          // collectives' bus bandwidth
  Link link = Link::kNvlink;
  // How tokens reach the experts (which collectives an MoE layer runs): the engine block of
  // options.profile where it has one (SGLang: local experts, TensorRT-LLM: gather / all-reduce), else the
  // seed's all-to-all (no profile: the roofline and the seed's engine, whose ledger prices DeepEP's).
  MoeComm moe_comm = MoeComm::kAllToAll;
  double collective_launch_s = 0;
  double kernel_launch_s = 0;
  // per-token-per-layer bytes
  int64_t kv_bytes_token_layer = 0;            // a full-attention layer's (and every layer's without windows)
  int64_t window_kv_bytes_token_layer = 0;     // a window layer's: the same but in Gemma 4 (narrower heads)
  int64_t indexer_bytes_token_layer = 0;       // written (132)
  int64_t indexer_read_bytes_token_layer = 0;  // read: 132, or 128 without scales
  // DeepSeek-V4 (kCompressed): a token's share of the compressed entries over all layers, the pool that grows
  // with the context (CSA: its KV entry and indexer key per 4 tokens; HCA: its KV entry per 128); every
  // layer's window is window_layers' (kv_bytes_token_layer each). 0 for other models.
  double compressed_kv_bytes_token = 0;
  // The pool that grows with the context, one token's bytes over all layers: the full-attention layers' KV
  // and DeepSeek-V4's compressed entries (the indexer cache and the window pool apart).
  double context_kv_bytes_token() const {
    return double(kv_bytes_token_layer) * full_attention_layers + compressed_kv_bytes_token;
  }
  double weight_bytes_per_param = 1;  // the attention projections' (group_bytes_per_param)
  // Attention layers by kind (ModelConfig::mixers, counted once here: step_cost asks every step).
  int full_attention_layers = 0;  // over the whole context: the layers whose KV grows with it (memory.h)
  int window_layers = 0;          // over at most model.window_tokens keys (sliding or chunked)
  // Of the full_attention_layers, those whose attention reads only their selected blocks (MiniMax-M3's
  // kBlockSparse, at most model.block_sparse.topk_tokens() keys a query); their KV is the whole context's.
  int block_sparse_layers = 0;
  bool chunked_window = false;  // the window layers are chunked (Llama 4), not sliding
  // Per weight group (WeightGroup's order): bytes per parameter with scales, and the GEMM rate (FLOP/s,
  // efficiency applied) of its format on this hardware. Equal across groups for a preset.
  std::array<double, kWeightGroupCount> group_bytes_per_param{};
  std::array<double, kWeightGroupCount> group_gemm_flops{};
  double bpp(WeightGroup g) const { return group_bytes_per_param[static_cast<size_t>(g)]; }
  double gemm_rate(WeightGroup g) const { return group_gemm_flops[static_cast<size_t>(g)]; }
  // MTP draft layer (CostOptions::mtp): parameters touched per token, and all its parameters
  double mtp_active_params = 0;
  double mtp_params = 0;
  // What prices each op: the roofline, or options.profile resolved for this model and layout. Never null.
  std::shared_ptr<const TimeSource> time_source;
};

// Under a measured profile: per weight group, the gemm / moe table rows that price it, e.g. "routed_experts
// int4-g32: int4_wo rows; attention bf16: bfloat16 rows; dense_mlp nvfp4: fp8_block rows scaled by bytes and
// rate (no rows of its own)"; "" under the roofline (op_profile_resolve.cpp).
std::string weight_rows_summary(const CostModel& cm);

// Builds the rates; validates the parallel layout and the KV layout against the model (InputError).
CostModel make_cost_model(const ModelConfig& model, const Parallel& parallel, KvLayout kv_layout,
                          const Hardware& hardware, const CostOptions& options = {});

}  // namespace tokenline
