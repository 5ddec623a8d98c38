// libFuzzer harness: an op profile directory (cost/op_profile.cpp: profile.json, its CSV tables,
// its engine block) loaded from disk, then priced. The input is the directory's files separated by 0x01
// bytes: the first part is profile.json, the next ones are gemm.csv, moe.csv, ... in kTableFiles order
// (the seeds' profile.json names them so). Bad input must be an InputError; a profile that loads must
// price every step finite and >= 0 (no 1e308 latency reaching a step as inf, no NaN from a zero).
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "cost/op_profile.h"
#include "cost/step_cost.h"
#include "engine/model/model_config.h"
#include "engine/model/parallel.h"
#include "fuzz/fuzz_input.h"
#include "topologies/hardware_loader.h"

namespace {

constexpr const char* kTableFiles[] = {"gemm.csv",        "moe.csv",         "mla_bmm.csv",
                                       "mla_decode.csv",  "mla_prefill.csv", "gqa_decode.csv",
                                       "gqa_prefill.csv", "comm.csv",        "mla_module_decode.csv",
                                       "dsa.csv",         "ops.csv"};
constexpr char kSeparator = '\x01';

void require_priceable(double seconds, const char* what) {
  if (std::isfinite(seconds) && seconds >= 0) return;
  std::fprintf(stderr, "profile_dir_fuzz: a loaded profile priced %s at %g s\n", what, seconds);
  std::abort();
}

// Prices a few decode and prefill steps of a model under the profile (make_cost_model may refuse the pair).
void price(const std::shared_ptr<const tokenline::OpProfile>& profile, const char* model, const char* layout,
           tokenline::KvLayout kv) {
  using namespace tokenline;
  CostOptions o;
  o.profile = profile;
  fuzz::expect_input_errors_only([&] {
    const CostModel cm =
        make_cost_model(model_preset(model), parse_parallel(layout, "fuzz"), kv, load_hardware("h200"), o);
    require_priceable(decode_step(cm, 1, 1023).total_s, "a decode step of 1");
    require_priceable(decode_step(cm, 64, 4095).total_s, "a decode step of 64");
    require_priceable(prefill_step(cm, 512, 0, true).total_s, "a 512-token prefill");
    require_priceable(prefill_step(cm, 8192, 4096, false).total_s, "an 8192-token prefill chunk");
  });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tokenline;
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("tokenline-fuzz-profile-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string text = fuzz::text_of(data, size);
  size_t begin = 0;
  for (size_t part = 0; begin <= text.size() && part <= std::size(kTableFiles); ++part) {
    const size_t end = std::min(text.find(kSeparator, begin), text.size());
    const char* name = part == 0 ? "profile.json" : kTableFiles[part - 1];
    std::ofstream(dir / name, std::ios::binary) << std::string_view(text).substr(begin, end - begin);
    begin = end + 1;
  }
  std::shared_ptr<OpProfile> profile;
  fuzz::expect_input_errors_only([&] { profile = load_op_profile(dir.string()); });
  if (profile != nullptr) {
    price(profile, "deepseek-v3", "tp8", KvLayout::kFp8E4m3);
    price(profile, "glm-5.3", "tp8", KvLayout::kFp8DsMla);
    price(profile, "llama-3.1-8b", "tp2", KvLayout::kBf16);
  }
  fs::remove_all(dir);
  return 0;
}
