// What prices a run when no flag says (cli/time_source_choice.h): the engine's shipped profile on the
// hardware where it measures the model's kernels, else the nearest other GPU's that does, transferred, each
// with its reason; and the binary's summary and metrics.json saying so.
#include "cli/time_source_choice.h"

#include <catch2/catch.hpp>

#include "common/input_error.h"
#include "engine/model/model_config.h"
#include "tests/cli/tokenline_process.h"
#include "topologies/hardware_loader.h"

namespace tokenline::cli {
namespace {

using testing::read_json;
using testing::run_tokenline_both;
using testing::TestDir;

TimeSourceChoice choose(const TimeSourceFlags& f, const std::string& model, const std::string& layout,
                        const std::string& hardware) {
  return choose_time_source(f, model_preset(model), {parse_parallel(layout, "test")}, load_hardware(hardware),
                            "");
}

TEST_CASE("no flag: the shipped SGLang profile of the hardware where it measures the model's kernels",
          "[time_source]") {
  const TimeSourceChoice c = choose({}, "llama-3.1-70b", "tp8", "h200");
  CHECK(c.kind == "profile");
  CHECK(c.profile == "h200-sglang");
  CHECK(c.defaulted);
  CHECK_THAT(c.why, Catch::Contains("h200 x sglang"));
  CHECK(choose({}, "deepseek-v3", "tp8", "b200").profile == "b200-sglang");
}

TEST_CASE("no flag: B300 and GB200 take their own SGLang profiles where they measure the model's kernels",
          "[time_source]") {
  // Issue 43: b300-sglang and gb200-sglang from aiconfigurator's tables of those GPUs.
  const TimeSourceChoice b = choose({}, "llama-3.1-70b", "tp8", "b300");
  CHECK(b.kind == "profile");
  CHECK(b.profile == "b300-sglang");
  CHECK(b.defaulted);
  CHECK_THAT(b.why, Catch::Contains("b300 x sglang"));
  CHECK(choose({}, "llama-3.1-70b", "tp4", "gb200").profile == "gb200-sglang");
}

TEST_CASE("no flag, own profile short of a kernel: the nearest GPU's that has it, transferred, saying why",
          "[time_source]") {
  // gb200-sglang's collectives are measured on 2 and 4 GPUs (one GB200 compute tray): a TP8 all-reduce is
  // not in its tables, and B300 is the nearest GPU whose SGLang profile measures it.
  const TimeSourceChoice c = choose({}, "llama-3.1-70b", "tp8", "gb200");
  CHECK(c.kind == "transferred");
  CHECK(c.profile == "transfer:b300-sglang");
  CHECK(c.defaulted);
  CHECK_THAT(c.why, Catch::Contains("the shipped profile gb200-sglang leaves") &&
                        Catch::Contains("b300-sglang measures every kernel"));
}

TEST_CASE("a profile that leaves a kernel of the model to the roofline is not a default", "[time_source]") {
  // b200-sglang measures no DSA kernel (sparse MLA, the indexer): DeepSeek-V3.2 leaves them to the roofline,
  // DeepSeek-V3 on the same layout leaves nothing.
  const std::vector<std::string> missing =
      uncovered_kernels("b200-sglang", model_preset("deepseek-v3.2"), {parse_parallel("tp8", "test")},
                        load_hardware("b200"), "");
  REQUIRE_FALSE(missing.empty());
  CHECK_THAT(missing.front(), Catch::Contains("sparse_mla"));
  CHECK(uncovered_kernels("b200-sglang", model_preset("deepseek-v3"), {parse_parallel("tp8", "test")},
                          load_hardware("b200"), "")
            .empty());
  // No SGLang profile measures DeepSeek-V3.2's sparse attention: b200-sglang prices it anyway (its engine,
  // step terms and measured kernels), not the bare roofline.
  const TimeSourceChoice c = choose({}, "deepseek-v3.2", "tp8", "b200");
  CHECK(c.profile == "b200-sglang");
  CHECK(c.kind == "profile");
  CHECK_THAT(c.why, Catch::Contains("leaves sparse_mla"));
}

TEST_CASE("flags name the source: --profile, --engine, --roofline, --ideal, a replay", "[time_source]") {
  CHECK(choose({.profile = "h200-vllm"}, "llama-3.1-70b", "tp8", "h200").profile == "h200-vllm");
  const TimeSourceChoice e = choose({.engine = "trtllm"}, "llama-3.1-70b", "tp8", "b200");
  CHECK(e.profile == "b200-trtllm");
  CHECK_FALSE(e.defaulted);
  CHECK(choose({.roofline = true}, "llama-3.1-70b", "tp8", "h200").kind == "roofline");
  CHECK(choose({.ideal = true}, "llama-3.1-70b", "tp8", "h200").kind == "ideal");
  CHECK(choose({.replay = true}, "llama-3.1-70b", "tp8", "h200").kind == "replay");
  CHECK_THROWS_AS(choose({.engine = "sglang", .roofline = true}, "llama-3.1-70b", "tp8", "h200"), InputError);
  // Issue 43: GB200's own TensorRT-LLM profile, named by --engine although its collectives stop at 4 GPUs
  const TimeSourceChoice g = choose({.engine = "trtllm"}, "llama-3.1-70b", "tp8", "gb200");
  CHECK(g.kind == "profile");
  CHECK(g.profile == "gb200-trtllm");
  CHECK_FALSE(g.defaulted);
  CHECK(choose({.engine = "vllm"}, "llama-3.1-70b", "tp4", "gb200").profile == "gb200-vllm");
  CHECK(choose({.engine = "trtllm"}, "llama-3.1-70b", "tp8", "b300").profile == "b300-trtllm");
  CHECK(choose({.profile = "transfer:h200-vllm"}, "llama-3.1-70b", "tp8", "b200").kind == "transferred");
}

TEST_CASE("sim with --engine and no --profile prices with that engine's profile and says so",
          "[time_source]") {
  TestDir dir("time_source_engine");
  const auto r = run_tokenline_both(
      "sim --model llama-3.1-70b --hardware b200 --engine trtllm --max-requests 20 --out '" + dir.file("o") +
          "'",
      dir);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.stdout_text, Catch::Contains("step times    profile b200-trtllm:") &&
                                Catch::Contains("% of step time measured") &&
                                Catch::Contains("(--engine trtllm)"));
  const auto t = read_json(dir.file("o/metrics.json"))["configuration"]["time_source"];
  CHECK(t["kind"] == "profile");
  CHECK(t["profile"] == "b200-trtllm");
  CHECK(t["defaulted"] == false);
}

TEST_CASE("sim without a time-source flag says what it chose and why, and --roofline forces the roofline",
          "[time_source]") {
  TestDir dir("time_source_default");
  const auto d = run_tokenline_both(
      "sim --model llama-3.1-70b --hardware h200 --max-requests 20 --out '" + dir.file("d") + "'", dir);
  REQUIRE(d.exit_code == 0);
  CHECK_THAT(d.stdout_text, Catch::Contains("step times    profile h200-sglang:") &&
                                Catch::Contains("(default: the shipped profile for h200 x sglang"));
  const auto dm = read_json(dir.file("d/metrics.json"));
  CHECK(dm["configuration"]["time_source"]["defaulted"] == true);
  CHECK(dm["configuration"]["profile"] == "h200-sglang");
  CHECK(dm["time_sources"]["profile_coverage"].get<double>() > 0.5);
  CHECK_FALSE(dm["time_sources"].contains("bounded_share"));  // every collective's group measured
  CHECK_THAT(d.stdout_text, !Catch::Contains("bounded by a smaller group"));
  // DP32 over an NVL72 rack: gb200-trtllm's comm table measures 2 and 4 GPUs, so the per-layer gathers and
  // scatters are a lower bound from the 4-GPU rows, counted as measured and said apart.
  const auto wide = run_tokenline_both(
      "sim --model deepseek-v3 --hardware gb200 --engine trtllm --gpus 32 "
      "--parallel dp32-ep32 --max-requests 20 --out '" +
          dir.file("w") + "'",
      dir);
  REQUIRE(wide.exit_code == 0);
  CHECK_THAT(wide.stdout_text,
             Catch::Contains("of step time: collectives bounded by a smaller group's rows"));
  const auto wm = read_json(dir.file("w/metrics.json"));
  CHECK(wm["time_sources"]["bounded_share"].get<double>() > 0);
  CHECK(wm["time_sources"]["bounded_share"].get<double>() <
        wm["time_sources"]["profile_coverage"].get<double>());
  const auto r = run_tokenline_both(
      "sim --model llama-3.1-70b --hardware h200 --max-requests 20 --roofline --out '" + dir.file("r") + "'",
      dir);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.stdout_text, Catch::Contains("step times    the roofline (--roofline)"));
  CHECK(read_json(dir.file("r/metrics.json"))["configuration"]["time_source"]["kind"] == "roofline");
  const auto b3 = run_tokenline_both(
      "sim --model llama-3.1-70b --hardware b300 --engine sglang --max-requests 20 --out '" + dir.file("b3") +
          "'",
      dir);
  REQUIRE(b3.exit_code == 0);
  CHECK_THAT(b3.stdout_text,
             Catch::Contains("step times    profile b300-sglang:") && Catch::Contains("(--engine sglang)"));
  CHECK(read_json(dir.file("b3/metrics.json"))["configuration"]["time_source"]["profile"] == "b300-sglang");
  const auto gb = run_tokenline_both(
      "sim --model llama-3.1-70b --hardware gb200 --parallel tp8 --max-requests 20 --out '" + dir.file("g") +
          "'",
      dir);
  REQUIRE(gb.exit_code == 0);
  CHECK_THAT(gb.stdout_text, Catch::Contains("step times    transferred from b300-sglang: its engine") &&
                                 Catch::Contains("(default: the shipped profile gb200-sglang leaves"));
  const auto gm = read_json(dir.file("g/metrics.json"));
  CHECK(gm["configuration"]["time_source"]["kind"] == "transferred");
  CHECK(gm["configuration"]["time_source"]["profile"] == "transfer:b300-sglang");
  CHECK(gm["time_sources"]["profile_coverage"].get<double>() > 0.3);  // transferred ops: most of the GPU time
  const auto forced =
      run_tokenline_both("sim --model llama-3.1-70b --hardware gb200 --max-requests 20 --roofline --out '" +
                             dir.file("gr") + "'",
                         dir);
  REQUIRE(forced.exit_code == 0);
  CHECK_THAT(forced.stdout_text, Catch::Contains("step times    the roofline (--roofline)"));
  const auto both =
      run_tokenline_both("sim --roofline --profile h200-sglang --out '" + dir.file("b") + "'", dir);
  CHECK(both.exit_code == 2);
  CHECK_THAT(both.stderr_text, Catch::Contains("--roofline"));
}

}  // namespace
}  // namespace tokenline::cli
