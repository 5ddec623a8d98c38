#include "plan/workload_profile.h"

#include <catch2/catch.hpp>
#include <vector>

#include "common/input_error.h"

namespace tokenline {
namespace {

class VectorSource final : public ArrivalSource {
 public:
  explicit VectorSource(std::vector<TimedRequest> arrivals) : arrivals_(std::move(arrivals)) {}
  bool next(TimedRequest& out) override {
    if (index_ == arrivals_.size()) return false;
    out = arrivals_[index_++];
    return true;
  }

 private:
  std::vector<TimedRequest> arrivals_;
  size_t index_ = 0;
};

TimedRequest arrival(double t, int64_t prompt, int64_t output, std::vector<uint64_t> hashes) {
  TimedRequest a;
  a.arrival_s = t;
  a.spec.prompt_tokens = prompt;
  a.spec.output_tokens = output;
  a.spec.block_hashes = std::move(hashes);
  a.spec.block_tokens = 512;
  return a;
}

TEST_CASE("the workload profile bounds prefix hits by block hashes sent before", "[plan]") {
  // 10 requests: the first sends blocks 1,2; the others share block 1 (512 tokens) and add their own.
  std::vector<TimedRequest> arrivals = {arrival(0, 1200, 10, {1, 2, 100})};
  for (int i = 1; i < 10; ++i) arrivals.push_back(arrival(i, 1000 + 100 * i, 20, {1, 200 + uint64_t(i)}));
  VectorSource source(arrivals);
  const WorkloadProfile p = profile_workload(source);
  CHECK(p.requests == 10);
  CHECK(p.span_s == 9.0);
  CHECK(p.rate_per_s == Approx(10.0 / 9.0));
  CHECK(p.max_prompt_tokens == 1900);
  CHECK(p.max_request_tokens == 1920);
  // prompts sorted: 1100..1900 and 1200; index floor(0.9 * 9) = 8 -> 1800
  CHECK(p.p90_prompt_tokens == 1800);
  // uncached: the first 1200, the others prompt - 512 (588..1388): index 8 of sorted -> 1288
  CHECK(p.p90_uncached_tokens == 1288);
}

TEST_CASE("an empty workload is bad input", "[plan]") {
  VectorSource none({});
  CHECK_THROWS_AS(profile_workload(none), InputError);
}

}  // namespace
}  // namespace tokenline
