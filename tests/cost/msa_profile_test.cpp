// MiniMax-M3 priced from a profile's msa table (docs/layers.md "MiniMax-M3"): the shipped profiles hold the
// whole block-sparse attention block of one layer at M3's shards of TP 1-8 (SGLang and vLLM; TensorRT-LLM's
// rows are not read); a step's block is the rows times the sparse layers plus the dense layers' parts, the
// rows of the run's KV dtype (else the other's), and attention weights of another format than BF16 keep the
// parts.
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cost/cost_model.h"
#include "cost/op_profile.h"
#include "cost/step_cost.h"
#include "engine/model/model_config.h"
#include "run/model_files.h"
#include "topologies/hardware_loader.h"

namespace tokenline {
namespace {

ModelConfig minimax_m3() {
  return load_hf_config(std::string(TOKENLINE_MODEL_TEST_DATA) + "/hf/minimax-m3/config.json");
}

// The same shapes with every layer block-sparse (no dense layers beside the rows).
ModelConfig all_sparse() {
  ModelConfig m = minimax_m3();
  m.mixers.assign(size_t(m.layers), MixerKind::kBlockSparse);
  return m;
}

double row_ms(const ProfileTable& t, std::string_view module, std::string_view phase, double heads,
              double prefix, double batch, double tokens) {
  for (size_t i = 0; i < t.rows(); ++i)
    if (t.text_at(i, 0) == module && t.text_at(i, 1) == phase && t.at(i, 0) == 6144 && t.at(i, 1) == heads &&
        t.at(i, 2) == prefix && t.at(i, 3) == batch && t.at(i, 4) == tokens)
      return t.at(i, 5);
  return 0;
}

CostModel under_profile(const std::shared_ptr<OpProfile>& profile, const ModelConfig& m, KvLayout kv,
                        const char* layout = "tp8") {
  CostOptions o;
  o.profile = profile;
  return make_cost_model(m, parse_parallel(layout, "test"), kv, load_hardware(profile->hardware), o);
}

CostModel under(const std::string& profile, const ModelConfig& m, KvLayout kv, const char* layout = "tp8") {
  return under_profile(load_op_profile(profile), m, kv, layout);
}

constexpr Op kBlockOps[] = {Op::kAProj,      Op::kNormRopeKvWrite, Op::kIndexerScore,
                            Op::kTopkSelect, Op::kSparseMla,       Op::kOProj};

double block_s(const StepCost& step) {
  double s = 0;
  for (Op op : kBlockOps) s += step[op].time_s;
  return s;
}

bool block_measured(const StepCost& step) {
  for (Op op : kBlockOps)
    if (step[op].source != TermSource::kProfile) return false;
  return true;
}

SeqWork prompt(int64_t tokens, int64_t prefix) {
  return SeqWork{.new_tokens = tokens, .context_tokens = prefix, .prefill = true, .last_chunk = true};
}

}  // namespace

TEST_CASE("every shipped profile holds MiniMax-M3's block rows at its TP 1-8 shards", "[op_profile][msa]") {
  for (const char* hw : {"b200", "b300", "gb200", "gb300", "h100", "h200"}) {
    for (const char* engine : {"sglang", "vllm"}) {
      const std::string name = std::string(hw) + "-" + engine;
      INFO(name);
      const std::shared_ptr<OpProfile> profile = load_op_profile(name);
      const ProfileTable& t = profile->table(ProfileTableKind::kMsa);
      for (double heads : {8, 16, 32, 64}) {
        int decode = 0, prefill = 0;
        for (size_t i = 0; i < t.rows(); ++i) {
          if (t.text_at(i, 0) != "msa_bf16_bf16" || t.at(i, 0) != 6144 || t.at(i, 1) != heads) continue;
          decode += t.text_at(i, 1) == "decode" ? 1 : 0;
          prefill += t.text_at(i, 1) == "prefill" ? 1 : 0;
        }
        CHECK(decode >= 100);
        CHECK(prefill >= 100);
      }
    }
  }
}

TEST_CASE("MiniMax-M3's block is the msa rows times the sparse layers at a measured point",
          "[op_profile][msa]") {
  const CostModel cm = under("b200-vllm", all_sparse(), KvLayout::kFp8E4m3);
  const ProfileTable& t = cm.options.profile->table(ProfileTableKind::kMsa);
  // 4 sequences decoding at 8,191 cached keys (8,192 with the new token), 8 heads a GPU at TP 8.
  const StepCost decode = decode_step(cm, 4, 8191);
  const double decode_ms = row_ms(t, "msa_bf16_fp8", "decode", 8, 0, 4, 8192);
  REQUIRE(decode_ms > 0);
  CHECK(block_measured(decode));
  CHECK(block_s(decode) == Approx(60 * decode_ms * 1e-3));
  // One 8,192-token prompt with nothing cached, and one of 1,024 after a 128-token prefix (a prefill runs
  // eagerly: vLLM's launch floor under its small ops adds up to 1%).
  const StepCost p0 = step_cost(cm, std::vector<SeqWork>{prompt(8192, 0)});
  CHECK(block_s(p0) == Approx(60 * row_ms(t, "msa_bf16_fp8", "prefill", 8, 0, 1, 8192) * 1e-3).epsilon(0.01));
  const StepCost p1 = step_cost(cm, std::vector<SeqWork>{prompt(1024, 128)});
  CHECK(block_s(p1) ==
        Approx(60 * row_ms(t, "msa_bf16_fp8", "prefill", 8, 128, 1, 1024) * 1e-3).epsilon(0.01));
  // BF16 KV reads the BF16-KV rows.
  const CostModel bf16 = under("b200-vllm", all_sparse(), KvLayout::kBf16);
  CHECK(block_s(decode_step(bf16, 4, 8191)) ==
        Approx(60 * row_ms(t, "msa_bf16_bf16", "decode", 8, 0, 4, 8192) * 1e-3));
  // A profile holding one KV dtype's rows only prices the other's from them.
  const std::shared_ptr<OpProfile> one_dtype = load_op_profile("b200-vllm");
  ProfileTable& table = one_dtype->tables[size_t(ProfileTableKind::kMsa)];
  for (size_t i = 0; i < table.rows(); ++i)
    if (table.text[i * size_t(table.text_columns)] == "msa_bf16_fp8")
      table.text[i * size_t(table.text_columns)] = "x";
  const CostModel fp8_kv = under_profile(one_dtype, all_sparse(), KvLayout::kFp8E4m3);
  CHECK(block_s(decode_step(fp8_kv, 4, 8191)) ==
        Approx(60 * row_ms(t, "msa_bf16_bf16", "decode", 8, 0, 4, 8192) * 1e-3));
}

TEST_CASE("TensorRT-LLM's profiles hold no MSA rows: MiniMax-M3's block is priced from its parts",
          "[op_profile][msa]") {
  // aiconfigurator's TensorRT-LLM 1.3.0rc23 MSA rows are not read (scripts/build-profile MSA_RELEASE says
  // why).
  const CostModel trt = under("b200-trtllm", minimax_m3(), KvLayout::kFp8E4m3);
  CHECK(trt.options.profile->table(ProfileTableKind::kMsa).empty());
  const StepCost decode = decode_step(trt, 4, 8191);
  CHECK(decode[Op::kIndexerScore].source == TermSource::kRoofline);
  CHECK(decode[Op::kSparseMla].source == TermSource::kProfile);  // the GQA grids at min(ctx, 2,048) keys
}

TEST_CASE("MiniMax-M3's dense layers add their parts to the sparse layers' rows", "[op_profile][msa]") {
  const CostModel cm = under("b200-sglang", minimax_m3(), KvLayout::kFp8E4m3, "tp4");
  const ProfileTable& t = cm.options.profile->table(ProfileTableKind::kMsa);
  const StepCost decode = decode_step(cm, 16, 32768);  // SGLang's rows: KV lengths of 2^k + 1
  const double sparse_s = 57 * row_ms(t, "msa_bf16_fp8", "decode", 16, 0, 16, 32769) * 1e-3;
  REQUIRE(sparse_s > 0);
  CHECK(block_measured(decode));
  // The three dense layers: more than nothing, less than the sparse layers' block over 19 times as many.
  CHECK(block_s(decode) > sparse_s);
  CHECK(block_s(decode) < sparse_s * (1 + 3.0 / 57 * 4));
  // SGLang's rows follow the cached prefix to 1M tokens: a chunk after 131,072 cached tokens costs more than
  // the same chunk after none.
  const double at0 = block_s(step_cost(cm, std::vector<SeqWork>{prompt(4096, 0)}));
  const double at128k = block_s(step_cost(cm, std::vector<SeqWork>{prompt(4096, 131072)}));
  CHECK(at128k > at0);
}

TEST_CASE("MiniMax-M3's FP8 and MXFP8 projections read the block-FP8 rows where measured, else the parts",
          "[op_profile][msa]") {
  for (const char* format : {"fp8-block128", "mxfp8"}) {
    INFO(format);
    ModelConfig m = all_sparse();
    override_weight_format(m, format);
    const CostModel vllm = under("b200-vllm", m, KvLayout::kFp8E4m3);
    const ProfileTable& t = vllm.options.profile->table(ProfileTableKind::kMsa);
    const double row = row_ms(t, "msa_fp8_fp8", "decode", 8, 0, 4, 8192);
    REQUIRE(row > 0);
    CHECK(row != row_ms(t, "msa_bf16_fp8", "decode", 8, 0, 4, 8192));  // its own rows, not the BF16 GEMMs'
    CHECK(block_s(decode_step(vllm, 4, 8191)) == Approx(60 * row * 1e-3));
    // SGLang timed BF16 GEMMs only: the parts.
    const StepCost sglang = decode_step(under("b200-sglang", m, KvLayout::kFp8E4m3), 4, 8191);
    CHECK(sglang[Op::kIndexerScore].source == TermSource::kRoofline);
    CHECK(sglang[Op::kSparseMla].source == TermSource::kProfile);  // the GQA grids at min(ctx, 2,048) keys
  }
  // NVFP4 projections: no rows anywhere.
  ModelConfig nvfp4 = all_sparse();
  override_weight_format(nvfp4, "nvfp4");
  CHECK(decode_step(under("b200-vllm", nvfp4, KvLayout::kFp8E4m3), 4, 8191)[Op::kIndexerScore].source ==
        TermSource::kRoofline);
}

}  // namespace tokenline
