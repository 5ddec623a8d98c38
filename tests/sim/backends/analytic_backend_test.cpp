#include "sim/backends/analytic_backend.h"

#include <catch2/catch.hpp>
#include <string_view>

#include "topologies/hardware_loader.h"

namespace tokenline {
namespace {

CostModel dp8_glm() {
  const ModelConfig model = model_preset("glm-5.3");
  return make_cost_model(model, parse_parallel("dp8-ep8", "test"), model.default_kv_layout,
                         load_hardware("h200"));
}

StepBatches uniform_decode(int ranks, int batch, int64_t context) {
  StepBatches step;
  for (int r = 0; r < ranks; ++r) {
    Batch b;
    b.rank = r;
    for (int i = 0; i < batch; ++i) {
      b.entries.push_back(BatchEntry{.id = r * batch + i,
                                     .phase = Phase::kDecode,
                                     .new_tokens = 1,
                                     .context_tokens = context,
                                     .draft_tokens = 0,
                                     .last_chunk = false});
    }
    step.ranks.push_back(b);
  }
  return step;
}

TEST_CASE("the analytic step of a uniform decode batch is the ledger's decode step", "[analytic_backend]") {
  const CostModel cm = dp8_glm();
  AnalyticBackend backend(cm, false);
  const StepOutcome out = backend.execute(uniform_decode(8, 32, 131072));
  CHECK(out.duration_s == Approx(decode_step(cm, 32, 131072).total_s).epsilon(1e-12));
  CHECK(out.ops.empty());
  CHECK(backend.last_cost().weights_s > 0);
}

TEST_CASE("op spans are ledger ops laid end to end inside the step", "[analytic_backend]") {
  const CostModel cm = dp8_glm();
  AnalyticBackend backend(cm, true);
  StepBatches step = uniform_decode(8, 4, 4096);
  step.ranks[3].entries.push_back(BatchEntry{.id = 99,
                                             .phase = Phase::kPrefill,
                                             .new_tokens = 2048,
                                             .context_tokens = 0,
                                             .draft_tokens = 0,
                                             .last_chunk = true});
  const StepOutcome out = backend.execute(step);
  REQUIRE_FALSE(out.ops.empty());
  double end_s = 0;
  bool saw_dispatch = false;
  for (const OpSpan& op : out.ops) {
    CHECK(op.start_s >= end_s - 1e-15);
    end_s = op.start_s + op.duration_s;
    CHECK(op.rank == backend.last_cost().busiest_rank);
    if (std::string_view(op.name) == "dispatch") {
      saw_dispatch = true;
      CHECK(op.stream == Stream::kComm);
    }
  }
  CHECK(saw_dispatch);
  CHECK(end_s <= out.duration_s * (1 + 1e-12));
}

}  // namespace
}  // namespace tokenline
