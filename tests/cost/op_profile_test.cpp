// load_op_profile / apply_profile_sets: the loader's errors name file and line; timing overrides.
#include "cost/op_profile.h"

#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "common/input_error.h"
#include "tests/cost/profile_load_error.h"
#include "topologies/hardware_loader.h"

namespace tokenline {
namespace {

namespace fs = std::filesystem;

// A scratch profile directory with one gemm table of the given text (or none).
fs::path scratch_profile(const std::string& name, const std::string& gemm_csv, bool write_gemm = true,
                         const std::string& engine = R"({"name": "vllm"})") {
  const fs::path dir =
      fs::temp_directory_path() / ("tl_op_profile_" + name + "-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "profile.json") << R"({"name": "t", "hardware": "h200", "engine_name": "sglang",
    "tables": {"gemm": "gemm.csv"}, "engine": )"
                                      << engine << "}";
  if (write_gemm) {
    std::ofstream(dir / "gemm.csv") << gemm_csv;
  } else {
    fs::remove(dir / "gemm.csv");
  }
  return dir;
}

// A scratch profile directory whose profile.json is `json` and whose gemm.csv (when given) is `gemm_csv`.
fs::path scratch_json_profile(const std::string& name, const std::string& json,
                              const std::string& gemm_csv = "") {
  const fs::path dir =
      fs::temp_directory_path() / ("tl_op_profile_" + name + "-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "profile.json") << json;
  if (!gemm_csv.empty()) std::ofstream(dir / "gemm.csv") << gemm_csv;
  return dir;
}

// A profile directory unique to this process: profile.json is `json`, plus `files` (name, text).
fs::path own_dir_profile(const std::string& name, const std::string& json,
                         std::initializer_list<std::pair<const char*, std::string>> files = {}) {
  const fs::path dir =
      fs::temp_directory_path() / ("tl_op_profile_" + name + "_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "profile.json") << json;
  for (const auto& [file, text] : files) std::ofstream(dir / file) << text;
  return dir;
}

// profile.json of an h200 profile with one gemm table "gemm.csv" and the given timing block.
std::string gemm_profile_json(const std::string& timing = "{}") {
  return R"({"name": "t", "hardware": "h200", "engine_name": "sglang", "tables": {"gemm": "gemm.csv"},
    "timing": )" +
         timing + "}";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The InputError message of apply_profile_sets(h200-sglang, sets), or "" when it applies.
std::string profile_set_error(const std::string& sets) {
  auto p = load_op_profile("h200-sglang");
  try {
    apply_profile_sets(*p, sets);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("profile timing terms outside their range are refused naming the key, found and allowed",
          "[op_profile]") {
  // Each reached SimGrid before as a non-finite duration (1e308 x layers) or as 1e22 simulated seconds.
  CHECK(profile_set_error("step_floor_per_layer_s=1e308") ==
        "--profile-set step_floor_per_layer_s: expected a value in [0, 60], found 1e+308");
  CHECK(contains(profile_set_error("step_cpu_overhead_s=1e20"),
                 "step_cpu_overhead_s: expected a value in [0, 60]"));
  CHECK(contains(profile_set_error("eager_launch_gap_s=1e308"),
                 "eager_launch_gap_s: expected a value in [0, 60]"));
  CHECK(contains(profile_set_error("eager_launch_gap_s=inf"), "eager_launch_gap_s"));
  CHECK(contains(profile_set_error("op_time_scale=1e300"), "expected a value in [1e-06, 1e+06]"));
  CHECK(contains(profile_set_error("cuda_graph_max_bs=1e9"), "expected an integer in [0, 65536]"));
  CHECK(contains(profile_set_error("moe_routing_alpha=-1"), "expected a value in [0, 100]"));
  CHECK(profile_set_error("step_floor_per_layer_s=0.0002,eager_launch_gap_s=5e-6").empty());
  SECTION("the same in profile.json, named by file and key") {
    const std::string msg = profile_load_error(own_dir_profile(
        "timing_range",
        gemm_profile_json(R"({"step_floor_per_layer_s": {"value": 1e308, "unit": "s", "source": "x"}})"),
        {{"gemm.csv", "dtype,m,n,k,latency_ms\nfp8_block,1,128,128,0.01\n"}}));
    CHECK(contains(
        msg, "profile.json: timing.step_floor_per_layer_s.value: expected a value in [0, 60], found 1e+308"));
  }
}

TEST_CASE("a --profile-set name given twice is refused, not last-wins", "[op_profile]") {
  CHECK(profile_set_error("step_cpu_overhead_s=0.001,step_cpu_overhead_s=0.002") ==
        "--profile-set step_cpu_overhead_s: expected each name once, found 'step_cpu_overhead_s' twice in "
        "'step_cpu_overhead_s=0.001,step_cpu_overhead_s=0.002'");
}

TEST_CASE("a profile.json number beyond a double is a message, not an escaped out_of_range", "[op_profile]") {
  const std::string msg = profile_load_error(own_dir_profile(
      "json_1e999", gemm_profile_json(R"({"step_cpu_overhead_s": {"value": 1e999, "source": "x"}})"),
      {{"gemm.csv", "dtype,m,n,k,latency_ms\n"}}));
  CHECK(contains(msg, "profile.json: expected valid JSON with finite numbers"));
  CHECK(contains(msg, "1e999"));
}

TEST_CASE("profile latencies out of range and duplicate shapes are refused with file and line",
          "[op_profile]") {
  const auto gemm_error = [](const std::string& name, const std::string& rows) {
    return profile_load_error(
        own_dir_profile(name, gemm_profile_json(), {{"gemm.csv", "dtype,m,n,k,latency_ms\n" + rows}}));
  };
  const std::string huge = gemm_error("lat_huge", "fp8_block,1,128,128,0.01\nfp8_block,2,128,128,1e308\n");
  CHECK(contains(huge, "gemm.csv:3: column latency_ms: expected a latency in [0, 3.6e6] ms, found '1e308'"));
  CHECK(contains(gemm_error("lat_negative", "fp8_block,1,128,128,-0.5\n"), "gemm.csv:2: column latency_ms"));
  CHECK(contains(gemm_error("lat_nan", "fp8_block,1,128,128,nan\n"), "gemm.csv:2: column latency_ms"));
  CHECK(contains(gemm_error("key_huge", "fp8_block,1e300,128,128,0.01\n"),
                 "gemm.csv:2: column m: expected an integer in [1, 2^53]"));
  const std::string conflict = gemm_error(
      "dup_conflict", "fp8_block,1,128,128,0.01\nfp8_block,2,128,128,0.02\nfp8_block,1,128,128,0.5\n");
  CHECK(contains(conflict,
                 "gemm.csv:4: expected each shape once (this one is also on line 2), found a conflicting "
                 "latency 0.5 ms (line 2: 0.01 ms)"));
  CHECK(contains(gemm_error("dup_same", "fp8_block,1,128,128,0.01\nfp8_block,1,128,128,0.01\n"),
                 "gemm.csv:3: expected each shape once (this one is also on line 2), found a duplicate row"));
  // Another dtype or another shape is another row.
  CHECK(
      gemm_error("dup_none", "fp8_block,1,128,128,0.01\nbfloat16,1,128,128,0.02\nfp8_block,1,256,128,0.03\n")
          .empty());
}

TEST_CASE("a profile file that is not a regular file under the limit is refused before it is read",
          "[op_profile]") {
  // /dev/zero as a table read until memory ran out (2.1 GB in 14 s); now it stops at 64 MiB.
  const std::string zero = profile_load_error(own_dir_profile(
      "dev_zero",
      R"({"name": "t", "hardware": "h200", "engine_name": "sglang", "tables": {"gemm": "/dev/zero"}})"));
  CHECK(
      contains(zero, "/dev/zero: expected a file of at most 64 MiB (an input limit), found a longer stream"));
  const fs::path dir = own_dir_profile("big_table", gemm_profile_json(), {{"gemm.csv", ""}});
  fs::resize_file(dir / "gemm.csv", (std::uintmax_t{64} << 20) + 1);  // sparse: nothing is written
  const std::string big = profile_load_error(dir);
  CHECK(contains(big, "gemm.csv: expected a file of at most 64 MiB (an input limit), found 67108865 bytes"));
  fs::remove_all(dir);
  const fs::path sub = own_dir_profile("dir_table", gemm_profile_json());
  fs::create_directories(sub / "gemm.csv");
  CHECK(contains(profile_load_error(sub), "gemm.csv: expected a file, found a directory"));
}

TEST_CASE("profile loader names the file and line of bad input", "[op_profile]") {
  SECTION("missing table") {
    const std::string msg = profile_load_error(scratch_profile("missing", "", false));
    CHECK(msg.find("gemm.csv") != std::string::npos);
    CHECK(msg.find("no such file") != std::string::npos);
  }
  SECTION("bad header") {
    const std::string msg = profile_load_error(scratch_profile("header", "dtype,m,n,latency_ms\n"));
    CHECK(msg.find("gemm.csv:1") != std::string::npos);
  }
  SECTION("bad number") {
    const std::string msg = profile_load_error(scratch_profile(
        "number", "dtype,m,n,k,latency_ms\nfp8_block,1,128,128,0.01\nfp8_block,2,x,128,0.01\n"));
    CHECK(msg.find("gemm.csv:3") != std::string::npos);
    CHECK(msg.find("column n") != std::string::npos);
  }
  SECTION("missing column") {
    const std::string msg =
        profile_load_error(scratch_profile("columns", "dtype,m,n,k,latency_ms\nfp8_block,1,128,0.01\n"));
    CHECK(msg.find("gemm.csv:2") != std::string::npos);
  }
  SECTION("a good table loads, with the engine block it carries") {
    const auto p = load_op_profile(
        scratch_profile("good", "dtype,m,n,k,latency_ms\nfp8_block,1,128,128,0.01\n").string());
    CHECK(p->table(ProfileTableKind::kGemm).rows() == 1);
    CHECK(p->table(ProfileTableKind::kMoe).empty());
    CHECK(p->has_engine);
    CHECK(p->engine.admission == Admission::kIncremental);  // vLLM's
  }
  SECTION("a bad engine field names the profile and the field") {
    const std::string msg = profile_load_error(scratch_profile(
        "engine", "dtype,m,n,k,latency_ms\nfp8_block,1,128,128,0.01\n", true, R"({"anything": [1, 2]})"));
    CHECK(msg.find("profile.json") != std::string::npos);
    CHECK(msg.find("anything") != std::string::npos);
  }
  CHECK_THROWS_AS(load_op_profile("no-such-profile"), InputError);
}

TEST_CASE("profile timing overrides (--profile-set) set named parameters and reject unknown ones",
          "[op_profile]") {
  auto p = load_op_profile("h200-sglang");
  CHECK(p->param(TimingParam::kCudaGraphMaxBs) == 0);  // 0: the engine block's, derived per layout
  apply_profile_sets(*p, "step_cpu_overhead_s=0.002,overlap_schedule=0");
  CHECK(p->param(TimingParam::kStepCpuOverheadS) == Approx(0.002));
  CHECK(p->param(TimingParam::kOverlapSchedule) == 0);
  try {
    apply_profile_sets(*p, "no_such_knob=1");
    FAIL("expected InputError");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("no_such_knob") != std::string::npos);
  }
  CHECK_THROWS_AS(apply_profile_sets(*p, "overlap_schedule=2"), InputError);
}

TEST_CASE("tables_from prices a profile from another profile's tables on the same GPU", "[op_profile]") {
  const auto sglang = load_op_profile("h200-sglang");
  SECTION("h200-vllm: vLLM's own H200 kernels, SGLang's GEMMs and the kinds vLLM's collection lacks") {
    const auto vllm = load_op_profile("h200-vllm");
    for (int k = 0; k < kProfileTableKinds; ++k) {
      const auto kind = ProfileTableKind(k);
      if (kind == ProfileTableKind::kOps) continue;  // own profiles' table (tokenline profile)
      const ProfileTable& own = vllm->table(kind);
      const ProfileTable& other = sglang->table(kind);
      INFO(profile_table_key(kind));
      CHECK_FALSE(own.empty());
      if (kind == ProfileTableKind::kGemm || kind == ProfileTableKind::kMlaBmm ||
          kind == ProfileTableKind::kMlaModuleDecode || kind == ProfileTableKind::kDsa ||
          kind == ProfileTableKind::kGdn || kind == ProfileTableKind::kKda) {
        CHECK(own.file == other.file);  // tables_from h200-sglang
        CHECK(own.numbers == other.numbers);
      } else {
        CHECK(own.file != other.file);  // vLLM 0.14.0's measurements
        CHECK(own.numbers != other.numbers);
      }
    }
    CHECK(vllm->engine.admission == Admission::kIncremental);
    CHECK(vllm->param(TimingParam::kOverlapSchedule) == 1);  // async scheduling, vLLM 0.14's default
    CHECK(vllm->param(TimingParam::kSharedExpertsFusion) == 0);
  }
  SECTION("the profile's own tables replace the named profile's, kind by kind") {
    const auto p = load_op_profile(
        scratch_json_profile("from_own", R"({"name": "t", "hardware": "h200", "engine_name": "vllm",
          "tables_from": "h200-sglang", "tables": {"gemm": "gemm.csv"}})",
                             "dtype,m,n,k,latency_ms\nfp8_block,1,128,128,0.01\n")
            .string());
    CHECK(p->table(ProfileTableKind::kGemm).rows() == 1);
    CHECK(p->table(ProfileTableKind::kMoe).rows() == sglang->table(ProfileTableKind::kMoe).rows());
  }
  SECTION("no such profile, another GPU's tables, a chain: exit 2 naming tables_from") {
    // profile.json of a profile on `hardware` whose tables come from `from`
    const auto taking = [](const std::string& hardware, const std::string& from) {
      return R"({"name": "t", "hardware": ")" + hardware + R"(", "engine_name": "vllm", "tables_from": ")" +
             from + R"("})";
    };
    const fs::path middle = scratch_json_profile("from_middle", taking("h200", "h200-sglang"));
    const struct {
      const char* dir;
      std::string json;
      const char* found;  // what the message says was found
    } cases[] = {{"from_none", taking("h200", "no-such"), "'no-such'"},
                 {"from_gpu", taking("b200", "h200-sglang"), "measured on h200"},
                 {"from_chain", taking("h200", middle.string()), "itself tables_from another"}};
    for (const auto& c : cases) {
      const std::string msg = profile_load_error(scratch_json_profile(c.dir, c.json));
      CHECK(msg.find("profile.json: tables_from") != std::string::npos);
      CHECK(msg.find(c.found) != std::string::npos);
    }
  }
}

namespace {

// A scratch profile.json of `engine` on `hardware` with one GEMM table whose engine block's moe_backend holds
// `fields` (JSON object members).
std::string with_moe_backend(const std::string& engine, const std::string& hardware,
                             const std::string& fields) {
  return R"({"name": "t", "hardware": ")" + hardware + R"(", "engine_name": ")" + engine +
         R"(", "tables": {"gemm": "gemm.csv"}, "engine": {"name": ")" + engine + R"(", "moe_backend": {)" +
         fields + "}}}";
}

}  // namespace

// engine.moe_backend.contiguous_align names the backends whose grouped GEMM pads each local expert's rows:
// an alignment outside [1, 4096] or not a whole number is exit 2 naming the field.
TEST_CASE("a profile's moe_backend.contiguous_align must be whole rows", "[op_profile][moe_backend]") {
  const auto with = [](const std::string& align) {
    return with_moe_backend("vllm", "h200", R"("value": "auto", "contiguous_align": )" + align);
  };
  const std::string gemm = "dtype,m,n,k,latency_ms\nfp8_block,1,128,128,0.01\n";
  for (const char* bad : {R"({"deep_gemm": 0})", R"({"deep_gemm": 1.5})", R"({"deep_gemm": 5000})",
                          R"({"deep_gemm": "128"})", "[128]", R"({"deepgemm": 128})"}) {
    const std::string msg = profile_load_error(scratch_json_profile("align", with(bad), gemm));
    CHECK(msg.find("moe_backend.contiguous_align") != std::string::npos);
  }
  const auto p =
      load_op_profile(scratch_json_profile("align_ok", with(R"({"deep_gemm": 128})"), gemm).string());
  REQUIRE(select_moe_backend(*p, "deep_gemm", "test"));
  CHECK(p->param(TimingParam::kMoeContiguousAlign) == 128);
  CHECK(p->moe_backend == "deep_gemm");
}

// engine.moe_backend.formats maps formats to backend names: anything else is exit 2 naming the field.
TEST_CASE("a profile's moe_backend.formats must name a backend per format", "[op_profile][moe_backend]") {
  const auto with = [](const std::string& formats) {
    return with_moe_backend("trtllm", "b300", R"("value": "CUTLASS", "formats": )" + formats);
  };
  const std::string gemm = "dtype,m,n,k,latency_ms\nbfloat16,1,128,128,0.01\n";
  const struct {
    const char* formats;
    const char* found;  // what the message says was found
  } bad[] = {{R"(["nvfp4"])", "[\"nvfp4\"]"},
             {R"({"nvfp4": 1})", "1"},
             {R"({"nvfp4": ""})", "''"},
             {R"({"nvfp4": "cutlass"})", "'cutlass'"},        // vLLM's name, not TensorRT-LLM's
             {R"({"nvfp4": "TRTLLM_GEN"})", "'TRTLLM_GEN'"},  // no such backend
             {R"({"fp4": "CUTLASS"})", "'fp4'"},              // no such dtype label
             {R"({"bfloat16": "CUTLASS"})", "'bfloat16'"}};   // what a format without rows is priced from
  for (const auto& c : bad) {
    CAPTURE(c.formats);
    const std::string msg = profile_load_error(scratch_json_profile("formats", with(c.formats), gemm));
    CHECK(msg.find("moe_backend.formats") != std::string::npos);
    CHECK(msg.find(c.found) != std::string::npos);
  }
  // SGLang names its MoE kernels by moe_runner_backend: formats under moe_backend are refused there.
  const std::string sglang =
      with_moe_backend("sglang", "b200", R"("value": "auto", "formats": {"nvfp4": "CUTLASS"})");
  CHECK(
      profile_load_error(scratch_json_profile("formats_sglang", sglang, gemm)).find("moe_backend.formats") !=
      std::string::npos);
  // vLLM's own names are taken in a vLLM profile.
  CHECK_NOTHROW(load_op_profile(
      scratch_json_profile(
          "formats_vllm",
          with_moe_backend("vllm", "b200", R"("value": "auto", "formats": {"nvfp4": "flashinfer_cutlass"})"),
          gemm)
          .string()));
  const auto p =
      load_op_profile(scratch_json_profile("formats_ok", with(R"({"nvfp4": "CUTLASS"})"), gemm).string());
  REQUIRE(p->moe_format_backends.size() == 1);
  CHECK(p->moe_format_backends.front() == std::pair<std::string, std::string>{"nvfp4", "CUTLASS"});
}

// The moe row of a DeepSeek-V3 expert shape (7168 x 2048, top-8 of 256) at 16 tokens, FP8 blocks, MoE TP8,
// power-law 1.01 routing: its latency in ms.
namespace {
double deepseek_moe_row_ms(const OpProfile& p) {
  const ProfileTable& t = p.table(ProfileTableKind::kMoe);
  for (size_t r = 0; r < t.rows(); ++r) {
    if (t.text_at(r, 0) != "fp8_block" || t.text_at(r, 1) != "power_law_1.01") continue;
    if (t.at(r, 0) == 16 && t.at(r, 1) == 7168 && t.at(r, 2) == 2048 && t.at(r, 3) == 8 &&
        t.at(r, 4) == 256 && t.at(r, 5) == 8 && t.at(r, 6) == 1)
      return t.at(r, 7);
  }
  return -1;
}
}  // namespace

// Issue 43: the published B200 SGLang runs launched --moe-runner-backend flashinfer_trtllm; the profile
// prices the fused MoE by the table that timed that runner (moe_flashinfer_trtllm.csv, aiconfigurator's
// sglang_flashinfer_trtllm_moe rows), not by the Triton runner's moe.csv.
TEST_CASE("the MoE runner a run launched (sim --moe-runner-backend) is priced by the table that timed it",
          "[op_profile]") {
  const std::shared_ptr<OpProfile> p = load_op_profile("b200-sglang");
  CHECK(p->moe_runner == "triton");
  CHECK(deepseek_moe_row_ms(*p) == 0.194664);  // moe.csv: sglang_fused_moe_triton, SGLang 0.5.9
  CHECK(select_moe_runner(*p, "flashinfer_trtllm", "--moe-runner-backend"));
  CHECK(p->moe_runner == "flashinfer_trtllm");
  CHECK(deepseek_moe_row_ms(*p) == 0.10215);  // moe_flashinfer_trtllm.csv: SGLang 0.5.14's rows of it
  CHECK(select_moe_runner(*p, "flashinfer_trtllm", "--moe-runner-backend"));  // again: unchanged
  CHECK(deepseek_moe_row_ms(*p) == 0.10215);
  CHECK(select_moe_runner(*p, "triton", "--moe-runner-backend"));  // and back
  CHECK(deepseek_moe_row_ms(*p) == 0.194664);
  // A runner the profile has no table of leaves it as it is; a name SGLang does not know is refused.
  CHECK_FALSE(select_moe_runner(*p, "cutlass", "--moe-runner-backend"));
  CHECK(p->moe_runner == "triton");
  CHECK(deepseek_moe_row_ms(*p) == 0.194664);
  CHECK_THROWS_AS(select_moe_runner(*p, "flashinfer_trt", "--moe-runner-backend"), InputError);
  const std::shared_ptr<OpProfile> h200 = load_op_profile("h200-sglang");
  CHECK(h200->moe_runner.empty());
  CHECK_FALSE(select_moe_runner(*h200, "flashinfer_trtllm", "--moe-runner-backend"));
}

TEST_CASE("the h200-sglang profile is embedded with every table", "[op_profile]") {
  const auto p = load_op_profile("h200-sglang");
  CHECK(p->hardware == "h200");
  CHECK(p->engine_name == "sglang");
  for (int k = 0; k < kProfileTableKinds; ++k) {
    if (ProfileTableKind(k) == ProfileTableKind::kOps) continue;  // own profiles' table (tokenline profile)
    CHECK_FALSE(p->table(ProfileTableKind(k)).empty());
  }
}

TEST_CASE("every shipped profile loads, names its GPU and engine as its name does", "[op_profile]") {
  const std::vector<std::string> names = embedded_profile_names();
  for (const char* want : {"b200-sglang", "b200-trtllm", "b200-vllm", "b300-sglang", "b300-trtllm",
                           "b300-vllm", "gb200-sglang", "gb200-trtllm", "gb200-vllm", "h100-sglang",
                           "h100-trtllm", "h100-vllm", "h200-sglang", "h200-trtllm", "h200-vllm"})
    CHECK(std::find(names.begin(), names.end(), want) != names.end());
  for (const std::string& n : names) {
    INFO(n);
    const auto p = load_op_profile(n);
    CHECK(n == p->hardware + "-" + p->engine_name);
    REQUIRE(p->has_engine);
    CHECK(p->engine.engine == p->engine_name);
  }
}

TEST_CASE("profile_for_engine: --engine picks <hardware>-<engine>, else the nearest GPU's transferred",
          "[op_profile]") {
  const Hardware b200 = load_hardware("b200"), h100 = load_hardware("h100"), h200 = load_hardware("h200");
  CHECK(profile_for_engine("", "", b200).empty());
  CHECK(profile_for_engine("./mine", "", b200) == "./mine");
  CHECK(profile_for_engine("", "trtllm", b200) == "b200-trtllm");
  CHECK(profile_for_engine("", "vllm", h100) == "h100-vllm");
  CHECK_THROWS_WITH(profile_for_engine("", "tgi", h200), Catch::Contains("sglang | vllm | trtllm"));
  CHECK_THROWS_WITH(profile_for_engine("h200-sglang", "sglang", h200), Catch::Contains("both"));
  // Issue 43: B300 and GB200 have their own profiles of every engine, from aiconfigurator's tables of those
  // GPUs.
  CHECK(profile_for_engine("", "sglang", load_hardware("gb200")) == "gb200-sglang");
  CHECK(profile_for_engine("", "sglang", load_hardware("b300")) == "b300-sglang");
  CHECK(profile_for_engine("", "vllm", load_hardware("b300")) == "b300-vllm");
  CHECK(profile_for_engine("", "vllm", load_hardware("gb200")) == "gb200-vllm");
  CHECK(profile_for_engine("", "trtllm", load_hardware("b300")) == "b300-trtllm");
  CHECK(profile_for_engine("", "trtllm", load_hardware("gb200")) == "gb200-trtllm");
}

TEST_CASE("Issue 43: TensorRT-LLM's CPU terms are fitted once and carried to every trtllm profile",
          "[op_profile][trtllm]") {
  // The engine's scheduler loop and serving path, not the GPU (docs/hardware-and-engines.md "TensorRT-LLM"):
  // one value per engine, fitted jointly on the B200 and H100 TensorRT-LLM rows (`calibrate --joint`,
  // docs/validation.md, "TensorRT-LLM's CPU terms refitted"), the same in each GPU's profile.
  const auto h200 = load_op_profile("h200-trtllm");
  for (const char* other : {"b200-trtllm", "h100-trtllm", "b300-trtllm", "gb200-trtllm"}) {
    const auto p = load_op_profile(other);
    for (TimingParam cpu : {TimingParam::kStepCpuOverheadS, TimingParam::kStepCpuPerRequestS,
                            TimingParam::kFirstTokenLatencyS, TimingParam::kRequestLatencyS,
                            TimingParam::kOverlapSchedule, TimingParam::kEagerHostPerMlaLayerS}) {
      INFO(other << " " << timing_param_name(cpu));
      CHECK(p->param(cpu) == h200->param(cpu));
    }
    CHECK(p->engine.moe_comm == MoeComm::kGatherOrAllReduce);
  }
  CHECK(h200->param(TimingParam::kFirstTokenLatencyS) > 0);     // fitted, no longer the 0 of "not fitted"
  CHECK(h200->param(TimingParam::kStepCpuOverheadS) > 0);       // fitted on the H100 rows' short steps
  CHECK(h200->param(TimingParam::kOverlapSchedule) == 1);       // disable_overlap_scheduler default False
  CHECK(h200->param(TimingParam::kEagerHostPerMlaLayerS) > 0);  // fitted on the B200 DeepSeek-R1 rows
  // an engine term of TensorRT-LLM's eager context path: no other engine's profile names it
  for (const char* other : {"h200-sglang", "b200-sglang", "h200-vllm", "b200-vllm"})
    CHECK_FALSE(load_op_profile(other)->given(TimingParam::kEagerHostPerMlaLayerS));
}

TEST_CASE("Issue 43: the B300 and GB200 SGLang profiles carry b200-sglang's step terms unchanged",
          "[op_profile]") {
  // No row of either GPU is fitted on (calibrate/unseen/SOURCE.md): CPU terms and the per-layer floor as
  // B200's.
  const auto b200 = load_op_profile("b200-sglang");
  for (const char* other : {"b300-sglang", "gb200-sglang"}) {
    const auto p = load_op_profile(other);
    for (TimingParam t :
         {TimingParam::kStepCpuOverheadS, TimingParam::kStepCpuPerRequestS, TimingParam::kFirstTokenLatencyS,
          TimingParam::kRequestLatencyS, TimingParam::kOverlapSchedule, TimingParam::kStepFloorPerLayerS}) {
      INFO(other << " " << timing_param_name(t));
      CHECK(p->param(t) == b200->param(t));
    }
  }
}

TEST_CASE("Issue 43: vLLM's CPU terms are fitted once and carried to every vllm profile",
          "[op_profile][vllm]") {
  // The engine's scheduler loop and serving path, not the GPU: one value per engine, fitted on the B200 vLLM
  // rows (calibrate/points/e2e-b200-vllm.csv, docs/validation.md "vLLM's CPU terms"), the same in each GPU's
  // profile. A profile whose value drifts from the others fails here.
  const auto b200 = load_op_profile("b200-vllm");
  for (const char* other : {"h200-vllm", "h100-vllm", "b300-vllm", "gb200-vllm"}) {
    const auto p = load_op_profile(other);
    for (TimingParam cpu : {TimingParam::kStepCpuOverheadS, TimingParam::kStepCpuPerRequestS,
                            TimingParam::kFirstTokenLatencyS, TimingParam::kRequestLatencyS,
                            TimingParam::kOverlapSchedule, TimingParam::kEagerHostPerMlaLayerS}) {
      INFO(other << " " << timing_param_name(cpu));
      CHECK(p->param(cpu) == b200->param(cpu));
    }
  }
  CHECK(b200->param(TimingParam::kFirstTokenLatencyS) > 0);  // fitted, no longer the 0 of "not fitted"
}

}  // namespace tokenline
