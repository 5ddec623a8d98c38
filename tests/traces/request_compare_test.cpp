#include "traces/request_compare.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>

#include "common/input_error.h"
#include "tests/traces/test_dir.h"

using namespace tokenline;

namespace {

constexpr const char* kHeader =
    "id,arrival_s,first_token_s,finish_s,input_tokens,output_tokens,cached_tokens,preemptions,instance,"
    "status,"
    "decode_instance,kv_transfer_bytes,kv_transfer_s\n";

}  // namespace

// Predicted: ids 1, 2, 3, 4 (4 rejected). Measured: ids 2, 1, 4, 5 (in another order; 5 only here).
// Request 1: TTFT 0.10 vs 0.20, E2E 1.0 vs 0.8. Request 2: TTFT 0.30 vs 0.30, E2E 2.0 vs 4.0, one more
// preemption and fewer cached tokens measured. Request 4: rejected on both sides.
TEST_CASE("compare_requests: joins on id, latencies over requests completed on both sides, outcome counts") {
  testing::TestDir dir("request-compare");
  const std::string pred = dir.file("pred.csv"), meas = dir.file("meas.csv");
  std::ofstream(pred) << kHeader << "1,0.000000,0.100000,1.000000,100,10,0,0,0,completed,,,\n"
                      << "2,1.000000,1.300000,3.000000,100,10,64,0,0,completed,,,\n"
                      << "3,2.000000,2.500000,4.000000,100,10,0,0,0,completed,,,\n"
                      << "4,3.000000,-1.000000,3.000000,9000,10,0,0,-1,exceeds_context,,,\n";
  std::ofstream(meas) << kHeader << "2,1.000000,1.300000,5.000000,100,10,0,1,0,completed,,,\n"
                      << "1,0.000000,0.200000,0.800000,100,10,0,0,0,completed,,,\n"
                      << "4,3.000000,-1.000000,3.000000,9000,10,0,0,-1,exceeds_context,,,\n"
                      << "5,4.000000,4.100000,4.500000,100,10,0,0,0,completed,,,\n";
  const RequestComparison c = compare_requests(read_requests_csv(pred), read_requests_csv(meas));
  CHECK(c.joined == 3);
  CHECK(c.predicted_only == 1);  // 3
  CHECK(c.measured_only == 1);   // 5
  CHECK(c.completed_both == 2);
  CHECK(c.status_differs == 0);
  CHECK(c.cached_differs == 1);
  CHECK(c.preemptions_differ == 1);
  CHECK(c.ttft.requests == 2);
  CHECK(c.ttft.predicted_mean_s == Approx((0.1 + 0.3) / 2));
  CHECK(c.ttft.measured_mean_s == Approx((0.2 + 0.3) / 2));
  CHECK(c.ttft.error.mean == Approx((0.5 + 0.0) / 2));  // |0.1 - 0.2| / 0.2, then 0
  CHECK(c.e2e.error.mean == Approx((0.25 + 0.5) / 2));  // |1.0 - 0.8| / 0.8, |2 - 4| / 4
  CHECK(c.e2e.error.p90 == Approx(0.5));
}

TEST_CASE("read_requests_csv: a missing column, a short row or a non-number names file and line") {
  testing::TestDir dir("request-compare-bad");
  const std::string path = dir.file("requests.csv");
  auto message = [&] {
    try {
      (void)read_requests_csv(path);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  std::ofstream(path) << "id,arrival_s\n1,0\n";
  CHECK(message().find(path + ":1") != std::string::npos);
  std::ofstream(path) << kHeader << "1,0.0,0.1,1.0,100,10,0,0,0,completed,,,\n1,0.0\n";
  CHECK(message().find(path + ":3") != std::string::npos);
  std::ofstream(path) << kHeader << "1,zero,0.1,1.0,100,10,0,0,0,completed,,,\n";
  CHECK(message().find(path + ":2") != std::string::npos);
  CHECK(message().find("zero") != std::string::npos);
  CHECK(message().find("no such") == std::string::npos);
  CHECK_THROWS_AS(read_requests_csv(dir.file("absent.csv")), InputError);
}

TEST_CASE("read_requests_csv: a time that is not finite, negative or past the horizon is refused by column") {
  testing::TestDir dir("request-compare-times");
  const std::string path = dir.file("requests.csv");
  auto message = [&](const std::string& row) {
    std::ofstream(path) << kHeader << row;
    try {
      (void)read_requests_csv(path);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(message("1,nan,0.1,1.0,100,10,0,0,0,completed,,,\n") ==
        path + ":2: arrival_s: expected seconds in [0, 2e+09], found 'nan'");
  CHECK(message("1,0.0,inf,1.0,100,10,0,0,0,completed,,,\n").find(":2: first_token_s") != std::string::npos);
  CHECK(message("1,0.0,0.1,1e308,100,10,0,0,0,completed,,,\n").find(":2: finish_s") != std::string::npos);
  CHECK(message("1,0.0,-0.5,1.0,100,10,0,0,0,completed,,,\n").find(":2: first_token_s") != std::string::npos);
  CHECK(message("1,0.0,-1,1.0,100,10,0,0,0,completed,,,\n") == "no error");  // no first token (older files)
}

TEST_CASE("read_requests_csv: a line without end (/dev/zero) is refused at the line limit, not read to OOM") {
  CHECK_THROWS_WITH(read_requests_csv("/dev/zero"),
                    Catch::Contains("/dev/zero:1: expected lines of at most 64 MiB"));
}
