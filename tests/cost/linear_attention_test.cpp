// Linear-attention layers priced per kind (docs/layers.md): Qwen3.5-397B-A17B's 45 Gated DeltaNet layers as
// gdn_proj / gdn_scan rows, its 15 full-attention layers as the attention rows, the state read and written
// per decode token, the state slots sized beside the KV, and its weights per GPU.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "cost/memory.h"
#include "cost/step_cost.h"
#include "engine/model/linear_state.h"
#include "run/model_files.h"
#include "topologies/hardware_loader.h"

using namespace tokenline;

namespace {

ModelConfig qwen35() {
  return load_model(std::string(TOKENLINE_MODEL_TEST_DATA) + "/hf/qwen3.5-397b-a17b");
}

CostModel cm_of(const ModelConfig& m, const char* parallel) {
  return make_cost_model(m, parse_parallel(parallel, "t"), KvLayout::kBf16, load_hardware("h200"));
}

}  // namespace

TEST_CASE("A hybrid's ledger: GDN rows over its 45 linear layers, attention rows over its 15 full ones",
          "[linear][step_cost]") {
  const CostModel cm = cm_of(qwen35(), "tp8");
  const StepCost s = decode_step(cm, 16, 4096);
  CHECK(s[Op::kGdnProj].count == 45);
  CHECK(s[Op::kGdnScan].count == 45);
  CHECK(s[Op::kAProj].count == 15);
  CHECK(s[Op::kSparseMla].count == 15);
  CHECK(s[Op::kNormRopeKvWrite].count == 15);
  CHECK(s[Op::kOProj].count == 15);
  CHECK(s[Op::kRmsnorm].count == 120);
  CHECK(s[Op::kMamba2Scan].count == 0);
  CHECK(s[Op::kAttnAllreduce].count == 60);  // every layer's mixer reduces over TP
  CHECK(op_name(Op::kGdnScan) == "gdn_scan");
  // A Llama ledger has no linear-attention rows.
  const CostModel llama = make_cost_model(model_preset("llama-3.1-8b"), parse_parallel("tp1", "t"),
                                          KvLayout::kBf16, load_hardware("h200"));
  const StepCost l = decode_step(llama, 16, 4096);
  for (const Op op : {Op::kGdnProj, Op::kGdnScan, Op::kMamba2Proj, Op::kMamba2Scan}) {
    CHECK(l[op].count == 0);
    CHECK(l[op].time_s == 0);
  }
  CHECK(l[Op::kAProj].count == 32);
}

TEST_CASE("Decode reads and writes each request's state once per token, whatever the context",
          "[linear][step_cost]") {
  const CostModel cm = cm_of(qwen35(), "tp8");
  const int64_t per_layer = linear_state_bytes(cm.model, MixerKind::kGatedDeltaNet, 8).total();
  const StepCost a = decode_step(cm, 16, 4096);
  // Per GPU: 45 layers x 16 requests x (read + write) x the layer's state; the rank's 8 GPUs each do it.
  CHECK(a[Op::kGdnScan].kv_bytes == Approx(45.0 * 16 * 2 * double(per_layer) * 8));
  const StepCost longer = decode_step(cm, 16, 65536);
  CHECK(longer[Op::kGdnScan].kv_bytes == a[Op::kGdnScan].kv_bytes);
  CHECK(longer[Op::kSparseMla].kv_bytes > 10 * a[Op::kSparseMla].kv_bytes);  // full attention grows
  CHECK(decode_step(cm, 32, 4096)[Op::kGdnScan].kv_bytes == Approx(2 * a[Op::kGdnScan].kv_bytes));
}

TEST_CASE("Prefill's chunked scan grows linearly with the prompt, attention quadratically",
          "[linear][step_cost]") {
  const CostModel cm = cm_of(qwen35(), "tp8");
  const StepCost p8 = prefill_step(cm, 8192, 0, true);
  const StepCost p16 = prefill_step(cm, 16384, 0, true);
  CHECK(p16[Op::kGdnScan].rank_flops / p8[Op::kGdnScan].rank_flops == Approx(2.0).epsilon(0.01));
  CHECK(p16[Op::kSparseMla].rank_flops / p8[Op::kSparseMla].rank_flops == Approx(4.0).epsilon(0.01));
  CHECK(p8[Op::kGdnScan].time_s > 0);
  CHECK(p8[Op::kGdnProj].time_s > 0);
}

TEST_CASE("State slots take SGLang's mamba share of the free memory, KV counts the full layers only",
          "[linear][memory]") {
  const CostModel cm = cm_of(qwen35(), "tp8");
  const KvCapacity k = kv_capacity(cm, sglang_behavior(), 4096);
  REQUIRE(k.weights_fit);
  const int64_t slot = linear_state_bytes_per_request(cm.model, 8);
  CHECK(k.state.bytes_per_slot == slot);
  const double before = k.free_bytes + k.state.bytes;  // what was free for caches
  CHECK(k.state.slots_per_rank == int64_t(std::floor(before * 0.9 / 1.9 / double(slot))));
  CHECK(k.state.slots_per_rank > 64);
  // 15 full layers x K and V x one KV head per GPU (2 over 8 GPUs, at least one) x 256 x BF16.
  CHECK(k.bytes_per_token == 15.0 * 2 * 1 * 256 * 2);
  CHECK(k.max_concurrent_requests <= k.state.slots_per_rank);
  // A model without linear layers has no slots.
  CHECK(kv_capacity(cm_of(model_preset("llama-3.1-70b"), "tp8"), sglang_behavior(), 4096)
            .state.slots_per_rank == 0);
}

TEST_CASE("Qwen3.5-397B-A17B weights per GPU: BF16 and FP8 blocks match the tensors' bytes",
          "[linear][memory][weights]") {
  // The checkpoint's tensors (transformers' Qwen3_5Moe modules, the shapes from its config.json), counted
  // apart from count_params: the text model, its MTP layer not run.
  const double h = 4096, v = 248320, layers = 60, gdn = 45, full = 15, experts = 512, inter = 1024;
  const double key = 16 * 128, value = 64 * 128;
  struct Linear {
    double count, out, in;
  };
  const std::vector<Linear> linears = {{gdn, 2 * key + value, h},
                                       {gdn, value, h},
                                       {gdn, 2 * 64, h},
                                       {gdn, h, value},
                                       {full, 2 * 32 * 256, h},
                                       {full, 2 * 2 * 256, h},
                                       {full, h, 32 * 256},
                                       {3 * layers, inter, h},
                                       {2 * layers * experts, inter, h},
                                       {layers * experts, h, inter}};
  double linear_params = 0, fp8_bytes = 0;
  for (const Linear& l : linears) {
    linear_params += l.count * l.out * l.in;
    // FP8 128 x 128 blocks: a byte per weight and a float32 scale per block (weight_scale_inv).
    fp8_bytes += l.count * (l.out * l.in + std::ceil(l.out / 128) * std::ceil(l.in / 128) * 4);
  }
  const double other = 2 * v * h + (1 + 2 * layers) * h + gdn * ((2 * key + value) * 4 + 2 * 64 + 128) +
                       full * 2 * 256 + layers * (experts * h + h);  // embed, lm_head, norms, conv, gates
  const double bf16 = 2 * (linear_params + other);
  CHECK(bf16 / 1e9 == Approx(2 * 396.9).epsilon(0.01));  // the model card's 397B
  ModelConfig m = qwen35();
  CHECK(weight_bytes_per_gpu(cm_of(m, "tp8")).total() * 8 == Approx(bf16).epsilon(0.02));
  // FP8 blocks on the Linear layers (--weights-format fp8-block128; Qwen's FP8 release quantizes these),
  // embeddings, norms, routers and the LM head in BF16.
  override_weight_format(m, "fp8-block128");
  CHECK(weight_bytes_per_gpu(cm_of(m, "tp8")).total() * 8 == Approx(fp8_bytes + 2 * other).epsilon(0.02));
}
