// MiniMax-M3 (docs/layers.md "MiniMax-M3"): block-sparse GQA layers with an indexer where
// sparse_attention_config says, MoE where moe_layer_freq says, checked against its published config.json
// under data/hf/ (SOURCE.md); the expected values come from the file's text read by nlohmann, not from
// tokenline's reader.
#include <catch2/catch.hpp>
#include <fstream>
#include <string>

#include "common/input_error.h"
#include "cost/memory.h"
#include "cost/step_cost.h"
#include "engine/model/hf_quant_config.h"
#include "engine/model/model_config.h"
#include "tests/engine/model/family_test_data.h"

using namespace tokenline;
using namespace tokenline::family_test;
using nlohmann::json;

namespace {

constexpr const char* kM3 = "minimax-m3";

// A copy of the config with `edit` applied, as a file the loader reads.
std::string edited(testing::TestDir& dir, const char* name, void (*edit)(json&)) {
  json j = parse_checkpoint_json(testing::read_all(hf(kM3) + "/config.json"), kM3);
  edit(j);
  const std::string path = dir.file(name);
  std::ofstream(path) << j.dump();
  return path;
}

}  // namespace

TEST_CASE(
    "MiniMax-M3 loads: block-sparse layers where sparse_attention_freq says, MoE where moe_layer_freq says",
    "[hf_config][families][minimax]") {
  const json j = text_config(kM3);
  const json& sac = j["sparse_attention_config"];
  const ModelConfig m = load_model(hf(kM3));
  const int layers = j["num_hidden_layers"];
  REQUIRE(m.layers == layers);
  CHECK(m.attention == AttentionKind::kGqa);
  int sparse = 0, moe = 0;
  for (int l = 0; l < layers; ++l) {
    const bool want = sac["sparse_attention_freq"][l] == 1;
    sparse += want ? 1 : 0;
    moe += j["moe_layer_freq"][l] == 1 ? 1 : 0;
    CHECK((m.mixers[size_t(l)] == MixerKind::kBlockSparse) == want);
    CHECK((m.ffns[size_t(l)] == FfnKind::kMoe) == (j["moe_layer_freq"][l] == 1));
  }
  CHECK(sparse == 57);
  CHECK(m.mixer_layers(MixerKind::kBlockSparse) == sparse);
  CHECK(m.full_attention_layers() == layers);  // every layer keeps the whole context's KV
  CHECK(m.window_layers() == 0);
  CHECK(m.indexer_cache_layers() == sparse);
  CHECK_FALSE(m.has_indexer());  // not DSA's
  CHECK(m.block_sparse.index_heads == sac["sparse_num_index_heads"].get<int>());
  CHECK(m.block_sparse.index_dim == sac["sparse_index_dim"].get<int64_t>());
  CHECK(m.block_sparse.topk_tokens() ==
        sac["sparse_topk_blocks"].get<int64_t>() * sac["sparse_block_size"].get<int64_t>());
  CHECK(m.moe_layers() == moe);
  CHECK(m.mlp_dense_layers() == layers - moe);
  CHECK(m.routed_experts == j["num_local_experts"].get<int>());
  CHECK(m.experts_per_token == j["num_experts_per_tok"].get<int>());
  CHECK(m.moe_intermediate == j["moe_intermediate_size"].get<int64_t>());
  CHECK(m.dense_intermediate == j["dense_intermediate_size"].get<int64_t>());
  CHECK(m.shared_experts == 1);  // one of shared_intermediate_size, the routed experts' width
  CHECK(m.qk_norm);
  CHECK_FALSE(m.qk_norm_all_heads);  // qk_norm_type per_head
  CHECK(m.router_score_bias);
  CHECK(m.mtp_layers == j["num_nextn_predict_layers"].get<int>());
  // K and V of the KV heads, and one BF16 index key per token on the sparse layers.
  const int64_t kv = 2 * j["num_key_value_heads"].get<int64_t>() * j["head_dim"].get<int64_t>();
  CHECK(kv_bytes_per_token_layer(KvLayout::kFp8E4m3, m) == kv);
  CHECK(indexer_bytes_per_token_layer(m) == sac["sparse_index_dim"].get<int64_t>() * 2);
}

TEST_CASE("MiniMax-M3's parameters: the config's shapes, within 0.3% of its checkpoint's tensors",
          "[hf_config][families][minimax]") {
  const json j = text_config(kM3);
  const double h = j["hidden_size"], heads = j["num_attention_heads"], kv = j["num_key_value_heads"],
               hd = j["head_dim"], experts = j["num_local_experts"];
  const double attention = 60 * (h * heads * hd + 2 * h * kv * hd + heads * hd * h + 2 * hd);  // q/k norms
  const double ih = j["sparse_attention_config"]["sparse_num_index_heads"],
               id = j["sparse_attention_config"]["sparse_index_dim"];
  const double indexer = 57 * (h * ih * id + h * id + 2 * id);  // index_q, index_k and their norms
  const double expert = 3 * h * double(j["moe_intermediate_size"]);
  const double moe = 57 * (experts * expert + 3 * h * double(j["shared_intermediate_size"]) + experts * h +
                           experts);  // routed, shared, router, score bias
  const double dense = 3 * 3 * h * double(j["dense_intermediate_size"]);
  const double norms = h * 2 * 60 + h, embed = double(j["vocab_size"]) * h;
  const double want = attention + indexer + moe + dense + norms + 2 * embed;
  const ParamCounts p = count_params(load_model(hf(kM3)));
  CHECK(p.total() == Approx(want).epsilon(1e-9));
  CHECK(p.indexer == Approx(indexer).epsilon(1e-9));
  // MiniMaxAI/MiniMax-M3 at revision f0e1c1e: 59 BF16 safetensors shards of 854,176,398,808 bytes (the Hub's
  // file sizes), the 0.6B-parameter vision tower and its projector among them.
  CHECK(p.total() * 2 == Approx(854'176'398'808.0).epsilon(0.003));
  CHECK(p.total() * 2 < 854'176'398'808.0);
}

TEST_CASE("MiniMax-M3 under its minimax_m3_vl wrapper reads the text_config and leaves the vision tower out",
          "[hf_config][families][minimax]") {
  testing::TestDir dir("families_minimax_wrapper");
  const json text = text_config(kM3);
  json top = {{"model_type", "minimax_m3_vl"},
              {"architectures", {"MiniMaxM3SparseForConditionalGeneration"}},
              {"vision_config", {{"hidden_size", 1280}, {"num_hidden_layers", 32}}},
              {"text_config", text}};
  top["text_config"].erase("model_type");  // read by the wrapper's model_type
  const std::string path = dir.file("config.json");
  std::ofstream(path) << top.dump();
  const ModelConfig m = load_model(path);
  CHECK(m.mixer_layers(MixerKind::kBlockSparse) == 57);
  CHECK(count_params(m).total() == Approx(count_params(load_model(hf(kM3))).total()).epsilon(1e-12));
  CHECK_THAT(m.left_out, Catch::Contains("vision_config"));
}

TEST_CASE("MiniMax-M3 configs tokenline cannot read as written are refused naming the field",
          "[hf_config][families][minimax]") {
  testing::TestDir dir("families_minimax_refused");
  // An index-value projection on a sparse layer: a mechanism not modelled.
  CHECK_THROWS_WITH(
      load_model(edited(dir, "value.json",
                        [](json& j) { j["sparse_attention_config"]["sparse_disable_index_value"][3] = 0; })),
      Catch::Contains("sparse_attention_config.sparse_disable_index_value[3]: expected 1 on a sparse layer"));
  // More blocks than the context holds.
  CHECK_THROWS_WITH(
      load_model(edited(dir, "topk.json",
                        [](json& j) { j["sparse_attention_config"]["sparse_topk_blocks"] = 9000; })),
      Catch::Contains("sparse_attention_config.sparse_topk_blocks") && Catch::Contains("9000"));
  // Forced blocks beyond the top-k, a per-layer list of the wrong length, an object that is not one.
  CHECK_THROWS_WITH(
      load_model(edited(dir, "local.json",
                        [](json& j) { j["sparse_attention_config"]["sparse_local_block"] = 17; })),
      Catch::Contains("sparse_attention_config.sparse_local_block") && Catch::Contains("17"));
  CHECK_THROWS_WITH(
      load_model(edited(dir, "freq.json",
                        [](json& j) { j["sparse_attention_config"]["sparse_attention_freq"] = {1}; })),
      Catch::Contains("sparse_attention_config.sparse_attention_freq") && Catch::Contains("1 entries"));
  CHECK_THROWS_WITH(load_model(edited(dir, "sac.json", [](json& j) { j["sparse_attention_config"] = 5; })),
                    Catch::Contains("sparse_attention_config: expected an object"));
  CHECK_THROWS_WITH(
      load_model(edited(dir, "shared.json", [](json& j) { j["shared_intermediate_size"] = 1000; })),
      Catch::Contains("shared_intermediate_size") && Catch::Contains("1000"));
  // use_sparse_attention false: every layer full attention, no indexer.
  const ModelConfig dense = load_model(
      edited(dir, "off.json", [](json& j) { j["sparse_attention_config"]["use_sparse_attention"] = false; }));
  CHECK_FALSE(dense.has_block_sparse());
  CHECK(dense.indexer_cache_layers() == 0);
  CHECK(count_params(dense).indexer == 0);
}

TEST_CASE("MiniMax-M3's step: sparse layers read at most their top-k blocks, the indexer every cached key",
          "[families][minimax][step_cost]") {
  const ModelConfig m = load_model(hf(kM3));
  const CostModel cm =
      make_cost_model(m, parse_parallel("tp8", "test"), KvLayout::kFp8E4m3, load_hardware("b200"));
  REQUIRE(cm.block_sparse_layers == 57);
  const StepCost a = decode_step(cm, 4, 65'536), b = decode_step(cm, 4, 131'072);
  // Attention: the 3 dense layers' KV read doubles with the context, the 57 sparse layers' stays 2,048 keys.
  const double per_key = double(cm.kv_bytes_token_layer);  // a rank's GPUs together hold every KV head
  const double dense_a = 3.0 * 4 * 65'537 * per_key, dense_b = 3.0 * 4 * 131'073 * per_key;
  const double sparse_keys = 57.0 * 4 * 2048 * per_key;
  CHECK(a[Op::kSparseMla].kv_bytes == Approx(dense_a + sparse_keys));
  CHECK(b[Op::kSparseMla].kv_bytes == Approx(dense_b + sparse_keys));
  CHECK(a[Op::kSparseMla].layers == 60);
  // The indexer reads every cached index key, whole on each of the 8 GPUs.
  const double key = double(indexer_bytes_per_token_layer(m));
  CHECK(a[Op::kIndexerScore].indexer_bytes == Approx(57.0 * 4 * 65'537 * key * 8));
  CHECK(b[Op::kIndexerScore].indexer_bytes == Approx(57.0 * 4 * 131'073 * key * 8));
  CHECK(a[Op::kTopkSelect].layers == 57);
  // Within the top-k's 2,048 keys every block is taken: the indexer scores nothing.
  const StepCost short_ctx = decode_step(cm, 4, 1000);
  CHECK(short_ctx[Op::kIndexerScore].rank_flops == 0);
  CHECK(short_ctx[Op::kSparseMla].kv_bytes == Approx(60.0 * 4 * 1001 * per_key));
  // A prefill chunk of 16,384 tokens: each query over at most 2,048 keys on the sparse layers.
  const StepCost p = prefill_step(cm, 16'384, 0, true);
  const double causal = 16'384.0 * 16'385 / 2, capped = 2048.0 * 2049 / 2 + (16'384.0 - 2048) * 2048;
  const double flops_per_key = 64.0 * 2 * (128 + 128);
  CHECK(p[Op::kSparseMla].rank_flops == Approx((3 * causal + 57 * capped) * flops_per_key));
}

TEST_CASE("MiniMax-M3's KV per GPU: the KV heads shared out, the index key whole on every GPU",
          "[families][minimax][kv]") {
  const ModelConfig m = load_model(hf(kM3));
  const CostModel cm =
      make_cost_model(m, parse_parallel("tp8", "test"), KvLayout::kFp8E4m3, load_hardware("b200"));
  const KvTokenBytes t = kv_bytes_per_token_per_gpu(cm, KvPlacement::kPerTpRank);
  // 4 KV heads over 8 GPUs: one head (a quarter of the K and V) each; 57 index keys of 256 B each.
  CHECK(t.main == Approx(60.0 * 2 * 4 * 128 / 4));
  CHECK(t.indexer == Approx(57.0 * 128 * 2));
  // The seed's placement shares everything over the rank's GPUs.
  CHECK(kv_bytes_per_token_per_gpu(cm, KvPlacement::kShardedOverTp).indexer == Approx(57.0 * 128 * 2 / 8));
}

// MiniMaxAI/MiniMax-M3-MXFP8 as vLLM's Mxfp8Config reads it (quant_method mxfp8, ignored_layers), and the
// NVFP4-expert variant (moe_quant_algo, as MiniMax-M3.1's exports write it).
TEST_CASE("MiniMax-M3's MXFP8 checkpoints: E4M3 with a scale per 32, ignored layers BF16, NVFP4 experts",
          "[hf_config][families][minimax][weight_format]") {
  testing::TestDir dir("families_minimax_mxfp8");
  const std::string mxfp8 = edited(dir, "mxfp8.json", [](json& j) {
    j["quantization_config"] = {
        {"quant_method", "mxfp8"},
        {"weight_block_size", {1, 32}},
        {"ignored_layers", {"lm_head", "model.embed_tokens", "block_sparse_moe.gate"}}};
  });
  const ModelConfig m = load_model(mxfp8);
  CHECK(m.weights.quantized.kind == WeightFormatKind::kMxfp8);
  CHECK(weight_format_name(m.weights.quantized) == "mxfp8");
  for (const WeightGroup g : {WeightGroup::kAttention, WeightGroup::kIndexer, WeightGroup::kDenseMlp,
                              WeightGroup::kRoutedExperts, WeightGroup::kSharedExperts})
    CHECK(group_bytes_per_param(m, g) == Approx(1 + 1.0 / 32).epsilon(1e-3));  // norms in BF16 beside
  CHECK(group_bytes_per_param(m, WeightGroup::kRouter) == 2);                  // ignored: BF16
  CHECK(group_bytes_per_param(m, WeightGroup::kLmHead) == 2);
  CHECK(group_bytes_per_param(m, WeightGroup::kEmbed) == 2);
  // The GEMMs at the FP8 rate.
  const Hardware b200 = load_hardware("b200");
  CHECK(group_gemm_peak_flops(m, WeightGroup::kRoutedExperts, b200) == b200.peak_flops_fp8);
  // --weights-format mxfp8 on the BF16 checkpoint gives the same bytes.
  ModelConfig overridden = load_model(hf(kM3));
  override_weight_format(overridden, "mxfp8");
  CHECK(group_bytes_per_param(overridden, WeightGroup::kRoutedExperts) == Approx(1 + 1.0 / 32));
  // NVFP4 experts beside MXFP8 Linear layers.
  const ModelConfig nvfp4 = load_model(edited(dir, "nvfp4.json", [](json& j) {
    j["quantization_config"] = {{"quant_method", "mxfp8"}, {"moe_quant_algo", "NVFP4"}};
  }));
  CHECK(group_bytes_per_param(nvfp4, WeightGroup::kRoutedExperts) == Approx(0.5 + 1.0 / 16));
  CHECK(group_bytes_per_param(nvfp4, WeightGroup::kAttention) == Approx(1 + 1.0 / 32));
  // What is not MXFP8 is refused naming the field.
  CHECK_THROWS_WITH(
      load_model(
          edited(dir, "block.json",
                 [](json& j) {
                   j["quantization_config"] = {{"quant_method", "mxfp8"}, {"weight_block_size", {128, 128}}};
                 })),
      Catch::Contains("quantization_config.weight_block_size: expected [1, 32]"));
  CHECK_THROWS_WITH(
      load_model(edited(dir, "moe.json",
                        [](json& j) {
                          j["quantization_config"] = {{"quant_method", "mxfp8"}, {"moe_quant_algo", "W4A8"}};
                        })),
      Catch::Contains("quantization_config.moe_quant_algo") && Catch::Contains("W4A8"));
}

// nvidia/MiniMax-M3-NVFP4 as its config.json writes it (aiconfigurator 095f58a's copy, 2.4 MB, not shipped):
// ModelOpt MIXED_PRECISION whose quantized_layers name every routed expert's projections one by one (22,422
// modules), NVFP4 there and MXFP8 on the attention, indexer, dense and shared-expert layers.
TEST_CASE("MiniMax-M3's NVFP4 export: MXFP8 layers, NVFP4 experts named one by one, over 8,192 modules",
          "[hf_config][families][minimax][weight_format]") {
  testing::TestDir dir("families_minimax_nvfp4");
  const std::string path = edited(dir, "nvfp4.json", [](json& j) {
    json layers = json::object();
    const std::string at = "language_model.model.layers.";
    for (int l = 0; l < 60; ++l) {
      const std::string layer = at + std::to_string(l) + ".";
      for (const char* p : {"q_proj", "k_proj", "v_proj", "o_proj"})
        layers[layer + "self_attn." + p] = {{"quant_algo", "MXFP8"}};
      if (l < 3) {
        for (const char* p : {"gate_proj", "up_proj", "down_proj"})
          layers[layer + "mlp." + p] = {{"quant_algo", "MXFP8"}};
        continue;
      }
      for (const char* p : {"index_q_proj", "index_k_proj"})
        layers[layer + "self_attn." + p] = {{"quant_algo", "MXFP8"}};
      for (const char* p : {"gate_proj", "up_proj", "down_proj"})
        layers[layer + "block_sparse_moe.shared_experts." + p] = {{"quant_algo", "MXFP8"}};
      for (int e = 0; e < 128; ++e)
        for (const char* p : {"w1", "w2", "w3"})
          layers[layer + "block_sparse_moe.experts." + std::to_string(e) + "." + p] = {
              {"quant_algo", "NVFP4"}, {"group_size", 16}};
    }
    REQUIRE(layers.size() > 8192);
    j["quantization_config"] = {
        {"quant_method", "modelopt"},
        {"quant_algo", "MIXED_PRECISION"},
        {"exclude_modules", {"lm_head", "model.embed_tokens", "*block_sparse_moe.gate"}},
        {"quantized_layers", layers}};
  });
  const ModelConfig m = load_model(path);
  CHECK(group_bytes_per_param(m, WeightGroup::kRoutedExperts) == Approx(0.5 + 1.0 / 16));
  for (const WeightGroup g :
       {WeightGroup::kAttention, WeightGroup::kIndexer, WeightGroup::kDenseMlp, WeightGroup::kSharedExperts})
    CHECK(group_bytes_per_param(m, g) == Approx(1 + 1.0 / 32).epsilon(1e-3));
  CHECK(group_bytes_per_param(m, WeightGroup::kRouter) == 2);
  CHECK(group_bytes_per_param(m, WeightGroup::kLmHead) == 2);
}
