#include <catch2/catch.hpp>
#include <fstream>
#include <string>

#include "common/input_error.h"
#include "engine/model/model_config.h"
#include "run/model_files.h"
#include "tests/traces/test_dir.h"

using namespace tokenline;

namespace {
std::string data(const char* name) {
  return std::string(TOKENLINE_MODEL_TEST_DATA) + "/" + name;
}

// Llama-3.1-8B's config.json with `extra` spliced in after the first brace, written to a scratch file.
std::string llama_with(const testing::TestDir& dir, const std::string& name, const std::string& extra) {
  std::string body = testing::read_all(data("llama-3.1-8b.json"));
  body.insert(body.find('{') + 1, "\n  " + extra + ",");
  const std::string path = dir.file(name);
  std::ofstream(path) << body;
  return path;
}
}  // namespace

TEST_CASE("A glm_moe_dsa config.json loads to the glm-5.3 preset's constants", "[hf_config]") {
  const ModelConfig a = load_model(data("glm-5.3"));  // a directory holding config.json
  const ModelConfig b = model_preset("glm-5.3");
  CHECK(a.hf_model_type == "glm_moe_dsa");
  CHECK(a.layers == b.layers);
  CHECK(a.dense_layers == b.dense_layers);
  CHECK(a.hidden == b.hidden);
  CHECK(a.q_lora_rank == b.q_lora_rank);
  CHECK(a.kv_lora_rank == b.kv_lora_rank);
  CHECK(a.qk_nope_head_dim == b.qk_nope_head_dim);
  CHECK(a.v_head_dim == b.v_head_dim);
  CHECK(a.indexer_heads == b.indexer_heads);
  CHECK(a.indexer_topk == b.indexer_topk);
  CHECK(a.indexer_full_layers == 21);
  CHECK(a.weight_dtype == Dtype::kFp8);
  CHECK(a.default_kv_layout == KvLayout::kFp8DsMla);
  CHECK(count_params(a).total() == count_params(b).total());
}

TEST_CASE("deepseek_v3, deepseek_v32 and llama configs load", "[hf_config]") {
  const ModelConfig v3 = load_hf_config(data("deepseek_v3.json"));
  CHECK_FALSE(v3.has_indexer());
  CHECK(count_params(v3).total() == count_params(model_preset("deepseek-v3")).total());
  const ModelConfig v32 = load_hf_config(data("deepseek_v32.json"));
  CHECK(v32.indexer_full_layers == 61);  // no index_full_layers field: every layer scores
  const ModelConfig llama = load_hf_config(data("llama-3.1-8b.json"));
  CHECK(llama.attention == AttentionKind::kGqa);
  CHECK(llama.head_dim == 128);
  CHECK(llama.weight_dtype == Dtype::kBf16);
  CHECK(count_params(llama).total() == Approx(8.03e9).epsilon(0.005));
}

TEST_CASE("Malformed config.json files name the file and the field", "[hf_config]") {
  CHECK_THROWS_WITH(load_hf_config(data("truncated.json")),
                    Catch::Contains("truncated.json") && Catch::Contains("valid JSON"));
  CHECK_THROWS_WITH(load_hf_config(data("missing_field.json")),
                    Catch::Contains("missing_field.json: kv_lora_rank") && Catch::Contains("no such field"));
  CHECK_THROWS_WITH(load_hf_config(data("wrong_type.json")),
                    Catch::Contains("wrong_type.json: hidden_size") && Catch::Contains("\"4096\""));
  CHECK_THROWS_WITH(load_hf_config(data("unknown_type.json")), Catch::Contains("model_type") &&
                                                                   Catch::Contains("qwen3_moe") &&
                                                                   Catch::Contains("'mamba'"));
  CHECK_THROWS_WITH(load_hf_config(data("bad_block.json")),
                    Catch::Contains("bad_block.json: quantization_config.weight_block_size") &&
                        Catch::Contains("[128,64]"));
  CHECK_THROWS_WITH(load_hf_config(data("bad_experts.json")),
                    Catch::Contains("num_experts_per_tok") && Catch::Contains("300"));
  CHECK_THROWS_WITH(load_model(data("no_such_file.json")), Catch::Contains("no_such_file.json"));
}

TEST_CASE("A qwen3_moe config loads as GQA with routed experts, no shared expert, FP8 blocks",
          "[hf_config]") {
  const ModelConfig q = load_hf_config(data("qwen3-235b-a22b-fp8.json"));
  CHECK(q.hf_model_type == "qwen3_moe");
  CHECK(q.attention == AttentionKind::kGqa);
  CHECK(q.kv_heads == 4);
  CHECK(q.head_dim == 128);
  CHECK(q.qk_norm);
  CHECK(q.routed_experts == 128);
  CHECK(q.experts_per_token == 8);
  CHECK(q.shared_experts == 0);
  CHECK_FALSE(q.router_score_bias);
  CHECK(q.moe_intermediate == 1536);
  CHECK(q.moe_layers() == 94);
  CHECK(q.mlp_dense_layers() == 0);
  CHECK(q.weight_dtype == Dtype::kFp8);
  CHECK(q.weight_block == 128);
  CHECK(q.default_kv_layout == KvLayout::kBf16);
  // The model card: 235B total, 22B activated parameters.
  const ParamCounts p = count_params(q);
  CHECK(p.total() == Approx(235.1e9).epsilon(0.005));
  CHECK(p.active() == Approx(22.2e9).epsilon(0.01));
  CHECK(p.shared_experts == 0);
}

TEST_CASE("qwen3_moe: decoder_sparse_step and mlp_only_layers make dense layers", "[hf_config]") {
  // 8 layers, step 2: layers 1, 3, 5, 7 are sparse; mlp_only_layers [1] makes layer 1 dense too.
  const ModelConfig q = load_hf_config(data("qwen3_moe_sparse_step.json"));
  CHECK(q.mlp_dense_layers() == 5);
  CHECK(q.moe_layers() == 3);
  CHECK(q.weight_dtype == Dtype::kBf16);
  CHECK(q.weight_block == 0);
  const ParamCounts p = count_params(q);
  CHECK(p.dense_mlp == Approx(5 * 3.0 * 512 * 1024));
  CHECK(p.routed_experts == Approx(3 * 16 * 3.0 * 512 * 256));
  CHECK(p.router == Approx(3 * 16.0 * 512));  // no score bias
}

TEST_CASE("DeepSeek-V3 configs carry FP8 128x128 weight blocks", "[hf_config]") {
  CHECK(load_hf_config(data("deepseek_v3.json")).weight_block == 128);
  CHECK(model_preset("deepseek-v3").weight_block == 128);
  CHECK(load_hf_config(data("llama-3.1-8b.json")).weight_block == 0);
}

TEST_CASE("qwen3, qwen2, mistral and mixtral configs load as GQA models with their model cards' sizes",
          "[hf_config]") {
  // Qwen3-32B: its own head_dim (128, not hidden / heads = 80) and q/k norms; 32.8B parameters.
  const ModelConfig q3 = load_hf_config(data("qwen3-32b.json"));
  CHECK(q3.attention == AttentionKind::kGqa);
  CHECK(q3.head_dim == 128);
  CHECK(q3.kv_heads == 8);
  CHECK(q3.qk_norm);
  CHECK_FALSE(q3.qk_norm_all_heads);  // Qwen3Attention's q_norm / k_norm: RMSNorm(head_dim), per head
  CHECK(q3.routed_experts == 0);
  CHECK(count_params(q3).total() == Approx(32.8e9).epsilon(0.005));
  // Qwen2.5-72B: 72.7B; its sliding_window field is off (use_sliding_window false).
  const ModelConfig q2 = load_hf_config(data("qwen2.5-72b.json"));
  CHECK_FALSE(q2.qk_norm);
  CHECK(q2.head_dim == 128);
  CHECK(count_params(q2).total() == Approx(72.7e9).epsilon(0.005));
  // Mistral-7B-v0.3: 7.25B.
  const ModelConfig m = load_hf_config(data("mistral-7b-v0.3.json"));
  CHECK(count_params(m).total() == Approx(7.25e9).epsilon(0.005));
  // Mixtral-8x7B: 8 experts of intermediate_size, top 2, no shared expert; 46.7B total, 12.9B active.
  const ModelConfig x = load_hf_config(data("mixtral-8x7b.json"));
  CHECK(x.routed_experts == 8);
  CHECK(x.experts_per_token == 2);
  CHECK(x.moe_intermediate == 14336);
  CHECK(x.shared_experts == 0);
  CHECK_FALSE(x.router_score_bias);
  CHECK(x.moe_layers() == 32);
  CHECK(x.mlp_dense_layers() == 0);
  const ParamCounts px = count_params(x);
  CHECK(px.total() == Approx(46.7e9).epsilon(0.005));
  CHECK(px.active() == Approx(12.9e9).epsilon(0.01));
}

TEST_CASE("glm4_moe (GLM-4.5 / 4.6) loads as GQA with DeepSeek-V3's MoE", "[hf_config]") {
  // GLM-4.5-Air's config.json (transformers' Glm4MoeConfig as published): 46 layers, the first dense, 128
  // routed experts + 1 shared of 1,408, top 8, 96 heads of 128 over 8 KV heads, one MTP layer. Its model
  // card: 106B total, 12B active (its active count leaves out the embedding and output matrices).
  const ModelConfig g = load_hf_config(data("glm-4.5-air.json"));
  CHECK(g.attention == AttentionKind::kGqa);
  CHECK(g.kv_heads == 8);
  CHECK(g.head_dim == 128);
  CHECK_FALSE(g.qk_norm);
  CHECK(g.routed_experts == 128);
  CHECK(g.shared_experts == 1);
  CHECK(g.experts_per_token == 8);
  CHECK(g.moe_intermediate == 1408);
  CHECK(g.router_score_bias);
  CHECK(g.mlp_dense_layers() == 1);
  CHECK(g.moe_layers() == 45);
  CHECK(g.mtp_layers == 1);
  const ParamCounts p = count_params(g);
  INFO("total " << p.total() << ", active " << p.active());
  CHECK(p.total() == Approx(106e9).epsilon(0.02));
  const double embedding_and_output = 2.0 * double(g.vocab) * double(g.hidden);
  CHECK(p.active() - embedding_and_output == Approx(12e9).epsilon(0.02));
}

TEST_CASE("A sliding-window attention config is refused, naming the field", "[hf_config]") {
  CHECK_THROWS_WITH(load_hf_config(data("sliding_window.json")),
                    Catch::Contains("sliding_window.json: sliding_window") && Catch::Contains("4096"));
  CHECK_THROWS_WITH(
      load_hf_config(data("qwen_sliding_window.json")),
      Catch::Contains("qwen_sliding_window.json: use_sliding_window") && Catch::Contains("full attention"));
}

TEST_CASE("A model_type tokenline does not know loads by its architectures class", "[hf_config]") {
  // Kimi-K2: model_type kimi_k2, a DeepseekV3ForCausalLM with 384 experts and 64 heads; its model card
  // says 1T parameters, 32B activated.
  const ModelConfig k = load_hf_config(data("kimi-k2.json"));
  CHECK(k.hf_model_type == "kimi_k2");
  CHECK(k.attention == AttentionKind::kMla);
  CHECK(k.routed_experts == 384);
  CHECK(k.heads == 64);
  CHECK(k.dense_layers == 1);
  CHECK(k.weight_block == 128);
  const ParamCounts p = count_params(k);
  CHECK(p.total() > 1.0e12);
  CHECK(p.total() < 1.05e12);
  CHECK(p.active() == Approx(32.5e9).epsilon(0.03));
}

TEST_CASE("Kimi-K2.5's kimi_k25 wrapper: text_config read, the vision tower left out and said so",
          "[hf_config]") {
  const ModelConfig k = load_hf_config(data("hf/kimi-k2.5/config.json"));
  CHECK(k.hf_model_type == "kimi_k2");
  CHECK(k.attention == AttentionKind::kMla);
  CHECK(k.routed_experts == 384);
  CHECK(k.layers == 61);
  CHECK(k.max_context_tokens == 262144);
  CHECK_THAT(k.left_out, Catch::Contains("vision_config"));
  // compressed-tensors INT4 W4A16: routed experts only (ignore: lm_head, self_attn, shared_experts, mlp).
  CHECK(k.weights.source == "quantization_config");
  CHECK(k.weights.share(WeightGroup::kRoutedExperts) == 1);
  CHECK(k.weights.share(WeightGroup::kSharedExperts) == 0);
  CHECK(k.weights.share(WeightGroup::kAttention) == 0);
  CHECK(k.weights.share(WeightGroup::kDenseMlp) == 0);
  CHECK(k.weight_dtype == Dtype::kBf16);  // W4A16: BF16 math
}

TEST_CASE("minimax_m2 loads as GQA with q/k norms, 256 routed experts and FP8 128x128 blocks",
          "[hf_config]") {
  const ModelConfig m = load_hf_config(data("hf/minimax-m2.5/config.json"));
  CHECK(m.attention == AttentionKind::kGqa);
  CHECK(m.heads == 48);
  CHECK(m.kv_heads == 8);
  CHECK(m.head_dim == 128);
  CHECK(m.routed_experts == 256);
  CHECK(m.experts_per_token == 8);
  CHECK(m.shared_experts == 0);
  CHECK(m.moe_intermediate == 1536);
  CHECK(m.qk_norm);
  // vLLM's MiniMaxText01RMSNormTP: one norm over all heads' q (and k), all-reduced under TP (issue 44).
  CHECK(m.qk_norm_all_heads);
  CHECK(m.router_score_bias);
  CHECK(m.weight_block == 128);
  CHECK(m.weights.quantized == WeightFormat{.kind = WeightFormatKind::kFp8Block, .group = 128});
  CHECK(m.weights.share(WeightGroup::kRoutedExperts) == 1);
  CHECK(m.weights.share(WeightGroup::kLmHead) == 0);  // modules_to_not_convert: lm_head
  // MiniMax-M2's model card: 230B parameters in all, 10B activated (embeddings and LM head not counted).
  const ParamCounts p = count_params(m);
  CHECK(p.total() == Approx(230e9).epsilon(0.02));
  CHECK(p.active() - p.embed - p.lm_head == Approx(10e9).epsilon(0.05));
}

TEST_CASE("Families that need a mechanism tokenline lacks are refused naming the field and mechanism",
          "[hf_config]") {
  const testing::TestDir dir("hf-refused");
  // nemotron_h, llama4, gemma3 and kimi_linear are read now (families_test.cpp, families_kimi_test.cpp);
  // Falcon-H1's attention and Mamba-2 side by side in one block are not.
  const std::string falcon = dir.file("falcon_h1.json");
  std::ofstream(falcon) << R"({"model_type": "falcon_h1", "mamba_d_ssm": 1024,
                               "time_step_limit": [0.0, Infinity]})";
  CHECK_THROWS_WITH(load_hf_config(falcon), Catch::Contains("falcon_h1.json: mamba_d_ssm") &&
                                                Catch::Contains("attention and Mamba-2 side by side"));
}

TEST_CASE("Python's Infinity, -Infinity and NaN literals parse, but not in a field tokenline reads",
          "[hf_config]") {
  const testing::TestDir dir("hf-literals");
  const ModelConfig m = load_hf_config(llama_with(
      dir, "ok.json", R"("time_step_limit": [0.0, Infinity], "x": -Infinity, "y": [NaN], "s": "NaN")"));
  CHECK(m.layers == 32);
  CHECK_THROWS_WITH(load_hf_config(llama_with(dir, "bad.json", R"("head_dim": Infinity)")),
                    Catch::Contains("bad.json: head_dim") && Catch::Contains("Infinity"));
}

TEST_CASE("Out-of-range sizes are refused naming the field and the allowed range", "[hf_config]") {
  const testing::TestDir dir("hf-ranges");
  // 2^30 layers used to wrap the ledger's int counts negative.
  std::string body = testing::read_all(data("llama-3.1-8b.json"));
  const std::string layers = "\"num_hidden_layers\": 32";
  body.replace(body.find(layers), layers.size(), "\"num_hidden_layers\": 1073741824");
  std::ofstream(dir.file("layers.json")) << body;
  CHECK_THROWS_WITH(load_hf_config(dir.file("layers.json")),
                    Catch::Contains("layers.json: num_hidden_layers: expected 1 .. 1024, found 1073741824"));
  // index_topk 2^62 simulated 1.2e11 s: a top-k is at most the context.
  body = testing::read_all(data("deepseek_v32.json"));
  const size_t at = body.find("\"index_topk\"");
  REQUIRE(at != std::string::npos);
  body.replace(at, body.find(',', at) - at, "\"index_topk\": 4611686018427387904");
  std::ofstream(dir.file("topk.json")) << body;
  CHECK_THROWS_WITH(load_hf_config(dir.file("topk.json")),
                    Catch::Contains("topk.json: index_topk: expected 1 .. ") &&
                        Catch::Contains("found 4611686018427387904"));
}

TEST_CASE("An unknown quant_method or format is refused, naming the field and what is supported",
          "[hf_config]") {
  const testing::TestDir dir("hf-quant");
  CHECK_THROWS_WITH(load_hf_config(llama_with(dir, "bnb.json",
                                              R"("quantization_config": {"quant_method": "bitsandbytes"})")),
                    Catch::Contains("bnb.json: quantization_config.quant_method") &&
                        Catch::Contains("compressed-tensors") && Catch::Contains("'bitsandbytes'"));
  CHECK_THROWS_WITH(load_hf_config(llama_with(
                        dir, "w4a8.json",
                        R"("quantization_config": {"quant_method": "modelopt", "quant_algo": "W4A8_AWQ"})")),
                    Catch::Contains("quantization_config.quant_algo") && Catch::Contains("NVFP4") &&
                        Catch::Contains("'W4A8_AWQ'"));
  // MIXED_PRECISION names each module's format: without quantized_layers there is nothing to read.
  CHECK_THROWS_WITH(
      load_hf_config(llama_with(
          dir, "mixed.json",
          R"("quantization_config": {"quant_method": "modelopt", "quant_algo": "MIXED_PRECISION"})")),
      Catch::Contains("quantization_config.quantized_layers") && Catch::Contains("no such field"));
  CHECK_THROWS_WITH(
      load_hf_config(llama_with(dir, "int3.json", R"("quantization_config": {
      "quant_method": "compressed-tensors", "config_groups": {"g": {"targets": ["Linear"],
      "weights": {"num_bits": 3, "type": "int", "strategy": "group", "group_size": 64}}}})")),
      Catch::Contains("quantization_config.config_groups.g.weights") && Catch::Contains("3 bits"));
}

TEST_CASE("AWQ, GPTQ and fp8 without blocks read as their formats, exclusions as BF16", "[hf_config]") {
  const testing::TestDir dir("hf-formats");
  const ModelConfig awq = load_hf_config(llama_with(
      dir, "awq.json", R"("quantization_config": {"quant_method": "awq", "bits": 4, "group_size": 128,
      "zero_point": true, "version": "gemm", "modules_to_not_convert": ["model.layers.0.mlp"]})"));
  CHECK(
      awq.weights.quantized ==
      WeightFormat{.kind = WeightFormatKind::kInt4, .group = 128, .zero_points = true, .weight_only = true});
  CHECK(awq.weights.share(WeightGroup::kDenseMlp) == Approx(31.0 / 32));  // layer 0's MLP excluded
  CHECK(awq.weights.share(WeightGroup::kAttention) > 0.99);
  CHECK(awq.weights.share(WeightGroup::kLmHead) == 0);
  const ModelConfig gptq = load_hf_config(llama_with(
      dir, "gptq.json", R"("quantization_config": {"quant_method": "gptq", "bits": 8, "group_size": -1})"));
  CHECK(gptq.weights.quantized.kind == WeightFormatKind::kInt8);
  CHECK(gptq.weights.quantized.group == 0);
  const ModelConfig fp8 =
      load_hf_config(llama_with(dir, "fp8.json", R"("quantization_config": {"quant_method": "fp8"})"));
  CHECK(fp8.weights.quantized.kind == WeightFormatKind::kFp8PerTensor);
  CHECK(fp8.weight_dtype == Dtype::kFp8);
  CHECK(fp8.weight_block == 0);
  const ModelConfig bf16 = load_hf_config(data("llama-3.1-8b.json"));
  CHECK(bf16.weights.quantized == bf16.weights.unquantized);
  CHECK(uniform_weight_bytes(bf16));
}

// transformers writes layer_types into configs of every family; Llama-3.1-8B has 32 layers.
TEST_CASE("A layer kind in layer_types that is unknown, or needs a missing mechanism, is refused naming it",
          "[hf_config]") {
  const testing::TestDir dir("hf-layer-kinds");
  auto kinds = [](const std::string& at_5) {
    std::string list;
    for (int i = 0; i < 32; ++i)
      list += std::string(i ? ", " : "") + "\"" + (i == 5 ? at_5 : "full_attention") + "\"";
    return "\"layer_types\": [" + list + "]";
  };
  const ModelConfig full = load_hf_config(llama_with(dir, "full.json", kinds("full_attention")));
  CHECK(full.layers == 32);
  CHECK_THROWS_WITH(load_hf_config(llama_with(dir, "unknown.json", kinds("hyena"))),
                    Catch::Contains("unknown.json: layer_types[5]") && Catch::Contains("a layer kind") &&
                        Catch::Contains("\"hyena\""));
  CHECK_THROWS_WITH(
      load_hf_config(llama_with(dir, "swa.json", kinds("sliding_attention"))),
      Catch::Contains("swa.json: layer_types[5]") && Catch::Contains("sliding-window attention"));
  CHECK_THROWS_WITH(load_hf_config(llama_with(dir, "short.json", R"("layer_types": ["full_attention"])")),
                    Catch::Contains("short.json: layer_types") && Catch::Contains("1 entries"));
}

TEST_CASE("A sliding window longer than the context is refused naming sliding_window and the context",
          "[hf_config]") {
  const testing::TestDir dir("hf-window");
  // Llama-3.1-8B: max_position_embeddings 131072.
  CHECK_THROWS_WITH(load_hf_config(llama_with(dir, "long.json", R"("sliding_window": 262144)")),
                    Catch::Contains("long.json: sliding_window") &&
                        Catch::Contains("at most max_position_embeddings (131072)") &&
                        Catch::Contains("262144"));
  CHECK(load_hf_config(llama_with(dir, "equal.json", R"("sliding_window": 131072)")).layers == 32);
  // Qwen2.5 writes a window of 131072 beside a 32768 context with use_sliding_window false: not used, read.
  CHECK(load_hf_config(data("qwen2.5-72b.json")).layers == 80);
}

TEST_CASE("gpt_oss: alternating 128-token sliding-window and full layers, sinks, one kind per layer",
          "[hf_config][window]") {
  const ModelConfig m = load_hf_config(data("hf/gpt-oss-120b/config.json"));
  CHECK(m.layers == 36);
  CHECK(m.window_tokens == 128);
  CHECK(m.attention_sinks);
  CHECK(m.window_layers() == 18);
  CHECK(m.full_attention_layers() == 18);
  CHECK_FALSE(m.chunked_attention());
  for (int i = 0; i < m.layers; ++i) CHECK(m.window_layer(i) == (i % 2 == 0));  // layer_types: even slide
  // The preset is the same model read by the same rules.
  const ModelConfig p = model_preset("gpt-oss-120b");
  CHECK(p.mixers == m.mixers);
  CHECK(count_params(p).total() == count_params(m).total());
  CHECK(model_preset("gpt-oss-20b").window_layers() == 12);
  // A Llama has no window layers: every layer full.
  const ModelConfig llama = load_hf_config(data("llama-3.1-8b.json"));
  CHECK(llama.window_layers() == 0);
  CHECK(llama.full_attention_layers() == 32);
}

TEST_CASE("gpt_oss: a window longer than the context, or a layer kind it lacks, is refused naming the field",
          "[hf_config][window]") {
  const testing::TestDir dir("hf-gpt-oss");
  const std::string body = testing::read_all(data("hf/gpt-oss-120b/config.json"));
  auto with = [&](const std::string& name, const std::string& from, const std::string& to) {
    std::string b = body;
    b.replace(b.find(from), from.size(), to);
    const std::string path = dir.file(name);
    std::ofstream(path) << b;
    return path;
  };
  CHECK_THROWS_WITH(
      load_hf_config(with("long.json", "\"sliding_window\": 128", "\"sliding_window\": 262144")),
      Catch::Contains("long.json: sliding_window") && Catch::Contains("131072") && Catch::Contains("262144"));
  CHECK_THROWS_WITH(load_hf_config(with("chunk.json", "\"full_attention\"", "\"chunked_attention\"")),
                    Catch::Contains("chunk.json: layer_types[1]") && Catch::Contains("sliding_attention or "
                                                                                     "full_attention"));
  // No layer_types: transformers' rule (even layers slide) gives the same layers.
  std::string b = body;
  b.erase(b.find("\"layer_types\""), b.find("\"max_position_embeddings\"") - b.find("\"layer_types\""));
  const std::string path = dir.file("rule.json");
  std::ofstream(path) << b;
  CHECK(load_hf_config(path).mixers == load_hf_config(data("hf/gpt-oss-120b/config.json")).mixers);
  // sliding_window null and no layer_types: every layer full.
  b.replace(b.find("\"sliding_window\": 128"), 21, "\"sliding_window\": null");
  std::ofstream(dir.file("null.json")) << b;
  CHECK(load_hf_config(dir.file("null.json")).window_layers() == 0);
}
