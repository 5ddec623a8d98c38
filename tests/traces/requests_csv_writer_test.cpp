#include "traces/requests_csv_writer.h"

#include <catch2/catch.hpp>

#include "tests/traces/test_dir.h"

namespace tokenline {
namespace {

TEST_CASE("requests.csv has a header and one row per request", "[requests_csv_writer]") {
  testing::TestDir dir("csv");
  const std::string path = dir.file("requests.csv");
  RequestsCsvWriter w(path);
  w.write(RequestRow{.id = 3,
                     .arrival_s = 1.0,
                     .first_token_s = 1.25,
                     .finish_s = 2.5,
                     .input_tokens = 100,
                     .generated_tokens = 10,
                     .cached_tokens = 64,
                     .preemptions = 1,
                     .instance = 0,
                     .completed = true,
                     .status = "completed"});
  w.write(
      RequestRow{.id = 4, .arrival_s = 2.0, .finish_s = 2.0, .input_tokens = 2000000, .status = "too_long"});
  w.write(RequestRow{.id = 5,
                     .arrival_s = 3.0,
                     .first_token_s = 4.5,
                     .finish_s = 5.0,
                     .input_tokens = 1000,
                     .generated_tokens = 2,
                     .instance = 1,
                     .completed = true,
                     .status = "completed",
                     .decode_instance = 2,
                     .kv_transfer_bytes = 53940000.0,
                     .kv_transfer_s = 0.25});
  REQUIRE(w.finish());
  CHECK(
      testing::read_all(path) ==
      "id,arrival_s,first_token_s,finish_s,input_tokens,output_tokens,cached_tokens,preemptions,instance,"
      "status,decode_instance,kv_transfer_bytes,kv_transfer_s,ttft_s,tpot_s,e2e_s\n"
      "3,1.000000,1.250000,2.500000,100,10,64,1,0,completed,,,,0.250000,0.138889,1.500000\n"
      "4,2.000000,,2.000000,2000000,0,0,0,-1,too_long,,,,,,0.000000\n"
      "5,3.000000,4.500000,5.000000,1000,2,0,0,1,completed,2,53940000,0.250000,1.500000,0.500000,2.000000\n");
}

TEST_CASE("requests.csv rows are in id order whatever order requests leave in", "[requests_csv_writer]") {
  testing::TestDir dir("csv_order");
  const std::string path = dir.file("requests.csv");
  RequestsCsvWriter w(path);
  for (const int64_t id : {2, 0, 3, 1, 5}) {  // 4 never leaves: 5 is written after the others at finish
    w.write(RequestRow{.id = id, .arrival_s = 0.0, .finish_s = 1.0, .status = "too_long"});
  }
  REQUIRE(w.finish());
  std::string ids;
  const std::string text = testing::read_all(path);
  for (size_t at = text.find('\n'); at + 1 < text.size(); at = text.find('\n', at + 1))
    ids += text.substr(at + 1, 1);
  CHECK(ids == "01235");
}

}  // namespace
}  // namespace tokenline
