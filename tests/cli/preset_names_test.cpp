// "Did you mean": a mistyped preset, profile or engine is exit 2 with one message naming the flag, the known
// names and the closest one (cli/preset_names.h).
#include "cli/preset_names.h"

#include <algorithm>
#include <catch2/catch.hpp>

#include "common/input_error.h"
#include "tests/cli/tokenline_process.h"

namespace tokenline::cli {
namespace {

using testing::run_tokenline;
using testing::TestDir;

TEST_CASE("the closest name is offered within a third of its length, never a far one", "[preset_names]") {
  const std::vector<std::string> names = {"h100", "h200", "b200", "gb200"};
  CHECK(closest_name("h20", names) == "h200");
  CHECK(closest_name("gb20O", names) == "gb200");
  CHECK(closest_name("tpu-v5e", names).empty());
  CHECK(edit_distance("sglng", "sglang") == 1);
}

TEST_CASE("an unknown preset, profile or engine names the flag and the closest known one", "[preset_names]") {
  CHECK_THROWS_WITH(check_preset_flags({.model = "llama-3.1-70"}),
                    Catch::Contains("--model") && Catch::Contains("did you mean llama-3.1-70b?"));
  CHECK_THROWS_WITH(check_preset_flags({.hardware = "h20"}),
                    Catch::Contains("--hardware") && Catch::Contains("did you mean h200?"));
  CHECK_THROWS_WITH(check_preset_flags({.cluster = "h200x9"}),
                    Catch::Contains("--cluster") && Catch::Contains("did you mean h200x8?"));
  CHECK_THROWS_WITH(check_preset_flags({.profile = "h200-sglan"}),
                    Catch::Contains("--profile") && Catch::Contains("did you mean h200-sglang?"));
  CHECK_THROWS_WITH(check_preset_flags({.engine = "tensorrt"}),
                    Catch::Contains("--engine") && !Catch::Contains("did you mean"));
  CHECK_THROWS_WITH(check_preset_flags({.engine = "vlm"}), Catch::Contains("did you mean vllm?"));
  CHECK_NOTHROW(check_preset_flags(
      {.model = "glm-5.3", .hardware = "b200", .profile = "b200-trtllm", .engine = "trtllm"}));
  CHECK_NOTHROW(check_preset_flags({.hardware = "my/own.json"}));  // a path: the loader's to judge
}

TEST_CASE("sim, ledger and plan refuse a mistyped preset with exit 2 and one line", "[preset_names]") {
  TestDir dir("preset_names_cli");
  for (const std::string& args :
       {std::string("sim --model llama-3.1-7b --out '") + dir.file("o") + "'",
        std::string("sim --engine sglng --out '") + dir.file("o") + "'",
        std::string("ledger decode --hardware b20"),
        std::string("plan --model glm-5.3 --hardware h20 --gpus 8 --slo ttft=2s,tpot=50ms --out '") +
            dir.file("p") + "'"}) {
    CAPTURE(args);
    const auto r = run_tokenline(args, dir);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.stderr_text, Catch::Contains("did you mean"));
    CHECK(std::count(r.stderr_text.begin(), r.stderr_text.end(), '\n') == 1);
  }
  CHECK_FALSE(std::filesystem::exists(dir.file("o")));
}

}  // namespace
}  // namespace tokenline::cli
