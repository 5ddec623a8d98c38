// SGLang's state pool for a linear-attention model (issue 44): sized by --max-running when the radix cache is
// off, by mamba_full_memory_ratio otherwise, and three slots counted per running request while the radix
// cache is on (model_runner_kv_cache_mixin.py handle_max_mamba_cache / init_memory; engine_behavior.h
// sglang_state_slots gives the sources).
#include <catch2/catch.hpp>
#include <cmath>
#include <string>

#include "cost/memory.h"
#include "engine/model/linear_state.h"
#include "run/model_files.h"
#include "topologies/hardware_loader.h"

using namespace tokenline;

namespace {

CostModel qwen35_tp8() {
  const ModelConfig m = load_model(std::string(TOKENLINE_MODEL_TEST_DATA) + "/hf/qwen3.5-397b-a17b");
  return make_cost_model(m, parse_parallel("tp8", "t"), KvLayout::kBf16, load_hardware("h200"));
}

EngineBehavior sglang_without_radix_cache(int32_t max_running) {
  EngineBehavior b = sglang_behavior();
  b.radix_cache = false;
  b.max_running_requests = max_running;
  return b;
}

}  // namespace

TEST_CASE("sglang_state_slots: the ratio rule with the radix cache, three slots per running request",
          "[linear][memory][sglang]") {
  const SglangStateSlots s = sglang_state_slots(sglang_behavior(), 19e9, 1'000'000);
  CHECK(s.slots == int64_t(std::floor(19e9 * 0.9 / 1.9 / 1e6)));  // 9,000
  CHECK(s.slots == 9000);
  CHECK(s.slots_per_running_request == 3);
  // A request limit given with the radix cache on does not size the pool: SGLang reads it only without.
  EngineBehavior limited = sglang_behavior();
  limited.max_running_requests = 128;
  CHECK(sglang_state_slots(limited, 19e9, 1'000'000).slots == 9000);
}

TEST_CASE("sglang_state_slots: --disable-radix-cache with --max-running-requests takes that many slots",
          "[linear][memory][sglang]") {
  const SglangStateSlots s = sglang_state_slots(sglang_without_radix_cache(128), 19e9, 1'000'000);
  CHECK(s.slots == 128);
  CHECK(s.slots_per_running_request == 1);
  // Without a limit the ratio rule applies, one slot per running request.
  const SglangStateSlots auto_limit = sglang_state_slots(sglang_without_radix_cache(0), 19e9, 1'000'000);
  CHECK(auto_limit.slots == 9000);
  CHECK(auto_limit.slots_per_running_request == 1);
}

TEST_CASE("SGLang Qwen3.5 TP8: the radix cache caps running requests at a third of the slots",
          "[linear][memory][sglang]") {
  const CostModel cm = qwen35_tp8();
  const KvCapacity k = kv_capacity(cm, sglang_behavior(), 4096);
  REQUIRE(k.weights_fit);
  REQUIRE(k.state.slots_per_rank > 300);
  CHECK(k.state.slots_per_running_request == 3);
  CHECK(k.state.max_running_per_rank() == k.state.slots_per_rank / 3);
  // KV for 4,096-token requests is far more than a third of the slots: the slots bound the count.
  CHECK(k.max_concurrent_requests == k.state.slots_per_rank / 3);
}

TEST_CASE("SGLang Qwen3.5 TP8 as InferenceX launched it: 128 slots, the rest of the memory to KV",
          "[linear][memory][sglang]") {
  const CostModel cm = qwen35_tp8();
  const KvCapacity ratio_rule = kv_capacity(cm, sglang_behavior(), 4096);
  const KvCapacity launched = kv_capacity(cm, sglang_without_radix_cache(128), 4096);
  const int64_t slot = linear_state_bytes_per_request(cm.model, 8);
  CHECK(launched.state.slots_per_rank == 128);
  CHECK(launched.state.bytes == 128.0 * double(slot));
  CHECK(launched.state.max_running_per_rank() == 128);
  // The same memory is left for caches; what the ratio rule gave the slots beyond 128 goes to KV.
  CHECK(launched.free_bytes + launched.state.bytes ==
        Approx(ratio_rule.free_bytes + ratio_rule.state.bytes).epsilon(1e-12));
  CHECK(launched.free_bytes > ratio_rule.free_bytes);
  CHECK(launched.tokens_per_rank > ratio_rule.tokens_per_rank);
  CHECK(launched.max_concurrent_requests == 128);
}

TEST_CASE("Engines other than SGLang keep the ratio rule, one slot per running request", "[linear][memory]") {
  const CostModel cm = qwen35_tp8();
  const KvCapacity k = kv_capacity(cm, vllm_behavior(), 4096);
  REQUIRE(k.weights_fit);
  const double before = k.free_bytes + k.state.bytes;
  CHECK(k.state.slots_per_rank == int64_t(std::floor(before * 0.9 / 1.9 / double(k.state.bytes_per_slot))));
  CHECK(k.state.slots_per_running_request == 1);
  EngineBehavior no_cache = vllm_behavior();
  no_cache.radix_cache = false;  // read by SGLang's rule only
  CHECK(kv_capacity(cm, no_cache, 4096).state.slots_per_rank == k.state.slots_per_rank);
}
