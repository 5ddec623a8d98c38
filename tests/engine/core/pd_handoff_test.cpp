#include "engine/core/pd_handoff.h"

#include <catch2/catch.hpp>
#include <vector>

using namespace tokenline;

namespace {

// 1 prefill instance of 100 pages; 2 decode instances x 2 ranks x 10 pages; 64-token pages.
PdPoolShape small_pools() {
  return PdPoolShape{.prefill_instances = 1,
                     .prefill_pages_per_instance = 100,
                     .decode_instances = 2,
                     .decode_ranks = 2,
                     .decode_pages_per_rank = 10,
                     .page_tokens = 64};
}

// A request holding `pages` decode pages: prompt (pages - 1) * 64 + 1 tokens... simpler: prompt 64 * pages
// tokens and one output token (prompt + 1 - 1 tokens of KV).
PdWaiting req(RequestId id, int64_t pages, int32_t preferred = -1) {
  return PdWaiting{.id = id,
                   .prefill_instance = 0,
                   .prompt_tokens = 64 * pages,
                   .output_tokens = 1,
                   .preferred_decode = preferred};
}

}  // namespace

TEST_CASE("A request larger than any decode rank is refused with its own reason", "[pd_handoff]") {
  const PdHandoff h(small_pools());
  CHECK(h.decode_pages(640, 1) == 10);
  CHECK(h.decode_pages(640, 2) == 11);  // the 641st token needs an 11th page
  CHECK(h.validate(640, 1) == RejectReason::kNone);
  CHECK(h.validate(640, 2) == RejectReason::kNeverFitsDecodeKv);
}

TEST_CASE("Reservations go to the preferred instance's emptiest rank and never overfill", "[pd_handoff]") {
  PdHandoff h(small_pools());
  std::vector<PdGrant> g;
  h.enqueue(req(1, 6, 1));
  h.enqueue(req(2, 6, 1));
  h.enqueue(req(3, 6, 1));
  h.grant(g);
  REQUIRE(g.size() == 3);
  // Timeline: 1 -> inst 1 rank 0 (4 left); 2 -> inst 1 rank 1 (4 left); 3 does not fit inst 1 -> inst 0.
  CHECK((g[0].decode_instance == 1 && g[0].decode_rank == 0));
  CHECK((g[1].decode_instance == 1 && g[1].decode_rank == 1));
  CHECK((g[2].decode_instance == 0 && g[2].decode_rank == 0));
  CHECK(h.check());
  h.enqueue(req(4, 6));
  h.enqueue(req(5, 1));
  g.clear();
  h.grant(g);
  // 4 takes the only empty rank (inst 0 rank 1); 5 takes a 4-page hole (ties: lowest instance, then rank).
  REQUIRE(g.size() == 2);
  CHECK((g[0].id == 4 && g[0].decode_instance == 0 && g[0].decode_rank == 1));
  CHECK((g[1].id == 5 && g[1].decode_instance == 0 && g[1].decode_rank == 0));
  g.clear();
  h.enqueue(req(6, 8));
  h.grant(g);
  CHECK(g.empty());
  CHECK(h.waiting() == 1);  // 6 needs 8: nowhere until something leaves
  g.clear();
  h.release(PdGrant{.id = 1, .prefill_instance = 0, .decode_instance = 1, .decode_rank = 0, .pages = 6});
  h.grant(g);
  REQUIRE(g.size() == 1);
  CHECK(g[0].id == 6);
  CHECK((g[0].decode_instance == 1 && g[0].decode_rank == 0));
  CHECK(h.waiting() == 0);
  CHECK(h.check());
}

TEST_CASE("The queue is first in first out: a big head is never overtaken", "[pd_handoff]") {
  PdHandoff h(small_pools());
  std::vector<PdGrant> g;
  for (RequestId id = 1; id <= 4; ++id) h.enqueue(req(id, 7));
  h.grant(g);
  CHECK(g.size() == 4);  // one per rank
  g.clear();
  h.enqueue(req(5, 9));
  h.enqueue(req(6, 1));
  h.grant(g);
  CHECK(g.empty());  // 6 would fit in a 3-page hole, but 5 is first
  CHECK(h.waiting() == 2);
}

TEST_CASE("Waiting hand-offs back-pressure their prefill instance", "[pd_handoff]") {
  PdPoolShape shape = small_pools();
  shape.prefill_pages_per_instance = 12;
  PdHandoff h(shape);
  std::vector<PdGrant> g;
  for (RequestId id = 1; id <= 4; ++id) h.enqueue(req(id, 10));  // fill all four decode ranks
  h.grant(g);
  CHECK(!h.prefill_blocked(0));
  h.enqueue(req(5, 6));
  CHECK(!h.prefill_blocked(0));  // 6 of 12 prompt pages wait on the prefill side
  h.enqueue(req(6, 6));
  CHECK(h.prefill_blocked(0));  // 12 of 12
  CHECK(h.check());
  h.release(g[0]);
  g.clear();
  h.grant(g);
  CHECK(g.size() == 1);
  CHECK(!h.prefill_blocked(0));
  CHECK(h.check());
}

TEST_CASE("A decode rank's request slots bound its reservations as its pages do", "[pd_handoff]") {
  PdPoolShape shape = small_pools();
  shape.decode_instances = 1;
  shape.decode_requests_per_rank = 2;  // max running requests per rank
  PdHandoff h(shape);
  for (RequestId id = 1; id <= 5; ++id) h.enqueue(req(id, 1));
  std::vector<PdGrant> g;
  h.grant(g);
  // Pages would take all five (1 page each, 20 free); two slots on each of the two ranks take four.
  REQUIRE(g.size() == 4);
  CHECK(h.waiting() == 1);
  CHECK(h.reserved_requests(0, 0) == 2);
  CHECK(h.reserved_requests(0, 1) == 2);
  CHECK(h.check());
  h.release(g[1]);
  g.clear();
  h.grant(g);
  REQUIRE(g.size() == 1);
  CHECK(g[0].id == 5);
  CHECK(h.check());
}
