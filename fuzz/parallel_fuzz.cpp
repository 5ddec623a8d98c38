// libFuzzer harness: the --parallel layout string (engine/model/parallel.h), checked against a preset.
#include <cstdint>
#include <cstdlib>

#include "engine/model/model_config.h"
#include "engine/model/parallel.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tokenline;
  static const ModelConfig model = model_preset("glm-5.3");
  fuzz::expect_input_errors_only([&] {
    const Parallel p = parse_parallel(fuzz::text_of(data, size), "--parallel");
    if (p.gpus() < 1) std::abort();
    validate_parallel(p, model, "--parallel");
  });
  return 0;
}
