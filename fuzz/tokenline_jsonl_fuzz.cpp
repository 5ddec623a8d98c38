// libFuzzer harness: the TokenlineReader (workloads/tokenline_reader.h) over arbitrary text, strict and with
// skip-bad-lines (the first byte chooses). Every request it returns must satisfy the reader's contract.
#include <cstdint>

#include "fuzz/fuzz_input.h"
#include "fuzz/request_contract.h"
#include "workloads/tokenline_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tokenline;
  if (size == 0) return 0;
  const ReaderOptions options{.skip_bad_lines = (data[0] & 1) != 0};
  fuzz::expect_input_errors_only([&] {
    TokenlineReader reader(fuzz::lines_of(fuzz::text_of(data + 1, size - 1)), options);
    fuzz::check_requests(reader);
  });
  return 0;
}
