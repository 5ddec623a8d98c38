// libFuzzer harness: a Hugging Face config.json (engine/model/hf_config.cpp) read from a file.
#include <cstdint>
#include <cstdio>

#include "engine/model/model_config.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tokenline;
  const std::string path = fuzz::scratch_file(fuzz::text_of(data, size), "-config.json");
  fuzz::expect_input_errors_only([&] { load_hf_config(path); });
  std::remove(path.c_str());
  return 0;
}
