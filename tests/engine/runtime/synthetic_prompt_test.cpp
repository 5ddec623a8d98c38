#include "engine/runtime/synthetic_prompt.h"

#include <algorithm>
#include <catch2/catch.hpp>

using namespace tokenline;

TEST_CASE("synthesized prompts share exactly the blocks whose hash ids they share") {
  RequestSpec a;
  a.id = 1;
  a.prompt_tokens = 40;
  a.output_tokens = 1;
  a.block_hashes = {7, 8, 9};
  a.block_tokens = 16;
  RequestSpec b = a;
  b.id = 2;
  b.block_hashes = {7, 8, 10};
  const auto ta = synthesize_prompt(a, 3), tb = synthesize_prompt(b, 3);
  REQUIRE(ta.size() == 40);
  CHECK(std::equal(ta.begin(), ta.begin() + 32, tb.begin()));
  CHECK(!std::equal(ta.begin() + 32, ta.end(), tb.begin() + 32));
  CHECK(synthesize_prompt(a, 3) == ta);  // deterministic
  CHECK(synthesize_prompt(a, 4) != ta);  // the seed matters
  RequestSpec c;
  c.id = 3;
  c.prompt_tokens = 20;
  c.output_tokens = 1;
  RequestSpec d = c;
  d.id = 4;
  CHECK(synthesize_prompt(c, 3) != synthesize_prompt(d, 3));  // no hash ids: unique per request
  for (int32_t id : ta) CHECK((id >= 0 && id < kSyntheticPromptIds));
}
