#include "engine/model/kv_layout.h"

#include <catch2/catch.hpp>

#include "common/input_error.h"
#include "engine/model/model_config.h"

using namespace tokenline;

TEST_CASE("KV layout bytes per token per layer follow from GLM-5.3's kv_lora 512 and rope 64",
          "[kv_layout]") {
  const ModelConfig glm = model_preset("glm-5.3");
  // The seed: "每 token 每层 656 字节 ... 标准 fp8_e4m3 就是 576 字节, 换成 nvfp4_ds_mla 是 352 字节".
  CHECK(kv_bytes_per_token_layer(KvLayout::kFp8DsMla, glm) == 656);    // 512 + 4 x 4 + 64 x 2
  CHECK(kv_bytes_per_token_layer(KvLayout::kFp8E4m3, glm) == 576);     // 512 + 64
  CHECK(kv_bytes_per_token_layer(KvLayout::kNvfp4DsMla, glm) == 352);  // 256 + 32 + 64
  CHECK(kv_bytes_per_token_layer(KvLayout::kBf16, glm) == 1152);       // 576 x 2
  // "索引 K 每 token 每层 128 字节(加 4 字节 scale)".
  CHECK(indexer_bytes_per_token_layer(glm) == 132);
  CHECK(indexer_key_bytes_per_token_layer(glm) == 128);
  // The seed's "多 80 字节": fp8_ds_mla over fp8_e4m3, 16 B of scales + 64 B more RoPE; 16 / 656 = 2.4 %.
  CHECK(kv_bytes_per_token_layer(KvLayout::kFp8DsMla, glm) -
            kv_bytes_per_token_layer(KvLayout::kFp8E4m3, glm) ==
        80);
  CHECK(16.0 / 656 == Approx(0.024).epsilon(0.02));
}

TEST_CASE("GQA layouts count K and V of every KV head, DS-MLA layouts do not fit GQA", "[kv_layout]") {
  const ModelConfig llama = model_preset("llama-3.1-8b");
  CHECK(kv_bytes_per_token_layer(KvLayout::kBf16, llama) == 2 * 8 * 128 * 2);
  CHECK(kv_bytes_per_token_layer(KvLayout::kFp8E4m3, llama) == 2 * 8 * 128);
  CHECK_FALSE(layout_fits(KvLayout::kFp8DsMla, llama));
  CHECK_FALSE(layout_fits(KvLayout::kNvfp4DsMla, llama));
  CHECK(layout_fits(KvLayout::kFp8DsMla, model_preset("glm-5.3-tiny")));
  CHECK(indexer_bytes_per_token_layer(llama) == 0);
}

TEST_CASE("KV layout names round-trip and unknown names are rejected with the option named", "[kv_layout]") {
  for (KvLayout l : {KvLayout::kFp8DsMla, KvLayout::kFp8E4m3, KvLayout::kNvfp4DsMla, KvLayout::kBf16}) {
    CHECK(parse_kv_layout(kv_layout_name(l), "--kv-layout") == l);
  }
  CHECK_THROWS_WITH(parse_kv_layout("fp4", "--kv-layout"),
                    Catch::Contains("--kv-layout") && Catch::Contains("fp4"));
}
