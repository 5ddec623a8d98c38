#include "run/model_files.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "common/input_error.h"
#include "tests/traces/test_dir.h"

using namespace tokenline;

namespace {
const std::string kNvfp4Dir = std::string(TOKENLINE_MODEL_TEST_DATA) + "/hf/deepseek-v3.1-nvfp4";
}  // namespace

TEST_CASE("a checkpoint read from disk and the same text handed over parse to the same model",
          "[model_files]") {
  const CheckpointFiles files = read_checkpoint_files(kNvfp4Dir + "/config.json");
  CHECK(files.config_path == kNvfp4Dir + "/config.json");
  CHECK(files.quant_path == kNvfp4Dir + "/hf_quant_config.json");
  CHECK(files.quant == testing::read_all(files.quant_path));
  const ModelConfig from_disk = load_hf_config(kNvfp4Dir + "/config.json");
  // engine/model reads no file: the texts alone, under names that exist nowhere, give the same model.
  const ModelConfig from_text = parse_hf_model(CheckpointFiles{.config_path = "nowhere/config.json",
                                                               .config = files.config,
                                                               .quant_path = "nowhere/hf_quant_config.json",
                                                               .quant = files.quant});
  CHECK(from_disk.weights.source == "hf_quant_config.json");
  CHECK(from_text.weights.source == "hf_quant_config.json");
  CHECK(from_text.weights.quantized == from_disk.weights.quantized);
  for (size_t g = 0; g < kWeightGroupCount; ++g)
    CHECK(from_text.weights.share(static_cast<WeightGroup>(g)) ==
          from_disk.weights.share(static_cast<WeightGroup>(g)));
  // Without hf_quant_config.json's text the same config is its torch_dtype, BF16.
  const ModelConfig unquantized = parse_hf_model(
      CheckpointFiles{.config_path = "config.json", .config = files.config, .quant_path = {}, .quant = {}});
  CHECK(unquantized.weights.source == "torch_dtype");
}

TEST_CASE("a config with no hf_quant_config.json beside it reads none, and a missing one is named",
          "[model_files]") {
  const testing::TestDir dir("model-files");
  std::filesystem::copy_file(kNvfp4Dir + "/config.json", dir.file("config.json"));
  const CheckpointFiles alone = read_checkpoint_files(dir.file("config.json"));
  CHECK(alone.quant_path.empty());
  CHECK(alone.quant.empty());
  try {
    read_checkpoint_files(dir.file("absent.json"));
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK_THAT(e.what(), Catch::Contains("absent.json") && Catch::Contains("a readable config.json"));
  }
  // A directory names its config.json; a name that is neither preset nor file names --model and the presets.
  CHECK(load_model(dir.path().string()).weights.source == "torch_dtype");
  try {
    load_model("no-such-model");
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK_THAT(e.what(), Catch::Contains("--model") && Catch::Contains("llama-3.1-8b"));
  }
}
