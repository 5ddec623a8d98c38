#include "engine/runtime/speculation.h"

#include <catch2/catch.hpp>

using namespace tokenline;

// One step of two entries: a decode of request 7 with one draft (rows 0-1: [last token 50, draft 61]) and
// the last prefill chunk of request 8 (rows 2-4: prompt tokens 10 11 12; next ids 11 12, then unknown).
TEST_CASE("verify_step: a draft the model also chose stands, the emitted tokens are the model's own") {
  const std::vector<EntryRows> entries = {
      {.id = 7, .row0 = 0, .rows = 2, .sample0 = 0, .drafts = 1, .decode = true},
      {.id = 8, .row0 = 2, .rows = 3, .sample0 = 2, .drafts = 0, .decode = false}};
  const std::vector<int32_t> next_ids = {61, -1, 11, 12, -1};
  std::vector<EntryResult> results;
  DraftInput draft;
  SECTION("accepted: row 0 chose 61, the draft") {
    verify_step(entries, next_ids, std::vector<int32_t>{61, 70, 99}, true, results, draft);
    CHECK(results[0].accepted == 1);
    CHECK(results[0].emitted == std::vector<int32_t>{61, 70});
    CHECK(results[1].emitted == std::vector<int32_t>{99});
    // MTP rows: both decode rows (next 61, 70), all prefill rows (next 11, 12, then the sampled 99).
    CHECK(draft.rows == std::vector<int32_t>{0, 1, 2, 3, 4});
    CHECK(draft.next_ids == std::vector<int32_t>{61, 70, 11, 12, 99});
    CHECK(draft.draft_rows == std::vector<int32_t>{1, 4});
  }
  SECTION("rejected: row 0 chose 60, so row 1 (computed on the draft) is dropped") {
    verify_step(entries, next_ids, std::vector<int32_t>{60, 70, 99}, true, results, draft);
    CHECK(results[0].accepted == 0);
    CHECK(results[0].emitted == std::vector<int32_t>{60});
    CHECK(draft.rows == std::vector<int32_t>{0, 2, 3, 4});
    CHECK(draft.next_ids == std::vector<int32_t>{60, 11, 12, 99});
    CHECK(draft.draft_rows == std::vector<int32_t>{0, 3});
  }
  SECTION("without MTP: tokens only, no MTP rows") {
    verify_step(entries, next_ids, std::vector<int32_t>{61, 70, 99}, false, results, draft);
    CHECK(results[0].emitted == std::vector<int32_t>{61, 70});
    CHECK(draft.rows.empty());
  }
}

TEST_CASE("verify_step: a prefill chunk before the prompt's end emits nothing and drafts nothing") {
  const std::vector<EntryRows> entries = {{.id = 3, .row0 = 0, .rows = 2, .sample0 = -1, .decode = false}};
  std::vector<EntryResult> results;
  DraftInput draft;
  verify_step(entries, std::vector<int32_t>{21, 22}, std::vector<int32_t>{}, true, results, draft);
  CHECK(results[0].emitted.empty());
  CHECK(draft.next_ids == std::vector<int32_t>{21, 22});
  CHECK(draft.draft_rows.empty());
}
