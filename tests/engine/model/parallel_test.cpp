#include "engine/model/parallel.h"

#include <catch2/catch.hpp>

#include "common/input_error.h"
#include "engine/model/model_config.h"

using namespace tokenline;

TEST_CASE("Parallel names parse into tp, dp attention and ep", "[parallel]") {
  const Parallel tp8 = parse_parallel("tp8", "--parallel");
  CHECK(tp8.tp == 8);
  CHECK(tp8.gpus() == 8);
  CHECK(tp8.moe_tp() == 8);
  CHECK_FALSE(tp8.dp());
  const Parallel dp = parse_parallel("dp8-ep8", "--parallel");
  CHECK(dp.tp == 1);
  CHECK(dp.dp_attention == 8);
  CHECK(dp.ep == 8);
  CHECK(dp.moe_tp() == 1);
  CHECK(dp.name() == "dp8-ep8");
  CHECK(parse_parallel("ep8-tp8", "x").name() == "tp8-ep8");
  CHECK(parse_parallel("dp4-tp2-ep8", "x").gpus() == 8);
}

TEST_CASE("Bad parallel names are rejected with the option and the name", "[parallel]") {
  for (const char* bad : {"", "tp", "tp0", "tpx", "pp8", "tp8-tp8", "tp8-", "dp-8", "tp99999"}) {
    CHECK_THROWS_WITH(parse_parallel(bad, "--parallel"), Catch::Contains("--parallel"));
  }
}

TEST_CASE("A layout that does not divide the model is rejected", "[parallel]") {
  const ModelConfig glm = model_preset("glm-5.3");
  CHECK_NOTHROW(validate_parallel(parse_parallel("dp8-ep8", "x"), glm, "--parallel"));
  CHECK_THROWS_WITH(validate_parallel(parse_parallel("dp3-ep3", "x"), glm, "--parallel"),
                    Catch::Contains("256 experts") && Catch::Contains("ep3"));
  CHECK_THROWS_WITH(validate_parallel(parse_parallel("tp3", "x"), glm, "--parallel"),
                    Catch::Contains("64 heads"));
  CHECK_THROWS_WITH(validate_parallel(parse_parallel("tp2-ep4", "x"), glm, "--parallel"),
                    Catch::Contains("2 GPUs"));
  CHECK_THROWS_WITH(
      validate_parallel(parse_parallel("tp8-ep8", "x"), model_preset("llama-3.1-8b"), "--parallel"),
      Catch::Contains("dense model"));
}
