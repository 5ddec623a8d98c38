// Linear-attention layers in the model description: Qwen3.5's layer list read from its config, the state a
// request keeps per linear layer (SGLang's mamba_cache_per_req), Mamba-2's shape.
#include "engine/model/linear_state.h"

#include <catch2/catch.hpp>
#include <fstream>

#include "common/input_error.h"
#include "engine/model/model_config.h"
#include "run/model_files.h"
#include "tests/traces/test_dir.h"

using namespace tokenline;

namespace {
std::string data(const char* name) {
  return std::string(TOKENLINE_MODEL_TEST_DATA) + "/" + name;
}
}  // namespace

TEST_CASE("Qwen3.5-397B-A17B reads as 45 Gated DeltaNet and 15 full-attention layers and simulates",
          "[linear]") {
  const ModelConfig m = load_model(data("hf/qwen3.5-397b-a17b"));
  CHECK(m.left_out.find("vision_config") != std::string::npos);
  CHECK(m.layers == 60);
  CHECK(m.mixer_layers(MixerKind::kGatedDeltaNet) == 45);
  CHECK(m.mixer_layers(MixerKind::kMamba2) == 0);
  CHECK(m.attention_layers() == 15);
  for (int l = 0; l < 60; ++l) CHECK(m.linear_layer(l) == ((l + 1) % 4 != 0));
  CHECK(m.gdn.key_heads == 16);
  CHECK(m.gdn.value_heads == 64);
  CHECK(m.ssm_state_bytes == 4);  // text_config.mamba_ssm_dtype: float32
  CHECK(m.attn_output_gate);
  CHECK(mixer_kind_name(MixerKind::kGatedDeltaNet) == "gdn");
}

TEST_CASE("A GDN layer's state per request: conv window + delta-rule state, heads split over TP",
          "[linear]") {
  const ModelConfig m = load_model(data("hf/qwen3.5-397b-a17b"));
  // Written out from SGLang's Mamba2StateShape for GDN (mamba_utils.py): conv (2 x 16 x 128 + 64 x 128)
  // channels / tp x (4 - 1) past inputs in BF16; temporal 64 / tp value heads x 128 x 128 in float32.
  const int64_t conv_tp8 = (2 * 16 * 128 + 64 * 128) / 8 * 3 * 2;
  const int64_t ssm_tp8 = 64 / 8 * 128 * 128 * 4;
  CHECK(conv_tp8 == 9216);
  CHECK(ssm_tp8 == 524288);
  const LinearStateBytes b = linear_state_bytes(m, MixerKind::kGatedDeltaNet, 8);
  CHECK(b.conv == conv_tp8);
  CHECK(b.recurrent == ssm_tp8);
  CHECK(linear_state_bytes(m, MixerKind::kAttention, 8).total() == 0);
  // 45 layers: 24.0 MB per request per GPU at TP8 (aiconfigurator's qwen35.py _gdn_state_bytes_per_request
  // gives the same expression).
  CHECK(linear_state_bytes_per_request(m, 8) == 45 * (conv_tp8 + ssm_tp8));
  CHECK(linear_state_bytes_per_request(m, 8) == 24'007'680);
  CHECK(linear_state_bytes_per_request(m, 1) == 8 * linear_state_bytes_per_request(m, 8));
  // A BF16 state (mamba_ssm_dtype bfloat16) halves the recurrent part.
  ModelConfig bf16 = m;
  bf16.ssm_state_bytes = 2;
  CHECK(linear_state_bytes(bf16, MixerKind::kGatedDeltaNet, 8).recurrent == ssm_tp8 / 2);
}

TEST_CASE("A Mamba-2 layer's state: conv over x, B and C, SSM heads x head_dim x state", "[linear]") {
  // Nemotron-3-Super-120B-A12B's mixer (its config.json): 128 heads of 64, state 128, 8 groups, conv 4,
  // mamba_ssm_cache_dtype float32.
  ModelConfig m;
  m.layers = 4;
  m.hidden = 4096;
  m.mixers = {MixerKind::kMamba2, MixerKind::kAttention, MixerKind::kMamba2, MixerKind::kMamba2};
  m.mamba = {.heads = 128, .head_dim = 64, .state_size = 128, .groups = 8, .conv_kernel = 4};
  m.ssm_state_bytes = 4;
  const LinearStateBytes b = linear_state_bytes(m, MixerKind::kMamba2, 8);
  CHECK(b.conv == (128 * 64 + 2 * 8 * 128) / 8 * 3 * 2);
  CHECK(b.recurrent == 128 / 8 * 64 * 128 * 4);
  CHECK(linear_state_bytes_per_request(m, 8) == 3 * b.total());
  CHECK(m.linear_layers() == 3);
  CHECK(m.attention_layers() == 1);
  // One group at TP8: replicated to each shard (SGLang's extra_groups_for_head_shards), 8 groups' channels.
  m.mamba.groups = 1;
  CHECK(linear_state_bytes(m, MixerKind::kMamba2, 8).conv == (128 * 64 + 2 * 8 * 128) / 8 * 3 * 2);
}

TEST_CASE("A GDN hybrid's layer_types entry of an unknown kind is refused naming its index", "[linear]") {
  const testing::TestDir dir("hf-gdn");
  std::string body = testing::read_all(data("hf/qwen3.5-397b-a17b/config.json"));
  const std::string first = "\"linear_attention\",";
  body.replace(body.find(first), first.size(), "\"mamba\",");
  const std::string path = dir.file("config.json");
  std::ofstream(path) << body;
  CHECK_THROWS_WITH(load_model(path),
                    Catch::Contains("text_config.layer_types[0]") && Catch::Contains("linear_attention"));
}

TEST_CASE("The qwen3.5-397b-a17b preset is its config.json's text model", "[linear]") {
  const ModelConfig p = model_preset("qwen3.5-397b-a17b");
  const ModelConfig c = load_model(data("hf/qwen3.5-397b-a17b"));
  CHECK(p.mixers == c.mixers);
  CHECK(p.gdn.key_heads == c.gdn.key_heads);
  CHECK(p.gdn.value_head_dim == c.gdn.value_head_dim);
  CHECK(p.heads == c.heads);
  CHECK(p.kv_heads == c.kv_heads);
  CHECK(p.head_dim == c.head_dim);
  CHECK(p.routed_experts == c.routed_experts);
  CHECK(p.experts_per_token == c.experts_per_token);
  CHECK(p.shared_experts == c.shared_experts);
  CHECK(p.vocab == c.vocab);
  CHECK(p.mtp_layers == c.mtp_layers);
  CHECK(p.ssm_state_bytes == c.ssm_state_bytes);
  CHECK(count_params(p).total() == Approx(count_params(c).total()));
  CHECK(count_params(p).total() == Approx(397e9).epsilon(0.02));  // the model card
  CHECK(linear_state_bytes_per_request(p, 8) == linear_state_bytes_per_request(c, 8));
}
