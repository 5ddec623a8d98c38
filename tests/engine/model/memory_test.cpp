#include "engine/model/memory.h"

#include <catch2/catch.hpp>

#include "topologies/hardware_loader.h"

using namespace tokenline;

namespace {
CostModel cm_for(const char* model, const char* parallel, KvLayout layout = KvLayout::kFp8DsMla) {
  return make_cost_model(model_preset(model), parse_parallel(parallel, "t"), layout, load_hardware("h200"));
}
}  // namespace

TEST_CASE("Weights per GPU: EP splits experts, TP splits everything", "[memory]") {
  const WeightBytes ep = weight_bytes_per_gpu(cm_for("glm-5.3", "dp8-ep8"));
  const WeightBytes tp = weight_bytes_per_gpu(cm_for("glm-5.3", "tp8"));
  CHECK(ep.routed_experts == Approx(tp.routed_experts));
  CHECK(ep.replicated == Approx(8 * tp.replicated));
  CHECK(tp.total() * 8 == Approx(count_params(model_preset("glm-5.3")).total()));  // FP8: 1 B per param
  const WeightBytes llama = weight_bytes_per_gpu(cm_for("llama-3.1-70b", "tp8", KvLayout::kBf16));
  CHECK(llama.total() * 8 == Approx(70.6e9 * 2).epsilon(0.01));
}

TEST_CASE("KV capacity shrinks with context and says when weights do not fit", "[memory]") {
  const CostModel cm = cm_for("glm-5.3", "tp8");
  const KvCapacity k = kv_capacity(cm, 131072);
  CHECK(k.weights_fit);
  CHECK(k.activation_reserve_bytes == 32768.0 * 6144 * 2 * kActivationBuffers);
  CHECK(k.pages_per_rank == k.tokens_per_rank / kDefaultPageTokens);
  CHECK(kv_capacity(cm, 1 << 20).max_concurrent_requests < k.max_concurrent_requests);
  const KvCapacity one = kv_capacity(cm_for("glm-5.3", "tp1"), 4096);
  CHECK_FALSE(one.weights_fit);
  CHECK(one.free_bytes == 0);
  CHECK(one.max_concurrent_requests == 0);
  // DP attention keeps each rank's KV whole: 8 ranks x per-rank requests.
  const KvCapacity dp = kv_capacity(cm_for("glm-5.3", "dp8-ep8"), 32768);
  CHECK(dp.max_concurrent_requests % 8 == 0);
  CHECK(dp.max_concurrent_requests > 0);
}
