// Own profiles (the ops table): exact at measured points, interpolated between them, ops without rows
// cost nothing, a step with decode and prefill rows pays an op's fixed time once, per-op scales
// (timing.op_scales) apply to their ops and are checked on load, and a profile refuses a model or layout it
// was not measured on; a speed scale (a run's speed probe over the profile's) scales every measured time
// of an own profile and is refused by other profiles; under DP, a group's time lies between the alone and the
// every-group rows by its peers' load, where the profile has alone rows.
#include "cost/op_profile_own.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "common/input_error.h"
#include "cost/op_profile.h"
#include "cost/op_profile_pricing.h"
#include "cost/op_profile_writer.h"
#include "cost/step_cost.h"
#include "tests/cost/profile_load_error.h"
#include "topologies/hardware_loader.h"

namespace tokenline {
namespace {

namespace fs = std::filesystem;

constexpr double kMsToS = 1e-3;

fs::path own_profile(const std::string& name, const std::vector<OwnOpRow>& rows,
                     const std::string& parallel = "tp1", double speed_probe_s = 0) {
  const fs::path dir =
      fs::temp_directory_path() / ("tl_own_profile_" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  write_own_profile(dir.string(),
                    OwnProfileInfo{.name = name,
                                   .hardware = "cpu-host",
                                   .backend = "cpu",
                                   .model = "glm-5.3-tiny",
                                   .parallel = parallel,
                                   .machine = "test",
                                   .threads = 1,
                                   .date = "2026-12-01T00:00:00Z",
                                   .warmup = 1,
                                   .repeats = 1,
                                   .step_overhead_s = 1e-4,
                                   .speed_probe_s = speed_probe_s},
                    OwnHardware{.gemm_flops = 1e10,
                                .memory_bw = 1e10,
                                .memory_bytes = 8e9,
                                .collective_bw = 1e9,
                                .collective_latency_s = 1e-5},
                    rows);
  return dir;
}

std::vector<OwnOpRow> rows() {
  return {{"a_proj", true, 1, 64, 0.5},       {"a_proj", true, 4, 64, 0.8},
          {"a_proj", true, 1, 512, 0.5},      {"a_proj", true, 4, 512, 0.8},
          {"sparse_mla", true, 1, 64, 0.125}, {"sparse_mla", true, 1, 512, 0.5},
          {"sparse_mla", true, 4, 64, 0.25},  {"sparse_mla", true, 4, 512, 1.0},
          {"a_proj", false, 1, 16, 1.0},      {"a_proj", false, 1, 128, 4.0},
          {"sample", false, 1, 16, 0.2},      {"sample", false, 1, 128, 0.2}};
}

CostModel own_model(const fs::path& dir, const std::string& parallel,
                    const std::string& model = "glm-5.3-tiny") {
  CostOptions o;
  o.profile = load_op_profile(dir.string());
  const ModelConfig m = model_preset(model);
  return make_cost_model(m, parse_parallel(parallel, "test"), m.default_kv_layout,
                         load_hardware((dir / "hardware.json").string()), o);
}

std::string error_of(const fs::path& dir, const std::string& parallel,
                     const std::string& model = "glm-5.3-tiny") {
  try {
    own_model(dir, parallel, model);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// Rewrites DIR/profile.json's timing.op_scales entry as `entry` (JSON text).
void set_op_scales(const fs::path& dir, const std::string& entry) {
  nlohmann::json j;
  std::ifstream(dir / "profile.json") >> j;
  j["timing"]["op_scales"] = nlohmann::json::parse(entry);
  std::ofstream(dir / "profile.json") << j.dump(2);
}

}  // namespace

TEST_CASE("an own profile prices its ops exactly at measured points", "[op_profile_own]") {
  const CostModel cm = own_model(own_profile("exact", rows()), "tp1");
  const StepCost d = decode_step(cm, 1, 63);  // one token attending to 64 keys
  CHECK(d[Op::kAProj].time_s == Approx(0.5 * kMsToS));
  CHECK(d[Op::kSparseMla].time_s == Approx(0.125 * kMsToS));
  CHECK(d[Op::kAProj].source == TermSource::kProfile);
  CHECK(d[Op::kRmsnorm].time_s == 0);  // no rows: an op the engine did not run
  CHECK(d[Op::kExpertGemm].time_s == 0);
  CHECK(d.total_s == Approx((0.5 + 0.125) * kMsToS + 1e-4));  // + the measured per-step overhead
  const StepCost d4 = decode_step(cm, 4, 511);
  CHECK(d4[Op::kSparseMla].time_s == Approx(1.0 * kMsToS));
}

TEST_CASE("an own profile interpolates between and extrapolates beyond its points", "[op_profile_own]") {
  const CostModel cm = own_model(own_profile("between", rows()), "tp1");
  const double mid = decode_step(cm, 2, 63)[Op::kAProj].time_s;
  CHECK(mid > 0.5 * kMsToS);
  CHECK(mid < 0.8 * kMsToS);
  // A prefill chunk beyond the last measured length grows with the fitted slope; sampling once.
  const StepCost big = prefill_step(cm, 256, 0, true);
  CHECK(big[Op::kAProj].time_s > 4.0 * kMsToS);
  CHECK(big[Op::kSample].time_s == Approx(0.2 * kMsToS));
  CHECK(prefill_step(cm, 128, 0, false)[Op::kSample].time_s == 0);  // a chunk that does not sample
}

TEST_CASE("op_time_scale scales an own profile's ops", "[op_profile_own]") {
  const fs::path dir = own_profile("scaled", rows());
  CostOptions o;
  auto p = load_op_profile(dir.string());
  apply_profile_sets(*p, "op_time_scale=2");
  o.profile = std::move(p);
  const ModelConfig m = model_preset("glm-5.3-tiny");
  const CostModel cm = make_cost_model(m, parse_parallel("tp1", "test"), m.default_kv_layout,
                                       load_hardware((dir / "hardware.json").string()), o);
  CHECK(decode_step(cm, 1, 63)[Op::kAProj].time_s == Approx(2 * 0.5 * kMsToS));
}

TEST_CASE("timing.op_scales scales its ops, the others take op_time_scale", "[op_profile_own]") {
  const fs::path dir = own_profile("op_scales", rows());
  set_op_scales(dir, R"({"value": {"a_proj": 3}, "unit": "ratio", "source": "test"})");
  CostOptions o;
  auto p = load_op_profile(dir.string());
  REQUIRE(p->op_scales.size() == 1);
  apply_profile_sets(*p, "op_time_scale=2");
  const std::array<double, kOpCount> scales = own_op_scales(*p);
  CHECK(scales[size_t(Op::kAProj)] == 3);
  CHECK(scales[size_t(Op::kSparseMla)] == 2);
  o.profile = std::move(p);
  const ModelConfig m = model_preset("glm-5.3-tiny");
  const CostModel cm = make_cost_model(m, parse_parallel("tp1", "test"), m.default_kv_layout,
                                       load_hardware((dir / "hardware.json").string()), o);
  const StepCost d = decode_step(cm, 1, 63);
  CHECK(d[Op::kAProj].time_s == Approx(3 * 0.5 * kMsToS));
  CHECK(d[Op::kSparseMla].time_s == Approx(2 * 0.125 * kMsToS));
}

TEST_CASE("a bad timing.op_scales entry names the file and field", "[op_profile_own]") {
  const fs::path dir = own_profile("bad_op_scales", rows());
  set_op_scales(dir, R"({"value": {"a_proj": -1}, "source": "test"})");
  const std::string negative = profile_load_error(dir);
  CHECK(negative.find("profile.json: timing.op_scales.value.a_proj") != std::string::npos);
  CHECK(negative.find("a ratio in [1e-06, 1e+06]") != std::string::npos);
  set_op_scales(dir, R"({"value": {"a_proj": "fast"}, "source": "test"})");
  CHECK(profile_load_error(dir).find("timing.op_scales.value.a_proj") != std::string::npos);
  set_op_scales(dir, R"({"value": {"warp_drive": 1}, "source": "test"})");
  const std::string unknown = profile_load_error(dir);
  CHECK(unknown.find("timing.op_scales.value") != std::string::npos);
  CHECK(unknown.find("warp_drive") != std::string::npos);
  set_op_scales(dir, R"({"value": 2, "source": "test"})");
  CHECK(profile_load_error(dir).find("timing.op_scales") != std::string::npos);
  set_op_scales(dir, R"({"value": {"a_proj": 2}})");
  CHECK(profile_load_error(dir).find("\"source\"") != std::string::npos);
  set_op_scales(dir, R"({"value": {"a_proj": 2}, "source": "test"})");
  CHECK(profile_load_error(dir).empty());
}

TEST_CASE("a step with decode and prefill rows pays an op's fixed time once", "[op_profile_own]") {
  // a_proj: decode 0.4 ms + 0.1 ms per sequence, prefill 0.6 ms + 0.025 ms per token (exact lines): the
  // fixed part both pay is the smaller intercept, 0.4 ms.
  const fs::path dir = own_profile("mixed", {{"a_proj", true, 1, 64, 0.5},
                                             {"a_proj", true, 4, 64, 0.8},
                                             {"a_proj", true, 1, 512, 0.5},
                                             {"a_proj", true, 4, 512, 0.8},
                                             {"a_proj", false, 1, 16, 1.0},
                                             {"a_proj", false, 1, 32, 1.4},
                                             {"a_proj", false, 1, 64, 2.2},
                                             {"a_proj", false, 1, 128, 3.8}});
  const CostModel cm = own_model(dir, "tp1");
  const std::vector<SeqWork> mixed = {
      {.new_tokens = 1, .context_tokens = 63, .prefill = false, .last_chunk = false},
      {.new_tokens = 16, .context_tokens = 0, .prefill = true, .last_chunk = true}};
  const double decode_s = decode_step(cm, 1, 63)[Op::kAProj].time_s;
  const double prefill_s = prefill_step(cm, 16, 0, true)[Op::kAProj].time_s;
  CHECK(decode_s == Approx(0.5 * kMsToS));
  CHECK(prefill_s == Approx(1.0 * kMsToS));
  CHECK(step_cost(cm, std::span<const SeqWork>(mixed))[Op::kAProj].time_s ==
        Approx((0.5 + 1.0 - 0.4) * kMsToS).epsilon(1e-3));
}

// dp2-tp2-ep4 rows of a_proj: every group busy 0.8 ms (1 sequence) / 1.2 ms (4), one group alone 0.5 /
// 0.9 ms; a prefill chunk of 16 tokens 2.0 ms every group, 1.5 ms alone.
std::vector<OwnOpRow> dp_rows(bool alone) {
  std::vector<OwnOpRow> r = {{"a_proj", true, 1, 64, 0.8},  {"a_proj", true, 4, 64, 1.2},
                             {"a_proj", true, 1, 512, 0.8}, {"a_proj", true, 4, 512, 1.2},
                             {"a_proj", false, 1, 16, 2.0}, {"a_proj", false, 1, 64, 4.0}};
  if (!alone) return r;
  for (const OwnOpRow& all : std::vector<OwnOpRow>(r)) {
    OwnOpRow one = all;
    one.alone = true;
    one.latency_ms = all.decode ? all.latency_ms - 0.3 : all.latency_ms - 0.5;
    r.push_back(one);
  }
  return r;
}

double a_proj_s(const CostModel& cm, const std::vector<SeqWork>& group0, const std::vector<SeqWork>& group1) {
  const std::span<const SeqWork> ranks[] = {group0, group1};
  return step_cost(cm, std::span<const std::span<const SeqWork>>(ranks))[Op::kAProj].time_s;
}

TEST_CASE("under DP a group's time lies between its alone and every-group rows by its peers' load",
          "[op_profile_own]") {
  const CostModel cm = own_model(own_profile("alone", dp_rows(true), "dp2-tp2-ep4"), "dp2-tp2-ep4");
  const std::vector<SeqWork> one = {
      {.new_tokens = 1, .context_tokens = 63, .prefill = false, .last_chunk = false}};
  const std::vector<SeqWork> four(4, one[0]);
  const std::vector<SeqWork> chunk = {
      {.new_tokens = 16, .context_tokens = 0, .prefill = true, .last_chunk = true}};
  CHECK(a_proj_s(cm, one, {}) == Approx(0.5 * kMsToS));   // the other group idle: the alone rows
  CHECK(a_proj_s(cm, {}, four) == Approx(0.9 * kMsToS));  // whichever group it is
  CHECK(a_proj_s(cm, chunk, {}) == Approx(1.5 * kMsToS));
  CHECK(a_proj_s(cm, one, one) == Approx(0.8 * kMsToS));  // as busy as each other: every-group rows
  // 4 sequences (1.2 ms every-group) beside 1 (0.8 ms): the peer overlaps 2/3 of the step.
  CHECK(a_proj_s(cm, four, one) == Approx((1.2 * 2 / 3 + 0.9 / 3) * kMsToS));
  // A 16-token chunk (2.0 ms) beside one decode (0.8 ms): 0.4 of it.
  CHECK(a_proj_s(cm, chunk, one) == Approx((2.0 * 0.4 + 1.5 * 0.6) * kMsToS));
}

TEST_CASE("a rank's peer load is its peers' time over its own, capped at 1, mean over the peers",
          "[op_profile_own]") {
  const std::vector<double> two = {2.0, 1.0};
  CHECK(own_peer_load(two, 0, 2) == Approx(0.5));
  CHECK(own_peer_load(two, 1, 2) == Approx(1.0));  // its peer is busier: as busy
  const std::vector<double> first = {2.0};
  CHECK(own_peer_load(first, 0, 2) == Approx(0.0));  // ranks not listed idle
  const std::vector<double> four = {2.0, 0.0, 1.0};
  CHECK(own_peer_load(four, 0, 4) == Approx(0.5 / 3));
  CHECK(own_peer_load(two, 0, 1) == 1);  // no DP: no peers
}

TEST_CASE("a DP profile without alone rows prices a one-group step from the every-group rows",
          "[op_profile_own]") {
  const CostModel cm = own_model(own_profile("no_alone", dp_rows(false), "dp2-tp2-ep4"), "dp2-tp2-ep4");
  const std::vector<SeqWork> one = {
      {.new_tokens = 1, .context_tokens = 63, .prefill = false, .last_chunk = false}};
  CHECK(a_proj_s(cm, one, {}) == Approx(0.8 * kMsToS));
  CHECK(a_proj_s(cm, one, one) == Approx(0.8 * kMsToS));
}

TEST_CASE("an own profile refuses a layout or model it was not measured on", "[op_profile_own]") {
  const fs::path dir = own_profile("layout", rows());
  const std::string layout = error_of(dir, "dp2-tp2-ep4");
  CHECK(layout.find("layout tp1") != std::string::npos);
  CHECK(layout.find("dp2-tp2-ep4") != std::string::npos);
  CHECK(layout.find("tokenline profile") != std::string::npos);
  CHECK(error_of(dir, "tp1", "glm-5.3").find("model glm-5.3-tiny") != std::string::npos);
  CHECK(error_of(dir, "tp1").empty());
}

TEST_CASE("an ops row naming an unknown op or phase is reported at its line", "[op_profile_own]") {
  const fs::path dir = own_profile("bad_op", rows());
  std::ofstream(dir / "ops.csv")
      << "op,phase,batch,tokens,latency_ms\na_proj,decode,1,64,0.5\nwarp_drive,decode,1,64,1\n";
  const std::string op = error_of(dir, "tp1");
  CHECK(op.find("ops.csv:3") != std::string::npos);
  CHECK(op.find("warp_drive") != std::string::npos);
  std::ofstream(dir / "ops.csv") << "op,phase,batch,tokens,latency_ms\na_proj,verify,1,64,0.5\n";
  const std::string phase = error_of(dir, "tp1");
  CHECK(phase.find("ops.csv:2: column phase") != std::string::npos);
  CHECK(phase.find("decode-alone or prefill-alone") != std::string::npos);
}

TEST_CASE("a speed scale multiplies an own profile's ops and step terms", "[op_profile_own]") {
  const fs::path dir = own_profile("speed", rows(), "tp1", 0.02);
  const ModelConfig m = model_preset("glm-5.3-tiny");
  auto cost_model = [&](const std::string& sets) {
    CostOptions o;
    auto p = load_op_profile(dir.string());
    apply_profile_sets(*p, sets);
    o.profile = std::move(p);
    return make_cost_model(m, parse_parallel("tp1", "test"), m.default_kv_layout,
                           load_hardware((dir / "hardware.json").string()), o);
  };
  const StepCost as_measured = decode_step(cost_model(""), 4, 511);
  const StepCost slower = decode_step(cost_model("speed_scale=1.25"), 4, 511);
  CHECK(slower[Op::kSparseMla].time_s == Approx(1.25 * as_measured[Op::kSparseMla].time_s));
  CHECK(slower.overhead_s == Approx(1.25 * 1e-4));
  CHECK(slower.total_s == Approx(1.25 * as_measured.total_s));
  const StepCost scaled_ops = decode_step(cost_model("op_time_scale=2,speed_scale=0.5"), 4, 511);
  CHECK(scaled_ops[Op::kAProj].time_s == Approx(as_measured[Op::kAProj].time_s));  // 2 x 0.5
}

TEST_CASE("a run's speed probe over the profile's sets the speed scale", "[op_profile_own]") {
  auto p = load_op_profile(own_profile("probe", rows(), "tp1", 0.02).string());
  CHECK(p->param(TimingParam::kSpeedProbeS) == Approx(0.02));
  CHECK(p->param(TimingParam::kSpeedScale) == 1);
  set_speed_from_run(*p, 0.03, "--speed-of");
  CHECK(p->param(TimingParam::kSpeedScale) == Approx(1.5));
  CHECK_THROWS_WITH(set_speed_from_run(*p, 0, "--speed-of"), Catch::Contains("a run's speed probe > 0 s"));
  // A profile that recorded no probe cannot be put at another speed.
  auto unprobed = load_op_profile(own_profile("no_probe", rows()).string());
  CHECK_THROWS_WITH(set_speed_from_run(*unprobed, 0.03, "--speed-of"),
                    Catch::Contains("--speed-of") && Catch::Contains("speed_probe_s"));
  // A profile of another engine's kernels has no probe and refuses a speed scale by hand.
  auto gpu = load_op_profile("h200-sglang");
  CHECK_THROWS_WITH(set_speed_from_run(*gpu, 0.03, "--speed-of"), Catch::Contains("h200-sglang"));
  apply_profile_sets(*gpu, "speed_scale=1.1");
  CostOptions o;
  o.profile = std::move(gpu);
  const ModelConfig m = model_preset("deepseek-v3");
  CHECK_THROWS_WITH(
      make_cost_model(m, parse_parallel("tp8", "test"), m.default_kv_layout, load_hardware("h200"), o),
      Catch::Contains("timing.speed_scale") && Catch::Contains("tokenline profile"));
  CHECK_THROWS_WITH(apply_profile_sets(*load_op_profile("h200-sglang"), "speed_scale=0"),
                    Catch::Contains("a value in [1e-06, 1e+06]"));
}

}  // namespace tokenline
