// libFuzzer harness: a cluster JSON (topologies/cluster_loader.h) parsed from text into its graph.
#include <cstdint>

#include "fuzz/fuzz_input.h"
#include "topologies/cluster_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tokenline;
  fuzz::expect_input_errors_only([&] { parse_cluster(fuzz::text_of(data, size), "fuzz.json"); });
  return 0;
}
