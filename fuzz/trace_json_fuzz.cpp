// libFuzzer harness: a tokenline trace.json read back for replay (traces/trace_reader.h).
#include <cstdint>
#include <cstdio>

#include "fuzz/fuzz_input.h"
#include "traces/trace_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tokenline;
  const std::string path = fuzz::scratch_file(fuzz::text_of(data, size), "-trace.json");
  fuzz::expect_input_errors_only([&] { read_recorded_run(path); });
  std::remove(path.c_str());
  return 0;
}
