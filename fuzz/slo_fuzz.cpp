// libFuzzer harness: the --slo string (cli/slo_option.h): every accepted SLO is positive and finite.
#include <cmath>
#include <cstdint>
#include <cstdlib>

#include "cli/slo_option.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tokenline;
  fuzz::expect_input_errors_only([&] {
    const Slo slo = parse_slo(fuzz::text_of(data, size));
    for (const double s : {slo.ttft_s, slo.tpot_s})
      if (!(s >= 0) || !std::isfinite(s)) std::abort();
  });
  return 0;
}
