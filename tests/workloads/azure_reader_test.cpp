#include "workloads/azure_reader.h"

#include <catch2/catch.hpp>

#include "common/input_error.h"
#include "test_sources.h"

namespace tokenline {
namespace {

using test::drain;
using test::error_of;
using test::text_lines;

TEST_CASE("azure wall-clock timestamps parse to nanoseconds", "[azure]") {
  CHECK(parse_wall_clock_ns("1970-01-01 00:00:00") == 0);
  CHECK(parse_wall_clock_ns("1970-01-02 00:00:01.5") == (86400 + 1) * 1'000'000'000LL + 500'000'000);
  CHECK(parse_wall_clock_ns("2000-03-01 00:00:00") == 951868800LL * 1'000'000'000);  // leap year 2000
  CHECK(parse_wall_clock_ns("2023-11-16 18:15:46.6805900") == 1700158546680590000LL);
  CHECK_FALSE(parse_wall_clock_ns("2023-11-16T18:15:46"));
  CHECK_FALSE(parse_wall_clock_ns("2023-13-16 18:15:46"));
  CHECK_FALSE(parse_wall_clock_ns("2023-11-16 18:15:46."));
  CHECK_FALSE(parse_wall_clock_ns("2023-11-16 18:15:46.1234567890"));
}

TEST_CASE("timestamps beyond int64 nanoseconds are malformed, not UB (fuzz finding)",
          "[azure][input_limits]") {
  CHECK(parse_wall_clock_ns("2262-04-11 23:47:15") == 9223372035LL * 1'000'000'000);
  CHECK_FALSE(parse_wall_clock_ns("2262-04-11 23:47:16"));
  CHECK_FALSE(parse_wall_clock_ns("4046-11-16 18:15:46.6805901"));  // the fuzzer's input: overflowed
  CHECK_FALSE(parse_wall_clock_ns("1969-12-31 23:59:59"));
}

TEST_CASE("azure CSV with CRLF and no final newline, arrivals are offsets from the first row", "[azure]") {
  AzureReader reader(text_lines("TIMESTAMP,ContextTokens,GeneratedTokens\r\n"
                                "2023-11-16 18:15:46.6805900,374,44\r\n"
                                "2023-11-16 18:15:50.9951690,396,109\r\n"
                                "2023-11-16 18:16:00.0000000,2,7"),
                     {});
  const auto rs = drain(reader);
  REQUIRE(rs.size() == 3);
  CHECK(rs[0].arrival_s == 0.0);
  CHECK(rs[1].arrival_s == Approx(4.314579).epsilon(1e-12));
  CHECK(rs[2].arrival_s == Approx(13.31941).epsilon(1e-12));
  CHECK(rs[2].input_tokens == 2);
  CHECK(rs[2].output_tokens == 7);
  CHECK(rs[0].block_hashes.empty());
}

TEST_CASE("azure: bad header and bad rows name the line and field", "[azure]") {
  auto err = [](const std::string& text) {
    AzureReader reader(text_lines(text, "conv.csv"), {});
    return error_of(reader);
  };
  const std::string header = "TIMESTAMP,ContextTokens,GeneratedTokens\r\n";
  CHECK(err("time,in,out\r\n") ==
        "conv.csv:1: expected the header TIMESTAMP,ContextTokens,GeneratedTokens, found 'time,in,out'");
  CHECK(err("") ==
        "conv.csv: expected the header line TIMESTAMP,ContextTokens,GeneratedTokens, found an empty file");
  CHECK(err(header + "2023-11-16 18:15:46,x,4") ==
        "conv.csv:2: ContextTokens: expected an integer >= 1, found 'x'");
  CHECK(err(header + "2023-11-16 18:15:46,3,-4") ==
        "conv.csv:2: GeneratedTokens: expected an integer >= 1, found '-4'");
  CHECK(err(header + "yesterday,3,4") ==
        "conv.csv:2: TIMESTAMP: expected YYYY-MM-DD HH:MM:SS.fffffff from 1970 to 2262, found 'yesterday'");
  CHECK(err(header + "2023-11-16 18:15:46,3") ==
        "conv.csv:2: expected 3 comma-separated fields (TIMESTAMP,ContextTokens,GeneratedTokens), found "
        "'2023-11-16 18:15:46,3'");
  CHECK(err(header + "2023-11-16 18:15:46,3,4\r\n2023-11-16 18:15:45,3,4") ==
        "conv.csv:3: arrival: expected a time >= the previous request's 0 s, found -1 s");
}

TEST_CASE("azure: the real conversation trace has 19,366 rows over 3,501.72 s", "[azure][real]") {
  const auto path = test::real_trace("AzureLLMInferenceTrace_conv.csv");
  if (!path) {
    WARN("skipped: AzureLLMInferenceTrace_conv.csv not found (set TOKENLINE_TRACES_DIR)");
    return;
  }
  AzureReader reader(LineReader::open_file(*path), {});
  int64_t count = 0, max_context = 0;
  double last = 0;
  while (auto r = reader.next()) {
    last = r->arrival_s;
    max_context = std::max(max_context, r->input_tokens);
    ++count;
  }
  CHECK(count == 19366);
  // SOURCE.md: 18:15:46.6805900 to 19:14:08.4025270 = 58 min 21.7219370 s
  CHECK(last == Approx(58 * 60 + 21.721937).epsilon(1e-12));
  CHECK(max_context == 14050);
}

}  // namespace
}  // namespace tokenline
