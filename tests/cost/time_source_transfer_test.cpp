// The transferred time source (cost/time_source_transfer.h): another GPU's profile carried by its kernels'
// efficiency over the roofline, its engine and step terms unchanged; which GPU's profile a target gets.
#include "cost/time_source_transfer.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "common/input_error.h"
#include "cost/cost_model.h"
#include "cost/engine_behavior.h"
#include "cost/op_profile.h"
#include "cost/step_cost.h"
#include "engine/model/model_config.h"
#include "topologies/hardware_loader.h"

namespace tokenline {
namespace {

CostModel llama_tp2(const std::string& profile, const std::string& hardware) {
  CostOptions o;
  o.profile = load_op_profile(profile);
  return make_cost_model(model_preset("llama-3.1-70b"), parse_parallel("tp2", "test"), KvLayout::kBf16,
                         load_hardware(hardware), o);
}

CostModel llama_tp2_roofline(const std::string& hardware) {
  return make_cost_model(model_preset("llama-3.1-70b"), parse_parallel("tp2", "test"), KvLayout::kBf16,
                         load_hardware(hardware));
}

TEST_CASE("transferred onto its own GPU, a profile prices every step as the profile does", "[transfer]") {
  const CostModel own = llama_tp2("h200-sglang", "h200");
  const CostModel same = llama_tp2("transfer:h200-sglang", "h200");
  for (const int64_t batch : {1, 16, 100}) {
    const StepCost a = decode_step(own, batch, 2047), b = decode_step(same, batch, 2047);
    CHECK(b.total_s == Approx(a.total_s).epsilon(1e-9));
    CHECK(b.floor_s == Approx(a.floor_s).epsilon(1e-9));
    CHECK(b.overhead_s == Approx(a.overhead_s).epsilon(1e-9));
  }
  const StepCost a = prefill_step(own, 4096, 0, true), b = prefill_step(same, 4096, 0, true);
  CHECK(b.total_s == Approx(a.total_s).epsilon(1e-9));
}

TEST_CASE("on another GPU each measured op keeps its efficiency over that GPU's roofline", "[transfer]") {
  const CostModel h200 = llama_tp2("h200-trtllm", "h200");
  const CostModel b200 = llama_tp2("transfer:h200-trtllm", "b200");
  const StepCost measured = decode_step(h200, 8, 2047);
  const StepCost on_h200 = decode_step(llama_tp2_roofline("h200"), 8, 2047);
  const StepCost on_b200 = decode_step(llama_tp2_roofline("b200"), 8, 2047);
  const StepCost moved = decode_step(b200, 8, 2047);
  int transferred = 0;
  for (const Op op : {Op::kOProj, Op::kSparseMla, Op::kDenseMlp, Op::kLmHead}) {
    const Term& t = moved[op];
    REQUIRE(measured[op].source == TermSource::kProfile);
    CHECK(t.source == TermSource::kTransferred);
    // decode batch 8 is a CUDA-graph bucket: no padding, the same work on both GPUs
    CHECK(t.time_s == Approx(on_b200[op].time_s * measured[op].time_s / on_h200[op].time_s).epsilon(1e-9));
    ++transferred;
  }
  CHECK(transferred == 4);
  // B200's roofline is faster for every op here: so is each transferred op, and the step
  CHECK(moved.total_s < measured.total_s);
  CHECK(moved.total_s > on_b200.total_s);
  CHECK(b200.time_source->measured());
}

TEST_CASE("the engine's step terms are carried unchanged", "[transfer]") {
  // h200-sglang's per-layer floor lifts a one-request decode step; transferred to b200 it lifts it to the
  // same floor (80 layers x 171.8 us), the GPU's ops being faster there.
  const StepCost own = decode_step(llama_tp2("h200-sglang", "h200"), 1, 127);
  const StepCost moved = decode_step(llama_tp2("transfer:h200-sglang", "b200"), 1, 127);
  REQUIRE(own.gpu_floor_s > 0);
  CHECK(moved.gpu_floor_s == Approx(own.gpu_floor_s));
}

TEST_CASE("transfer:<profile> loads the profile, marked, its device memory left to the target GPU",
          "[transfer]") {
  const auto p = load_op_profile("transfer:h200-sglang");
  CHECK(p->transferred);
  CHECK(p->name == "transfer:h200-sglang");
  CHECK(p->hardware == "h200");
  CHECK(p->engine.device_memory_bytes == 0);
  CHECK_FALSE(load_op_profile("h200-sglang")->transferred);
  CHECK_THROWS_AS(load_op_profile("transfer:"), InputError);
  CHECK_THROWS_AS(load_op_profile("transfer:transfer:h200-sglang"), InputError);
  CHECK_THROWS_AS(load_op_profile("transfer:no-such-profile"), InputError);
  // an untransferred profile on another GPU is still refused
  CHECK_THROWS_AS(llama_tp2("h200-sglang", "b200"), InputError);
}

// Issue 43: SGLang's KV dtype default is per GPU (auto: BF16 on SM90, the model's layout on SM100), so the
// H200 block carried to a B200 stores what SGLang stores on a B200, not H200's BF16: GLM-5 (a DSA model) FP8.
TEST_CASE("transfer:h200-sglang on B200 stores the KV dtype SGLang's auto gives on B200", "[transfer]") {
  const auto p = load_op_profile("transfer:h200-sglang");
  const ModelConfig glm = model_preset("glm-5.3");
  REQUIRE(glm.default_kv_layout == KvLayout::kFp8DsMla);
  CHECK(run_kv_layout(profile_engine(p.get()), glm.default_kv_layout, "", load_hardware("b200")) ==
        KvLayout::kFp8DsMla);
  CHECK(run_kv_layout(profile_engine(p.get()), glm.default_kv_layout, "", load_hardware("gb200")) ==
        KvLayout::kFp8DsMla);
  CHECK(run_kv_layout(profile_engine(p.get()), glm.default_kv_layout, "", load_hardware("h100")) ==
        KvLayout::kBf16);
  // the profile on its own GPU keeps BF16
  CHECK(run_kv_layout(profile_engine(p.get()), glm.default_kv_layout, "", load_hardware("h200")) ==
        KvLayout::kBf16);
}

TEST_CASE("the source is the engine's profile on the nearest other GPU, never the target's own",
          "[transfer]") {
  const auto sources = [](const std::string& engine, const std::string& hw) {
    return transfer_sources(engine, load_hardware(hw));
  };
  // Issue 43: B300 (nearest B200), GB200 and GB300 have TensorRT-LLM profiles of their own since 2026-12-06 /
  // 07
  CHECK(sources("trtllm", "b200") == std::vector<std::string>{"b300-trtllm", "gb200-trtllm", "gb300-trtllm",
                                                              "h200-trtllm", "h100-trtllm"});
  CHECK(sources("trtllm", "h100") == std::vector<std::string>{"h200-trtllm", "b200-trtllm", "b300-trtllm",
                                                              "gb200-trtllm", "gb300-trtllm"});
  CHECK(sources("sglang", "h200") == std::vector<std::string>{"h100-sglang", "b200-sglang", "b300-sglang",
                                                              "gb200-sglang", "gb300-sglang"});
  // GB200 and GB300 (8.0 TB/s, FP8 5 PFLOPS, one NVL72 rack) are each other's nearest; then B300 (7.75 TB/s)
  // before B200 (7.7 TB/s)
  CHECK(sources("trtllm", "gb200").front() == "gb300-trtllm");
  CHECK(sources("vllm", "gb200") ==
        std::vector<std::string>{"gb300-vllm", "b300-vllm", "b200-vllm", "h200-vllm", "h100-vllm"});
  CHECK(sources("sglang", "gb300").front() == "gb200-sglang");
  CHECK(sources("sglang", "b300").front() == "b200-sglang");
  CHECK(sources("sglang", "b200").front() == "b300-sglang");
  CHECK(sources("tgi", "h200").empty());
  CHECK(roofline_distance(load_hardware("b200"), load_hardware("b200")) == 0);
}

}  // namespace
}  // namespace tokenline
