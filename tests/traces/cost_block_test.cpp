// metrics.json's cost block (traces/cost_block.h): the bill and each per-million figure.
#include "traces/cost_block.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

namespace tokenline {
namespace {

TEST_CASE("the cost block charges GPU-hours at the price and divides the bill by each token count",
          "[metrics][cost]") {
  const auto j = nlohmann::json::parse(cost_block_json({.usd_per_gpu_hour = 4,
                                                        .price_source = "--gpu-price",
                                                        .gpu_hours = 2.5,
                                                        .input_tokens = 5'000'000,
                                                        .output_tokens = 1'000'000,
                                                        .cached_tokens = 0}));
  CHECK(j["usd_total"] == 10.0);
  CHECK(j["usd_per_million_input_tokens"] == 2.0);
  CHECK(j["usd_per_million_output_tokens"] == 10.0);
  CHECK(j["usd_per_million_cached_tokens"].is_null());
  CHECK(j["price_source"] == "--gpu-price");
}

}  // namespace
}  // namespace tokenline
