// libFuzzer harness: a `synthetic:` spec string (workloads/synthetic_spec.h) parsed and, when valid, its
// first requests generated; every request must keep the WorkloadSource contract.
#include <cstdint>

#include "fuzz/fuzz_input.h"
#include "fuzz/request_contract.h"
#include "workloads/synthetic_generator.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tokenline;
  constexpr int64_t kRequestsDrawn = 64;  // enough to cross prefix groups; keeps each input fast
  fuzz::expect_input_errors_only([&] {
    SyntheticGenerator generator(parse_synthetic_spec(fuzz::text_of(data, size)), 7);
    fuzz::check_requests(generator, kRequestsDrawn);
  });
  return 0;
}
