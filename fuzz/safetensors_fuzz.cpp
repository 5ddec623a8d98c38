// libFuzzer harness: a safetensors file (kernels/safetensors.h): header length, JSON header, tensor
// entries and their byte ranges; every tensor the reader accepts is read whole.
#include <cstdint>
#include <cstdio>

#include "fuzz/fuzz_input.h"
#include "kernels/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tokenline;
  const std::string path = fuzz::scratch_file(fuzz::text_of(data, size), ".safetensors");
  fuzz::expect_input_errors_only([&] {
    SafetensorsReader reader(path);
    volatile uint8_t sink = 0;
    for (const TensorInfo& t : reader.tensors()) {
      const uint8_t* bytes = reader.data(t);
      for (int64_t i = 0; i < t.size_bytes; ++i) sink = sink ^ bytes[i];
    }
  });
  std::remove(path.c_str());
  return 0;
}
