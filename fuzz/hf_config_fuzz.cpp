// libFuzzer harness: a Hugging Face config.json (engine/model/hf_config.cpp, hf_quant_config.cpp) read from
// a file: the loader, the shape-only reader, and on a model read, every weight group's bytes and rate.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "engine/model/model_config.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tokenline;
  const std::string path = fuzz::scratch_file(fuzz::text_of(data, size), "-config.json");
  fuzz::expect_input_errors_only([&] { load_hf_config(path); });
  fuzz::expect_input_errors_only([&] {
    ModelConfig m = read_hf_config(path).config;
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
  std::remove(path.c_str());
  return 0;
}
