// libFuzzer harness: a Hugging Face config.json's text (engine/model/hf_config.cpp, hf_quant_config.cpp): the
// parser, the shape-only reader, and on a model read, every weight group's bytes and rate. Reading the file
// (run/model_files.cpp, bounded by read_bounded_file) is tested, not fuzzed.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "engine/model/model_config.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tokenline;
  const CheckpointFiles files{
      .config_path = "config.json", .config = fuzz::text_of(data, size), .quant_path = {}, .quant = {}};
  fuzz::expect_input_errors_only([&] { parse_hf_model(files); });
  fuzz::expect_input_errors_only([&] {
    ModelConfig m = parse_hf_config(files).config;
    // The per-layer description is consistent: kinds partition the layers, counts are finite.
    if (m.attention_layers() < 0 || m.ffn_layers() > m.layers || m.block_norms() > 2 * m.layers ||
        m.full_attention_layers() + m.window_layers() != m.attention_layers() ||
        !(std::isfinite(count_params(m).total()) && count_params(m).total() > 0))
      std::abort();
    Hardware hw;
    hw.peak_flops_bf16 = 1e15;
    hw.peak_flops_fp8 = 2e15;
    hw.peak_flops_fp32 = 5e13;
    for (int round = 0; round < 2; ++round) {
      for (size_t g = 0; g < kWeightGroupCount; ++g) {
        const double bytes = group_bytes_per_param(m, static_cast<WeightGroup>(g));
        const double flops = group_gemm_peak_flops(m, static_cast<WeightGroup>(g), hw);
        if (!(bytes > 0 && bytes <= 4 && std::isfinite(flops) && flops > 0)) std::abort();
      }
      override_weight_format(m, "nvfp4");
    }
  });
  return 0;
}
