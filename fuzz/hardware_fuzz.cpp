// libFuzzer harness: a hardware JSON (topologies/hardware_loader.h) parsed from text.
#include <cstdint>

#include "fuzz/fuzz_input.h"
#include "topologies/hardware_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tokenline;
  fuzz::expect_input_errors_only([&] { parse_hardware(fuzz::text_of(data, size), "fuzz.json"); });
  return 0;
}
