#include "engine/core/pd_coordinator.h"

#include <catch2/catch.hpp>
#include <vector>

using namespace tokenline;

namespace {

// 1 prefill instance of 100 pages; 1 decode instance x 2 ranks x 10 pages; 64-token pages.
PdPoolShape pools() {
  return PdPoolShape{.prefill_instances = 1,
                     .prefill_pages_per_instance = 100,
                     .decode_instances = 1,
                     .decode_ranks = 2,
                     .decode_pages_per_rank = 10,
                     .page_tokens = 64};
}

RequestSpec spec(RequestId id, int64_t prompt, int64_t output) {
  RequestSpec s;
  s.id = id;
  s.prompt_tokens = prompt;
  s.output_tokens = output;
  return s;
}

}  // namespace

TEST_CASE("PD coordinator: a request that fits prefill but no decode rank is rejected at arrival",
          "[pd_coordinator]") {
  PdCoordinator pd(pools());
  // 640 + 2 - 1 tokens need 11 pages of 64: more than a decode rank's 10.
  const std::optional<RequestRecord> r = pd.arrive(spec(7, 640, 2), 0, true, 3.5);
  REQUIRE(r.has_value());
  CHECK(r->status == RequestStatus::kRejected);
  CHECK(r->reject_reason == RejectReason::kNeverFitsDecodeKv);
  CHECK(r->arrival_s == 3.5);
  CHECK(r->finish_s == 3.5);
  // The same request when the prefill side rejects it anyway: tracked, the prefill instance says why.
  CHECK_FALSE(pd.arrive(spec(8, 640, 2), 0, false, 3.5).has_value());
  CHECK(pd.live(8).prompt_tokens == 640);
}

TEST_CASE("PD coordinator: hand-off, reservation, transfer and the merged record", "[pd_coordinator]") {
  PdCoordinator pd(pools());
  REQUIRE_FALSE(pd.arrive(spec(1, 300, 20), 0, true, 1.0).has_value());  // 5 pages on a decode rank
  RequestRecord prefill;
  prefill.id = 1;
  prefill.status = RequestStatus::kHandedOff;
  prefill.rank = 0;
  prefill.cached_tokens = 128;
  prefill.preemptions = 2;
  CHECK(pd.handed_off(prefill).cached_tokens == 128);
  pd.enqueue(1, -1);
  CHECK(pd.waiting() == 1);
  std::vector<PdGrant> grants;
  pd.grant(grants);
  REQUIRE(grants.size() == 1);
  CHECK(pd.waiting() == 0);
  CHECK(pd.in_transfer() == 1);
  CHECK(pd.handoff().reserved_pages(0, grants[0].decode_rank) == 5);
  pd.delivered(1, 0.25);
  CHECK(pd.in_transfer() == 0);
  CHECK(pd.live(1).transfer_s == 0.25);

  RequestRecord decode;
  decode.id = 1;
  decode.status = RequestStatus::kFinished;
  decode.arrival_s = 9.0;  // the decode side's own arrival: the hand-off
  decode.cached_tokens = 0;
  decode.preemptions = 1;
  const RequestRecord merged = pd.merge_decode_record(decode);
  CHECK(merged.arrival_s == 1.0);
  CHECK(merged.cached_tokens == 128);
  CHECK(merged.preemptions == 3);
  CHECK(pd.handoff().reserved_pages(0, grants[0].decode_rank) == 0);  // released
  pd.forget(1);
  CHECK(pd.handoff().check());
}
