#include "plan/candidate_space.h"

#include <catch2/catch.hpp>
#include <set>

#include "engine/model/model_config.h"
#include "run/model_files.h"

namespace tokenline {
namespace {

TEST_CASE("layouts of a dense model are tp x attention-dp, no ep", "[plan]") {
  const ModelConfig llama = load_model("llama-3.1-8b");
  REQUIRE(layouts_of_size(llama, 1).size() == 1);
  const std::vector<Parallel> two = layouts_of_size(llama, 2);
  REQUIRE(two.size() == 2);
  CHECK(two[0].name() == "dp2");
  CHECK(two[1].name() == "tp2");
}

TEST_CASE("layouts of an MoE model on 8 GPUs cross tp 1..8 with ep 1 and ep 8", "[plan]") {
  const ModelConfig glm = load_model("glm-5.3");
  std::set<std::string> names;
  for (const Parallel& p : layouts_of_size(glm, 8)) names.insert(p.name());
  CHECK(names == std::set<std::string>{"dp8", "dp8-ep8", "dp4-tp2", "dp4-tp2-ep8", "dp2-tp4", "dp2-tp4-ep8",
                                       "tp8", "tp8-ep8"});
}

TEST_CASE("2 GPUs of a dense model: 3 co-located shapes and 1P1D, times the knobs", "[plan]") {
  const ModelConfig llama = load_model("llama-3.1-8b");
  SpaceOptions o;
  o.gpus = 2;
  o.chunk_tokens = {4096, 8192};
  o.max_running = {16, 64, 256};
  const std::vector<Candidate> all = enumerate_candidates(llama, o);
  REQUIRE(all.size() == 4 * 2 * 3);
  for (size_t i = 0; i < all.size(); ++i) {
    CHECK(all[i].id == static_cast<int32_t>(i));
    CHECK(all[i].gpus() == 2);
  }
  CHECK(all[0].deployment() == "2x tp1");
  CHECK(all[6].deployment() == "1x dp2");
  CHECK(all.back().deployment() == "1P tp1 + 1D tp1");
  CHECK(all.back().parallel_arg() == "tp1,tp1");
  CHECK(all.back().pd_arg() == "1P1D");
  o.pd = false;
  CHECK(enumerate_candidates(llama, o).size() == 3 * 2 * 3);
}

TEST_CASE("16 GPUs of GLM-5.3: PD pools fill the GPUs exactly", "[plan]") {
  const ModelConfig glm = load_model("glm-5.3");
  SpaceOptions o;
  o.gpus = 16;
  o.chunk_tokens = {8192};
  o.max_running = {64};
  int pd = 0;
  for (const Candidate& c : enumerate_candidates(glm, o)) {
    CHECK(c.gpus() == 16);
    if (!c.pd) continue;
    ++pd;
    CHECK_FALSE(c.prefill.dp());
    CHECK(c.layout.ep == c.layout.gpus());
  }
  // 1P1D of 8-GPU pools alone: prefill tp8 | tp8-ep8, decode dp8-ep8 | dp4-tp2-ep8 | dp2-tp4-ep8 | tp8-ep8.
  CHECK(pd > 2 * 4);
}

}  // namespace
}  // namespace tokenline
