// load_op_profile / apply_profile_sets: the loader's errors name file and line; timing overrides.
#include "engine/model/op_profile.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/input_error.h"
#include "tests/engine/model/profile_load_error.h"

namespace tokenline {
namespace {

namespace fs = std::filesystem;

// A scratch profile directory with one gemm table of the given text (or none).
fs::path scratch_profile(const std::string& name, const std::string& gemm_csv, bool write_gemm = true,
                         const std::string& engine = R"({"name": "vllm"})") {
  const fs::path dir = fs::temp_directory_path() / ("tl_op_profile_" + name);
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
  const fs::path dir = fs::temp_directory_path() / ("tl_op_profile_" + name);
  fs::create_directories(dir);
  std::ofstream(dir / "profile.json") << json;
  if (!gemm_csv.empty()) std::ofstream(dir / "gemm.csv") << gemm_csv;
  return dir;
}

}  // namespace

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
          kind == ProfileTableKind::kMlaModuleDecode || kind == ProfileTableKind::kDsa) {
        CHECK(own.file == other.file);  // tables_from h200-sglang
        CHECK(own.numbers == other.numbers);
      } else {
        CHECK(own.file != other.file);  // vLLM 0.14.0's measurements
        CHECK(own.numbers != other.numbers);
      }
    }
    CHECK(vllm->engine.admission == Admission::kIncremental);
    CHECK(vllm->param(TimingParam::kOverlapSchedule) == 0);
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
  for (const char* want : {"b200-sglang", "b200-trtllm", "b200-vllm", "h100-sglang", "h100-trtllm",
                           "h100-vllm", "h200-sglang", "h200-trtllm", "h200-vllm"})
    CHECK(std::find(names.begin(), names.end(), want) != names.end());
  for (const std::string& n : names) {
    INFO(n);
    const auto p = load_op_profile(n);
    CHECK(n == p->hardware + "-" + p->engine_name);
    REQUIRE(p->has_engine);
    CHECK(p->engine.engine == p->engine_name);
  }
}

TEST_CASE("--engine picks <hardware>-<engine>, and says which exist where none does", "[op_profile]") {
  CHECK(profile_for_engine("", "", "b200").empty());
  CHECK(profile_for_engine("./mine", "", "b200") == "./mine");
  CHECK(profile_for_engine("", "trtllm", "b200") == "b200-trtllm");
  CHECK(profile_for_engine("", "vllm", "h100") == "h100-vllm");
  CHECK_THROWS_WITH(profile_for_engine("", "tgi", "h200"), Catch::Contains("sglang | vllm | trtllm"));
  CHECK_THROWS_WITH(profile_for_engine("h200-sglang", "sglang", "h200"), Catch::Contains("both"));
  CHECK_THROWS_WITH(profile_for_engine("", "sglang", "gb200"),
                    Catch::Contains("--engine sglang") && Catch::Contains("no profile gb200-sglang"));
}

}  // namespace tokenline
