#include "engine/core/router.h"

#include <catch2/catch.hpp>
#include <vector>

namespace tokenline {
namespace {

InstanceConfig small_instance() {
  InstanceConfig c;
  c.kv.total_pages = 1000;
  return c;
}

RequestSpec spec(RequestId id, int64_t prompt) {
  RequestSpec s;
  s.id = id;
  s.prompt_tokens = prompt;
  s.output_tokens = 10;
  return s;
}

TEST_CASE("round-robin cycles through the instances", "[router]") {
  std::vector<Instance> instances(3, Instance(small_instance()));
  std::vector<const Instance*> views{&instances[0], &instances[1], &instances[2]};
  Router router(PlacementPolicy::kRoundRobin, 64);
  std::vector<int32_t> picks;
  for (int i = 0; i < 5; ++i) picks.push_back(router.pick(views, spec(i, 100)));
  CHECK(picks == std::vector<int32_t>{0, 1, 2, 0, 1});
}

TEST_CASE("least-load picks the instance with the fewest queued tokens and ties go to the lowest",
          "[router]") {
  std::vector<Instance> instances(3, Instance(small_instance()));
  std::vector<const Instance*> views{&instances[0], &instances[1], &instances[2]};
  Router router(PlacementPolicy::kLeastLoad, 64);
  CHECK(router.pick(views, spec(0, 100)) == 0);
  instances[0].add_request(spec(0, 5000), 0.0);
  instances[1].add_request(spec(1, 100), 0.0);
  CHECK(router.pick(views, spec(2, 100)) == 2);
  instances[2].add_request(spec(2, 3000), 0.0);
  CHECK(router.pick(views, spec(3, 100)) == 1);
}

TEST_CASE("prefix-aware falls back to least-load without cached prefixes", "[router]") {
  std::vector<Instance> instances(2, Instance(small_instance()));
  std::vector<const Instance*> views{&instances[0], &instances[1]};
  Router router(PlacementPolicy::kPrefixAware, 64);
  instances[0].add_request(spec(0, 5000), 0.0);
  RequestSpec s = spec(1, 1024);
  s.block_hashes = {1, 2};
  CHECK(router.pick(views, s) == 1);
}

}  // namespace
}  // namespace tokenline
