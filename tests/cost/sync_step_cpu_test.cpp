// Issue 43: the serial CPU time of a step without overlap scheduling (vLLM V1 without --async-scheduling,
// SGLang without its overlap scheduler) has its own timing terms, sync_step_cpu_s and
// sync_step_cpu_per_request_s, read only when overlap_schedule is 0 (resolve_step_cpu,
// cost/op_profile_resolve.cpp).
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>
#include <utility>

#include "cost/cost_model.h"
#include "cost/op_profile.h"
#include "cost/step_cost.h"
#include "engine/model/model_config.h"
#include "engine/model/parallel.h"
#include "tests/cost/deepseek_decode_step.h"
#include "topologies/hardware_loader.h"

namespace tokenline {
namespace {

constexpr int64_t kBatch = 64;  // requests of the step, all on its one attention rank (tp8)

// A decode step of kBatch requests priced by h200-trtllm (which names no sync term) with the overrides
// `sets`.
StepCost decode_with(const std::string& sets) {
  return deepseek_decode_step(sets, kBatch, "h200-trtllm");
}

// The overlapped terms, set far from the sync ones so that a step shows which pair priced it.
const std::string kAsyncTerms = "step_cpu_overhead_s=0.005,step_cpu_per_request_s=0.0001";

TEST_CASE("issue 43: a step without overlap adds exactly the sync terms, one with overlap ignores them",
          "[op_profile][vllm]") {
  const StepCost gpu = decode_with("overlap_schedule=0,step_cpu_overhead_s=0,step_cpu_per_request_s=0");
  REQUIRE(gpu.overhead_s == 0);

  // Serial step, both sync terms named: GPU + 1 ms + 64 x 10 us, whatever the overlapped terms are.
  const StepCost serial = decode_with("overlap_schedule=0," + kAsyncTerms +
                                      ",sync_step_cpu_s=0.001,sync_step_cpu_per_request_s=0.00001");
  CHECK(serial.overhead_s == Approx(1e-3 + kBatch * 1e-5));
  CHECK(serial.total_s == Approx(gpu.total_s + 1e-3 + kBatch * 1e-5));

  // Only one named: the other is 0, not its overlapped counterpart.
  CHECK(decode_with("overlap_schedule=0," + kAsyncTerms + ",sync_step_cpu_s=0.001").overhead_s ==
        Approx(1e-3));
  CHECK(
      decode_with("overlap_schedule=0," + kAsyncTerms + ",sync_step_cpu_per_request_s=0.00001").overhead_s ==
      Approx(kBatch * 1e-5));

  // Neither named (TensorRT-LLM and own profiles): the serial step keeps the overlapped terms.
  CHECK(decode_with("overlap_schedule=0," + kAsyncTerms).overhead_s == Approx(5e-3 + kBatch * 1e-4));

  // With overlap the sync terms are never read: 10 s of them leave the step as the overlapped terms price it.
  const StepCost hidden = decode_with(
      "overlap_schedule=1,step_cpu_overhead_s=0,step_cpu_per_request_s=0,"
      "sync_step_cpu_s=10,sync_step_cpu_per_request_s=0.1");
  CHECK(hidden.overhead_s == 0);
  CHECK(hidden.total_s == Approx(gpu.total_s));
  const std::string shown = "overlap_schedule=1,step_cpu_overhead_s=0,step_cpu_per_request_s=0.001";
  const StepCost async_only = decode_with(shown);
  REQUIRE(async_only.overhead_s > 0);  // 64 ms of CPU outlasts the GPU step
  CHECK(decode_with(shown + ",sync_step_cpu_s=10,sync_step_cpu_per_request_s=0.1").overhead_s ==
        Approx(async_only.overhead_s));
}

// topologies/profiles/<name>/profile.json of the source tree (the test data lies at tests/engine/model/data).
std::string profile_json_text(const std::string& name) {
  const std::filesystem::path root = std::filesystem::path(TOKENLINE_MODEL_TEST_DATA) / "../../../..";
  std::ifstream in(root / "topologies/profiles" / name / "profile.json");
  REQUIRE(in);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// How often `needle` occurs in `text`.
size_t occurrences(const std::string& text, const std::string& needle) {
  size_t count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++count;
  return count;
}

// Profile `name` (loaded as p) names both sync terms, each at `engine`'s value (the engine's CPU, not the
// GPU), and its profile.json names each public measurement of `sources` `times` times.
void check_engine_sync_terms(const std::string& name, const OpProfile& p, const OpProfile& engine,
                             std::initializer_list<const char*> sources, size_t times) {
  for (TimingParam t : {TimingParam::kSyncStepCpuS, TimingParam::kSyncStepCpuPerRequestS}) {
    INFO(timing_param_name(t));
    CHECK(p.given(t));
    CHECK(p.param(t) > 0);
    CHECK(p.param(t) == engine.param(t));
  }
  const std::string text = profile_json_text(name);
  for (const char* source : sources) {
    INFO(source);
    CHECK(occurrences(text, source) == times);
  }
}

TEST_CASE("issue 43: the vLLM profiles carry one sourced serial step time, TensorRT-LLM's none",
          "[op_profile][vllm]") {
  const auto b200 = load_op_profile("b200-vllm");
  for (const char* name : {"b200-vllm", "h200-vllm", "h100-vllm", "b300-vllm", "gb200-vllm"}) {
    INFO(name);
    const auto p = load_op_profile(name);
    // each term's why names the public measurements it comes from
    check_engine_sync_terms(name, *p, *b200, {"vllm-project/vllm#12094", "vllm-project/vllm#10634"}, 2);
    // vLLM schedules asynchronously by default from 0.14 (#27614); the serial step is what earlier
    // releases run, --profile-set overlap_schedule=0
    CHECK(p->param(TimingParam::kOverlapSchedule) == 1);
    CHECK(profile_json_text(name).find("vLLM schedules asynchronously by default from 0.14.0") !=
          std::string::npos);
    // below the async-fitted terms it replaces at every batch the public measurements cover (32 to 256)
    CHECK(p->param(TimingParam::kSyncStepCpuS) < p->param(TimingParam::kStepCpuOverheadS));
    CHECK(p->param(TimingParam::kSyncStepCpuPerRequestS) < p->param(TimingParam::kStepCpuPerRequestS));
  }
  for (const char* name : {"h200-trtllm", "b200-trtllm", "h100-trtllm"}) {
    INFO(name);
    const auto p = load_op_profile(name);
    CHECK_FALSE(p->given(TimingParam::kSyncStepCpuS));
    CHECK_FALSE(p->given(TimingParam::kSyncStepCpuPerRequestS));
  }
}

TEST_CASE("issue 43: the SGLang profiles carry one serial step time from public EAGLE V1 / V2 measurements",
          "[op_profile][sglang]") {
  const auto h200 = load_op_profile("h200-sglang");
  for (const char* name : {"h200-sglang", "b200-sglang", "h100-sglang", "b300-sglang", "gb200-sglang"}) {
    INFO(name);
    const auto p = load_op_profile(name);
    check_engine_sync_terms(name, *p, *h200, {"sgl-project/sglang#12128", "sgl-project/sglang#11398"}, 1);
    // The mean of the two published per-step gaps: (3.644 - 3.206) s over 512 / 2.296 steps (#12128) and
    // 2.99 / 246.80 - 3.01 / 273.43 s a step (#11398).
    const double r1 = (3.644 - 3.206) / (512 / 2.296), llama = 2.99 / 246.80 - 3.01 / 273.43;
    CHECK(p->param(TimingParam::kSyncStepCpuS) == Approx((r1 + llama) / 2).epsilon(0.005));
    // per request: the overlapped term's fitted value, the same work done serially
    CHECK(p->param(TimingParam::kSyncStepCpuPerRequestS) == p->param(TimingParam::kStepCpuPerRequestS));
    // SGLang runs its overlap scheduler by default: the sync terms price only what turns it off
    CHECK(p->param(TimingParam::kOverlapSchedule) == 1);
  }
  // A step without overlap on h200-sglang adds the sync terms to the GPU's time, whatever the overlapped
  // ones.
  const StepCost gpu = deepseek_decode_step(
      "overlap_schedule=0,sync_step_cpu_s=0,sync_step_cpu_per_request_s=0,step_cpu_overhead_s=0.005", kBatch);
  const StepCost serial = deepseek_decode_step("overlap_schedule=0", kBatch);
  CHECK(serial.overhead_s == Approx(h200->param(TimingParam::kSyncStepCpuS) +
                                    double(kBatch) * h200->param(TimingParam::kSyncStepCpuPerRequestS)));
  CHECK(serial.total_s == Approx(gpu.total_s + serial.overhead_s));
}

TEST_CASE("issue 43: SGLang speculates without its overlap scheduler unless told spec V2",
          "[op_profile][sglang]") {
  for (const char* name : {"h200-sglang", "b200-sglang", "h100-sglang", "b300-sglang", "gb200-sglang"}) {
    INFO(name);
    // SGLang 0.5.9 runs MTP as spec V1 (SGLANG_ENABLE_SPEC_V2 default False), which turns overlap off.
    const auto mtp = load_op_profile(name, "", 2);
    CHECK(mtp->param(TimingParam::kOverlapSchedule) == 0);
    auto fresh = load_op_profile(name);
    CHECK(apply_speculative_schedule(*fresh, 1).find("SGLANG_ENABLE_SPEC_V2") != std::string::npos);
    CHECK(apply_speculative_schedule(*fresh, 1).empty());  // nothing left to change
    // Without drafts the overlap scheduler stays on; --profile-set overlap_schedule=1 is spec V2.
    CHECK(load_op_profile(name, "", 0)->param(TimingParam::kOverlapSchedule) == 1);
    CHECK(load_op_profile(name, "overlap_schedule=1", 2)->param(TimingParam::kOverlapSchedule) == 1);
  }
  // vLLM and TensorRT-LLM profiles keep the schedule they state (--profile-set changes it).
  for (const char* name : {"h200-trtllm", "b200-trtllm", "b200-vllm", "h200-vllm"}) {
    INFO(name);
    auto p = load_op_profile(name);
    const double before = p->param(TimingParam::kOverlapSchedule);
    CHECK(apply_speculative_schedule(*p, 2).empty());
    CHECK(p->param(TimingParam::kOverlapSchedule) == before);
  }
  // Priced: an MTP run's step on h200-sglang is the serial one, the GPU's time plus the sync terms.
  const auto h200 = load_op_profile("h200-sglang");
  CostOptions o;
  o.profile = load_op_profile("h200-sglang", "", 2);
  const CostModel cm = make_cost_model(model_preset("deepseek-v3"), parse_parallel("tp8", "test"),
                                       KvLayout::kFp8E4m3, load_hardware("h200"), o);
  const StepCost spec = decode_step(cm, kBatch, 1023);
  const StepCost serial = deepseek_decode_step("overlap_schedule=0", kBatch);
  CHECK(spec.total_s == Approx(serial.total_s));
  CHECK(spec.overhead_s == Approx(h200->param(TimingParam::kSyncStepCpuS) +
                                  double(kBatch) * h200->param(TimingParam::kSyncStepCpuPerRequestS)));
}

}  // namespace
}  // namespace tokenline
