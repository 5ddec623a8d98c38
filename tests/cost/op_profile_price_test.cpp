// Pricing a step from the h200-sglang profile: source attribution, CUDA-graph buckets, and a DeepSeek-V3
// tp8 decode step against the sum of the table rows it should read.
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "common/input_error.h"
#include "cost/op_profile.h"
#include "cost/op_profile_pricing.h"
#include "cost/step_cost.h"
#include "engine/model/model_config.h"
#include "run/model_files.h"
#include "tests/cost/deepseek_decode_step.h"
#include "topologies/hardware_loader.h"

namespace tokenline {
namespace {

CostModel deepseek_tp8(bool with_profile) {
  CostOptions o;
  if (with_profile) o.profile = load_op_profile("h200-sglang");
  return make_cost_model(model_preset("deepseek-v3"), parse_parallel("tp8", "test"), KvLayout::kFp8E4m3,
                         load_hardware("h200"), o);
}

// The latency (s) of the one row whose text column 0 is `text` (and column 1 `text1` when given) and whose
// numeric columns are `nums`.
double row_s(const ProfileTable& t, std::string_view text, std::initializer_list<double> nums,
             std::string_view text1 = {}) {
  for (size_t r = 0; r < t.rows(); ++r) {
    if (t.text_at(r, 0) != text || (!text1.empty() && t.text_at(r, 1) != text1)) continue;
    int c = 0;
    bool match = true;
    for (double v : nums) match = match && t.at(r, c++) == v;
    if (match) return t.at(r, c) * 1e-3;
  }
  FAIL("no row " << text << " in " << t.file);
  return 0;
}

// Llama-3.1-8B tp1 with FP8 weights (per-tensor scales when `block` is 0, else block-scaled), priced by a
// scratch profile whose only table is `gemm_csv`.
CostModel llama_fp8(const std::string& dir_name, const std::string& gemm_csv, int64_t block) {
  namespace fs = std::filesystem;
  const fs::path dir =
      fs::temp_directory_path() / ("tl_op_profile_price_" + dir_name + "-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "profile.json")
      << R"({"name": "t", "hardware": "h200", "engine_name": "vllm", "tables": {"gemm": "gemm.csv"}})";
  std::ofstream(dir / "gemm.csv") << gemm_csv;
  ModelConfig m = model_preset("llama-3.1-8b");
  m.weight_dtype = Dtype::kFp8;
  m.weight_block = block;
  CostOptions o;
  o.profile = load_op_profile(dir.string());
  return make_cost_model(m, parse_parallel("tp1", "test"), KvLayout::kBf16, load_hardware("h200"), o);
}

// The ops the fused MLA decode module prices together (a_proj .. o_proj), and their summed time in a step.
constexpr Op kMlaBlockOps[] = {Op::kAProj, Op::kNormRopeKvWrite, Op::kQBProj, Op::kSparseMla, Op::kOProj};
double mla_block_s(const StepCost& sc) {
  double s = 0;
  for (Op op : kMlaBlockOps) s += sc[op].time_s;
  return s;
}

}  // namespace

// Llama-3.1 FP8 checkpoints scale per tensor; vLLM runs them with another kernel than block-FP8 weights.
// The fused QKV projection of Llama-3.1-8B at tp1 is 6,144 x 4,096.
TEST_CASE("per-tensor FP8 weights take a table's fp8 rows where it has them, else its fp8_block rows",
          "[op_profile]") {
  const std::string both =
      "dtype,m,n,k,latency_ms\nfp8,1,6144,4096,0.02\nfp8,16,6144,4096,0.02\n"
      "fp8_block,1,6144,4096,0.03\nfp8_block,16,6144,4096,0.03\n";
  const std::string block_only =
      "dtype,m,n,k,latency_ms\nfp8_block,1,6144,4096,0.03\nfp8_block,16,6144,4096,0.03\n";
  const double per_tensor = decode_step(llama_fp8("both_pt", both, 0), 1, 1023)[Op::kAProj].time_s;
  const double block = decode_step(llama_fp8("both_block", both, 128), 1, 1023)[Op::kAProj].time_s;
  const double fallback = decode_step(llama_fp8("block_only", block_only, 0), 1, 1023)[Op::kAProj].time_s;
  CHECK(decode_step(llama_fp8("both_pt", both, 0), 1, 1023)[Op::kAProj].source == TermSource::kProfile);
  CHECK(per_tensor / block == Approx(0.02 / 0.03));
  CHECK(block == Approx(32 * 0.03e-3));  // one measured row per layer
  CHECK(fallback == Approx(block));
}

TEST_CASE("profile terms name their source and coverage is the profiled share", "[op_profile]") {
  const CostModel cm = deepseek_tp8(true);
  const StepCost sc = decode_step(cm, 16, 1023);
  CHECK(sc[Op::kExpertGemm].source == TermSource::kProfile);
  CHECK(sc[Op::kSparseMla].source == TermSource::kProfile);
  CHECK(sc[Op::kAttnAllreduce].source == TermSource::kProfile);
  CHECK(sc[Op::kRmsnorm].source == TermSource::kRoofline);
  CHECK(sc[Op::kSample].source == TermSource::kRoofline);
  double sum = 0, profiled = 0;
  for (const Term& t : sc.terms) {
    sum += t.time_s;
    profiled += t.source == TermSource::kProfile ? t.time_s : 0;
  }
  CHECK(sc.total_s == Approx(sum + sc.overhead_s));
  CHECK(sc.coverage() == Approx(profiled / sc.total_s));
  CHECK(sc.coverage() > 0.8);
  const StepCost roof = decode_step(deepseek_tp8(false), 16, 1023);
  for (const Term& t : roof.terms) CHECK(t.source == TermSource::kRoofline);
  CHECK(roof.coverage() == 0);
  CostOptions ideal;
  ideal.ideal = true;
  ideal.profile = load_op_profile("h200-sglang");
  CHECK_THROWS_AS(make_cost_model(model_preset("deepseek-v3"), parse_parallel("tp8", "t"), KvLayout::kFp8E4m3,
                                  load_hardware("h200"), ideal),
                  InputError);
  CostOptions other_gpu;
  other_gpu.profile = ideal.profile;
  CHECK_THROWS_AS(make_cost_model(model_preset("deepseek-v3"), parse_parallel("tp8", "t"), KvLayout::kFp8E4m3,
                                  load_hardware("b200"), other_gpu),
                  InputError);
}

TEST_CASE("the fused MLA module is shared among its ops by their roofline times", "[op_profile]") {
  const StepCost roof = decode_step(deepseek_tp8(false), 16, 1023);
  const StepCost prof = decode_step(deepseek_tp8(true), 16, 1023);
  const double roof_sum = mla_block_s(roof), prof_sum = mla_block_s(prof);
  const auto p = load_op_profile("h200-sglang");
  CHECK(prof_sum ==
        Approx(61 * row_s(p->table(ProfileTableKind::kMlaModuleDecode), "fp8", {7168, 1536, 16, 16, 1024})));
  for (Op op : kMlaBlockOps) CHECK(prof[op].time_s / prof_sum == Approx(roof[op].time_s / roof_sum));
}

// BF16 KV (SGLang's default for DeepSeek-V3): the module rows are FP8-KV, so the block is the module at its
// shortest context plus the BF16 attention rows' rise from there to the context (1024: measured; 2: the
// attention rows' first point, the floor below it).
TEST_CASE("the MLA module of another KV dtype adds the attention rows' rise with context", "[op_profile]") {
  CostOptions o;
  o.profile = load_op_profile("h200-sglang");
  const CostModel cm = make_cost_model(model_preset("deepseek-v3"), parse_parallel("tp8", "test"),
                                       KvLayout::kBf16, load_hardware("h200"), o);
  const StepCost prof = decode_step(cm, 16, 1023);
  double sum = 0;
  for (Op op : {Op::kAProj, Op::kNormRopeKvWrite, Op::kQBProj, Op::kSparseMla, Op::kOProj}) {
    CHECK(prof[op].source == TermSource::kProfile);
    sum += prof[op].time_s;
  }
  const auto p = load_op_profile("h200-sglang");
  const ProfileTable& attn = p->table(ProfileTableKind::kMlaDecode);
  const double module_s = row_s(p->table(ProfileTableKind::kMlaModuleDecode), "fp8", {7168, 1536, 16, 16, 1});
  const double rise_s = row_s(attn, "bfloat16", {16, 16, 1024}) - row_s(attn, "bfloat16", {16, 16, 2});
  CHECK(rise_s > 0);
  CHECK(sum == Approx(61 * (module_s + rise_s)));
}

// MTP's verify pass runs the decode kernel with a sequence's draft tokens in one query tile: each sequence's
// cached KV is read once (SGLang trtllm_mla_backend.py, is_target_verify). The module's rows were measured
// with one token per sequence, so 16 sequences verifying 3 tokens each (48 tokens) take the block of 48
// tokens at the shortest context plus the 16 sequences' rise with context, not 48 sequences' rise.
TEST_CASE("an MTP verify step's MLA module rises with context by its sequences, not its tokens",
          "[op_profile]") {
  const CostModel cm = deepseek_tp8(true);
  auto verify_s = [&](int64_t context) {  // 16 sequences whose 3 new tokens see `context` keys
    const std::vector<SeqWork> seqs(16, SeqWork{.new_tokens = 3, .context_tokens = context - 3});
    return mla_block_s(step_cost(cm, seqs));
  };
  const auto profile = load_op_profile("h200-sglang");  // holds the table row_s reads
  const ProfileTable& t = profile->table(ProfileTableKind::kMlaModuleDecode);
  auto row = [&](double batch, double context) { return row_s(t, "fp8", {7168, 1536, 16, batch, context}); };
  const double tokens48_s = mla_block_s(decode_step(cm, 48, 0));  // 48 tokens at the shortest context
  CHECK(verify_s(1024) == Approx(tokens48_s + 61 * (row(16, 1024) - row(16, 1))));
  CHECK(verify_s(4096) - verify_s(1024) == Approx(61 * (row(16, 4096) - row(16, 1024))));
  // 48 plain decodes read 48 sequences' KV (the old pricing of this verify step): more at a long context.
  CHECK(mla_block_s(decode_step(cm, 48, 4095)) > 1.2 * verify_s(4096));
}

// SGLang's NSA backend runs an MTP verify as bs x draft tokens queries of one token each, every one with its
// own top-k keys (nsa_backend.py, is_target_verify): 16 GLM-5.3 sequences verifying 3 tokens each pay the DSA
// ops of 48 decodes at the same keys, not of 16.
TEST_CASE("an MTP verify step's DSA ops are priced per verify token", "[op_profile]") {
  CostOptions o;
  o.profile = load_op_profile("h200-sglang");
  const CostModel cm = make_cost_model(model_preset("glm-5.3"), parse_parallel("dp8-ep8", "test"),
                                       KvLayout::kFp8DsMla, load_hardware("h200"), o);
  const std::vector<SeqWork> verify(16, SeqWork{.new_tokens = 3, .context_tokens = 1021});
  std::vector<std::span<const SeqWork>> ranks(8, verify);
  const StepCost v = step_cost(cm, ranks);
  const StepCost plain48 = decode_step(cm, 48, 1023);  // 1,024 keys each, as each verify's mean
  const StepCost plain16 = decode_step(cm, 16, 1023);
  for (Op op : {Op::kSparseMla, Op::kIndexerScore}) {
    INFO(op_name(op));
    REQUIRE(v[op].source == TermSource::kProfile);
    CHECK(v[op].time_s == Approx(plain48[op].time_s));
    CHECK(v[op].time_s > plain16[op].time_s);
  }
}

TEST_CASE("CUDA-graph buckets follow SGLang's capture list", "[op_profile]") {
  CHECK(cuda_graph_bucket(1) == 1);
  CHECK(cuda_graph_bucket(3) == 4);
  CHECK(cuda_graph_bucket(5) == 8);
  CHECK(cuda_graph_bucket(9) == 16);
  CHECK(cuda_graph_bucket(17) == 24);
  CHECK(cuda_graph_bucket(256) == 256);
  // a decode batch of 5 runs the GEMMs of the padded 8: the same expert time as a batch of 8
  const CostModel cm = deepseek_tp8(true);
  CHECK(decode_step(cm, 5, 1023)[Op::kExpertGemm].time_s ==
        Approx(decode_step(cm, 8, 1023)[Op::kExpertGemm].time_s));
}

// The reference reads the rows by hand: the MLA module (61 layers), fused MoE (58), the shared expert
// and router GEMMs (58), the dense MLP (3) and LM head at their nearest measured shapes (dense up
// 4608x7168 -> 5120x7168, down 7168x2304 -> 7168x2560, LM head 16160x7168 -> 16384x7168), and 123
// graph all-reduces and one NCCL all-gather at the next measured message size. The profile scales
// unmeasured shapes by their rooflines and interpolates message sizes, so the two agree within 5%.
TEST_CASE("a DeepSeek-V3 tp8 decode step lands within 5% of its summed table rows", "[op_profile]") {
  const auto p = load_op_profile("h200-sglang");
  const ProfileTable& gemm = p->table(ProfileTableKind::kGemm);
  const ProfileTable& comm = p->table(ProfileTableKind::kComm);
  CostOptions o;
  auto separate = load_op_profile("h200-sglang");
  apply_profile_sets(*separate, "shared_experts_fusion=0");  // the shared expert's own GEMM rows
  o.profile = std::move(separate);
  const CostModel cm = make_cost_model(model_preset("deepseek-v3"), parse_parallel("tp8", "test"),
                                       KvLayout::kFp8E4m3, load_hardware("h200"), o);
  struct Point {
    double batch, ar_bytes, gather_bytes;
  };
  for (const Point& pt :
       {Point{1, 16384, 524288}, Point{16, 262144, 8388608}, Point{64, 1048576, 33554432}}) {
    const double b = pt.batch;
    const double ref =
        61 * row_s(p->table(ProfileTableKind::kMlaModuleDecode), "fp8", {7168, 1536, 16, b, 1024}) +
        58 * row_s(p->table(ProfileTableKind::kMoe), "fp8_block", {b, 7168, 2048, 8, 256, 8, 1},
                   "power_law_1.01") +
        58 * (row_s(gemm, "fp8_block", {b, 512, 7168}) + row_s(gemm, "fp8_block", {b, 7168, 256})) +
        58 * row_s(gemm, "bfloat16", {b, 256, 7168}) +
        3 * (row_s(gemm, "fp8_block", {b, 5120, 7168}) + row_s(gemm, "fp8_block", {b, 7168, 2560})) +
        row_s(gemm, "bfloat16", {b, 16384, 7168}) + 123 * row_s(comm, "custom_ar_graph", {8, pt.ar_bytes}) +
        row_s(comm, "nccl_all_gather", {8, pt.gather_bytes});
    const StepCost sc = decode_step(cm, int64_t(b), 1023);
    INFO("batch " << b << ": profiled " << sc.profile_s << " s, table rows " << ref << " s");
    CHECK(sc.profile_s > 0.95 * ref);
    CHECK(sc.profile_s < 1.05 * ref);
  }
}

// shared_experts_fusion: under MoE TP the DeepSeek-V3 shared expert is one more expert of the fused kernel,
// priced as the moe rows at 9/8 the tokens minus the routed experts' own time - between the measured rows
// around it, and far below its two GEMMs - and, where its roofline is its weight read, at most that read;
// under EP (DeepEP in SGLang) it keeps its GEMMs.
TEST_CASE("shared_experts_fusion prices the shared expert inside the fused MoE under TP only",
          "[op_profile]") {
  auto shared_s = [](const std::string& parallel, const std::string& sets, int64_t batch = 16) {
    CostOptions o;
    auto p = load_op_profile("h200-sglang");
    if (!sets.empty()) apply_profile_sets(*p, sets);
    o.profile = std::move(p);
    const CostModel cm = make_cost_model(model_preset("deepseek-v3"), parse_parallel(parallel, "test"),
                                         KvLayout::kFp8E4m3, load_hardware("h200"), o);
    return decode_step(cm, batch, 1023)[Op::kSharedExpert];
  };
  const auto p = load_op_profile("h200-sglang");
  const ProfileTable& moe = p->table(ProfileTableKind::kMoe);
  const double row16 = row_s(moe, "fp8_block", {16, 7168, 2048, 8, 256, 8, 1}, "power_law_1.01");
  const double row32 = row_s(moe, "fp8_block", {32, 7168, 2048, 8, 256, 8, 1}, "power_law_1.01");
  const Term fused = shared_s("tp8", ""), separate = shared_s("tp8", "shared_experts_fusion=0");
  CHECK(fused.source == TermSource::kProfile);
  CHECK(fused.time_s > 0);
  // 16 -> 18 tokens: a fraction of the 16 -> 32 rise (log2(18 / 16) = 0.17 in log-space interpolation)
  CHECK(fused.time_s < 58 * (row32 - row16) * 0.2);
  CHECK(fused.time_s < 0.7 * separate.time_s);
  // 16 tokens: one more expert's weight read (its roofline's memory time), not ~8 more experts' rows.
  CHECK(fused.memory_s > fused.compute_s);
  CHECK(fused.time_s == Approx(fused.memory_s));
  // 2,048 tokens: compute-bound, the table's rows beyond the routed ones, above the weight read.
  const Term many = shared_s("tp8", "", 2048);
  CHECK(many.compute_s > many.memory_s);
  CHECK(many.time_s > 1.5 * many.memory_s);
  // EP: SGLang's DeepEP path leaves fusion off; the same GEMMs as with the flag off.
  CHECK(shared_s("tp8-ep8", "").time_s == Approx(shared_s("tp8-ep8", "shared_experts_fusion=0").time_s));
}

// moe_routing_alpha picks the routing's rows: 1.01 (the profile's) and 0 (balanced) read their own rows at a
// measured token count; an alpha no row was measured with leaves the MoE to the roofline.
TEST_CASE("moe_routing_alpha picks the fused-MoE rows of one routing", "[op_profile]") {
  auto expert_s = [](const std::string& sets) {
    CostOptions o;
    auto p = load_op_profile("h200-sglang");
    if (!sets.empty()) apply_profile_sets(*p, sets);
    o.profile = p;
    const CostModel cm = make_cost_model(model_preset("deepseek-v3"), parse_parallel("tp8", "test"),
                                         KvLayout::kFp8E4m3, load_hardware("h200"), o);
    return decode_step(cm, 32, 1023)[Op::kExpertGemm];
  };
  const auto p = load_op_profile("h200-sglang");
  const ProfileTable& moe = p->table(ProfileTableKind::kMoe);
  const Term skewed = expert_s(""), balanced = expert_s("moe_routing_alpha=0");
  CHECK(skewed.time_s ==
        Approx(58 * row_s(moe, "fp8_block", {32, 7168, 2048, 8, 256, 8, 1}, "power_law_1.01")));
  CHECK(balanced.time_s == Approx(58 * row_s(moe, "fp8_block", {32, 7168, 2048, 8, 256, 8, 1}, "balanced")));
  CHECK(skewed.time_s < 0.7 * balanced.time_s);  // fewer distinct experts read at 32 tokens x top-8
  const Term unmeasured = expert_s("moe_routing_alpha=3");
  CHECK(unmeasured.source == TermSource::kRoofline);
}

// A fused-MoE shape the table lacks is scaled from the nearest measured one by the experts its tokens reach.
// Mixtral's 8 experts (top 2) are all read at 16 tokens; the nearest rows (128 experts, top 8) read about
// half of theirs there, and scaling by every expert's weights priced Mixtral's layer at 60% of the time
// its weights take to read at the GPU's peak bandwidth. Now within the rows' routing skew of it (the rows'
// power-law routing reaches fewer experts than the balanced count the scaling assumes).
TEST_CASE("an unmeasured MoE shape is scaled by the experts its tokens reach", "[op_profile]") {
  CostOptions o;
  o.profile = load_op_profile("h200-sglang");
  const Hardware hw = load_hardware("h200");
  const ModelConfig mixtral = load_hf_config(std::string(TOKENLINE_MODEL_TEST_DATA) + "/mixtral-8x7b.json");
  const CostModel cm = make_cost_model(mixtral, parse_parallel("tp1", "test"), KvLayout::kBf16, hw, o);
  const Term expert = decode_step(cm, 16, 3000)[Op::kExpertGemm];
  REQUIRE(expert.source == TermSource::kProfile);
  const double weights_at_peak_s = 32 * 8 * 3.0 * 4096 * 14336 * 2 / hw.hbm_bw;  // 32 layers, BF16
  CHECK(expert.time_s > 0.9 * weights_at_peak_s);
  CHECK(expert.time_s < 1.5 * weights_at_peak_s);
}

// GLM-5.3 under dp8-ep8 runs 64 heads per GPU, the heads the DSA rows were measured with, so at a measured
// batch and context the DSA ops are the rows times their layers: sparse attention from GLM-5's rows, and a
// decode step's whole indexer (projections, paged logits, top-k) from the indexer module's rows
// (DeepSeek-V3.2's DSA module with and without its indexer), not from the kernel-level logits rows, which
// time the ragged kernel prefill runs.
TEST_CASE("GLM-5.3 DSA ops read the measured rows exactly at a measured point", "[op_profile]") {
  CostOptions o;
  o.profile = load_op_profile("h200-sglang");
  const CostModel cm = make_cost_model(model_preset("glm-5.3"), parse_parallel("dp8-ep8", "test"),
                                       KvLayout::kFp8DsMla, load_hardware("h200"), o);
  const ProfileTable& dsa = o.profile->table(ProfileTableKind::kDsa);
  auto row = [&](std::string_view module, double hidden) {
    for (size_t r = 0; r < dsa.rows(); ++r) {
      if (dsa.text_at(r, 0) == module && dsa.text_at(r, 1) == "decode" && dsa.at(r, 0) == hidden &&
          dsa.at(r, 1) == 64 && dsa.at(r, 2) == 16 && dsa.at(r, 3) == 8193)
        return dsa.at(r, 4) * 1e-3;
    }
    FAIL("no DSA row for " << module);
    return 0.0;
  };
  const StepCost sc = decode_step(cm, 16, 8192);  // 8192 cached + the new token = 8193 keys
  CHECK(sc[Op::kSparseMla].source == TermSource::kProfile);
  CHECK(sc[Op::kSparseMla].time_s == Approx(78 * row("attn", 6144)));
  CHECK(sc[Op::kIndexerScore].source == TermSource::kProfile);
  CHECK(sc[Op::kIndexerScore].time_s == Approx(21 * row("indexer", 7168)));
  CHECK(sc[Op::kTopkSelect].time_s == 0);  // inside the indexer module
  // the ragged kernel's rows alone cost more than the whole module at 8,193 keys
  CHECK(row("indexer", 7168) < row("logits", 6144));
  // a prefill chunk in the step adds its indexer parts (projections, ragged logits, top-k) to the module
  std::vector<SeqWork> seqs(16, SeqWork{.new_tokens = 1, .context_tokens = 8192});
  seqs.push_back(SeqWork{.new_tokens = 2048, .context_tokens = 0, .prefill = true, .last_chunk = true});
  const StepCost mixed = step_cost(cm, seqs);
  CHECK(mixed[Op::kIndexerScore].time_s > sc[Op::kIndexerScore].time_s);
  CHECK(mixed[Op::kTopkSelect].time_s > 0);
}

// SGLang prefills a batch of short DSA sequences as dense MHA (SGLANG_NSA_PREFILL_DENSE_ATTN_KV_LEN_THRESHOLD
// = index_topk; sgl-project/sglang#11892): every sequence holding at most 2,048 keys after its chunk, no
// decode beside it. The MLA prefill rows price the attention, the indexer only caches its keys (no top-k);
// past the threshold, beside a decode, or under another engine's profile, the sparse parts price it.
TEST_CASE("issue 43: SGLang prefills short DSA sequences as dense MHA, the rest sparse", "[op_profile]") {
  auto step = [](const std::string& profile, std::vector<SeqWork> seqs) {
    CostOptions o;
    o.profile = load_op_profile(profile);
    const CostModel cm = make_cost_model(model_preset("glm-5.3"), parse_parallel("tp8", "test"),
                                         KvLayout::kBf16, load_hardware("h200"), o);
    return step_cost(cm, seqs);
  };
  auto prompt = [](int64_t tokens, int64_t prefix) {
    return SeqWork{.new_tokens = tokens, .context_tokens = prefix, .prefill = true, .last_chunk = true};
  };
  auto attention_s = [&](const std::string& profile, std::vector<SeqWork> seqs) {
    return step(profile, std::move(seqs))[Op::kSparseMla].time_s;
  };
  const StepCost dense = step("h200-sglang", {prompt(1024, 1024)});   // 2,048 keys: dense
  const StepCost sparse = step("h200-sglang", {prompt(1025, 1024)});  // 2,049 keys: sparse
  CHECK(dense[Op::kSparseMla].source == TermSource::kProfile);
  CHECK(dense[Op::kSparseMla].time_s < sparse[Op::kSparseMla].time_s / 4);
  CHECK(dense[Op::kIndexerScore].time_s < sparse[Op::kIndexerScore].time_s / 2);  // keys cached, not scored
  CHECK(dense[Op::kTopkSelect].time_s <= sparse[Op::kTopkSelect].time_s);
  // Two short prompts stay dense; a long one beside them, or a decode in the step, makes the batch sparse.
  const double two_short = attention_s("h200-sglang", {prompt(1024, 0), prompt(2048, 0)});
  CHECK(attention_s("h200-sglang", {prompt(1024, 0), prompt(2049, 0)}) > 2 * two_short);
  const SeqWork decode{.new_tokens = 1, .context_tokens = 1000};
  CHECK(attention_s("h200-sglang", {prompt(1024, 0), decode}) >
        2 * attention_s("h200-sglang", {prompt(1024, 0)}));
  // vLLM prefills them sparse (its dense fallback is off by default, vllm-project/vllm#39629): no step down
  const double vllm_at = attention_s("h200-vllm", {prompt(1024, 1024)});
  CHECK(vllm_at > 0.9 * attention_s("h200-vllm", {prompt(1025, 1024)}));
}

// SGLang's TensorRT-LLM NSA backend (--nsa-prefill-backend trtllm --nsa-decode-backend trtllm; the profile's
// dsa_trtllm_backend): b200-sglang's block_trtllm rows time the whole attention block (a_proj .. o_proj with
// the indexer) of a 6,144-hidden GLM-5 with an indexer on every layer, FP8 KV. A decode step of one token per
// sequence and a prefill step without decodes or a prefix take the block from them, shared among the block's
// ops; an MTP verify, a prefix, a model whose layers share their indexer's top-k, or the default backends
// keep the parts.
TEST_CASE("issue 43: the TensorRT-LLM NSA backend prices the DSA block from its whole-block rows",
          "[op_profile]") {
  ModelConfig glm5 = model_preset("glm-5.3");  // GLM-5.3's dims; GLM-5 scores on every layer
  glm5.indexer_full_layers = glm5.attention_layers();
  const auto profile = load_op_profile("b200-sglang", "dsa_trtllm_backend=1");
  auto model = [&](const std::string& sets, const ModelConfig& m) {
    CostOptions o;
    o.profile = load_op_profile("b200-sglang", sets);
    return make_cost_model(m, parse_parallel("tp8", "test"), KvLayout::kFp8DsMla, load_hardware("b200"), o);
  };
  const CostModel trt = model("dsa_trtllm_backend=1", glm5), parts = model("", glm5);
  const ProfileTable& dsa = profile->table(ProfileTableKind::kDsa);
  const Op block_ops[] = {Op::kAProj,      Op::kNormRopeKvWrite, Op::kQBProj, Op::kIndexerScore,
                          Op::kTopkSelect, Op::kSparseMla,       Op::kOProj};
  auto block_s = [&](const StepCost& sc, bool from_block = true) {
    double s = 0;
    for (Op op : block_ops) {
      if (from_block) CHECK(sc[op].source == TermSource::kProfile);
      s += sc[op].time_s;
    }
    return s;
  };
  auto run = [](const CostModel& cm, std::vector<SeqWork> seqs) { return step_cost(cm, seqs); };
  auto prompt = [](int64_t tokens, int64_t prefix) {
    return SeqWork{.new_tokens = tokens, .context_tokens = prefix, .prefill = true, .last_chunk = true};
  };
  const double layers = glm5.attention_layers();
  // 4 sequences at 1,024 cached keys (1,025 with the new token), 8 heads a GPU: the row times the layers
  const double decode_row = row_s(dsa, "block_trtllm", {6144, 8, 4, 1025}, "decode");
  CHECK(block_s(decode_step(trt, 4, 1024)) == Approx(layers * decode_row));
  CHECK(block_s(decode_step(parts, 4, 1024), false) > 1.2 * layers * decode_row);  // the parts: another sum
  // one 8,192-token prompt (sparse) and one of 1,024 (the dense rows the collector ran at that length)
  CHECK(block_s(run(trt, {prompt(8192, 0)})) ==
        Approx(layers * row_s(dsa, "block_trtllm", {6144, 8, 1, 8192}, "prefill")));
  CHECK(block_s(run(trt, {prompt(1024, 0)})) ==
        Approx(layers * row_s(dsa, "block_trtllm", {6144, 8, 1, 1024}, "prefill")));
  // a prefix or an MTP verify: the parts, as without the backend
  CHECK(run(trt, {prompt(4096, 4096)})[Op::kSparseMla].time_s ==
        Approx(run(parts, {prompt(4096, 4096)})[Op::kSparseMla].time_s));
  const std::vector<SeqWork> verify(4, SeqWork{.new_tokens = 3, .context_tokens = 1022});
  CHECK(step_cost(trt, verify)[Op::kSparseMla].time_s ==
        Approx(step_cost(parts, verify)[Op::kSparseMla].time_s));
  // GLM-5.3 scores its top-k on 21 of its 78 layers and reuses it on the others: those take the skip rows
  // (the block with its indexer patched out)
  const ModelConfig glm53 = model_preset("glm-5.3");
  REQUIRE(glm53.indexer_shared_layers() > 0);
  const double skip_row = row_s(dsa, "block_skip_trtllm", {6144, 8, 4, 1025}, "decode");
  CHECK(skip_row < decode_row);
  CHECK(block_s(decode_step(model("dsa_trtllm_backend=1", glm53), 4, 1024)) ==
        Approx(glm53.indexer_full_layers * decode_row + glm53.indexer_shared_layers() * skip_row));
}

TEST_CASE("per-request CPU time shows only where it exceeds the GPU step under overlap scheduling",
          "[op_profile]") {
  const StepCost base = deepseek_decode_step("step_cpu_overhead_s=0,step_cpu_per_request_s=0", 64);
  CHECK(base.overhead_s == 0);
  // 1 us per request is far below a DeepSeek step: hidden.
  CHECK(deepseek_decode_step("step_cpu_per_request_s=1e-6", 64).overhead_s == 0);
  // 1 ms per request: 64 ms of CPU against the GPU step; the step costs the CPU time.
  const StepCost cpu = deepseek_decode_step("step_cpu_per_request_s=1e-3", 64);
  CHECK(cpu.overhead_s == Approx(64e-3 - base.total_s));
  CHECK(cpu.total_s == Approx(64e-3));
  // Without overlap the serial step's CPU time adds: fixed + per request (h200-sglang names sync terms).
  const StepCost serial =
      deepseek_decode_step("overlap_schedule=0,sync_step_cpu_s=1e-3,sync_step_cpu_per_request_s=1e-5", 64);
  CHECK(serial.overhead_s == Approx(1e-3 + 64 * 1e-5));
}

TEST_CASE("a step below its per-layer floor runs the floor, one above it its ops, before the overlap rule",
          "[op_profile]") {
  const std::string kNoCpu = "step_cpu_overhead_s=0,step_cpu_per_request_s=0";
  const int layers = model_preset("deepseek-v3").layers;
  const StepCost small = deepseek_decode_step(kNoCpu + ",step_floor_per_layer_s=0", 1);
  const StepCost large = deepseek_decode_step(kNoCpu + ",step_floor_per_layer_s=0", 64);
  CHECK(small.floor_s == 0);
  REQUIRE(small.total_s < large.total_s);
  // A floor between the two steps' per-layer times lifts the small step to it and leaves the large one.
  // (whole microseconds: the setting's text is written with 6 decimals)
  const double floor_per_layer_s = std::round((small.total_s + large.total_s) / 2 / layers * 1e6) / 1e6;
  const std::string floor = kNoCpu + ",step_floor_per_layer_s=" + std::to_string(floor_per_layer_s);
  const StepCost lifted = deepseek_decode_step(floor, 1);
  CHECK(lifted.total_s == Approx(floor_per_layer_s * layers));
  CHECK(lifted.floor_s == Approx(floor_per_layer_s * layers - small.total_s));
  CHECK(lifted.profile_s == Approx(small.profile_s));  // the ops keep their own times
  const StepCost kept = deepseek_decode_step(floor, 64);
  CHECK(kept.floor_s == 0);
  CHECK(kept.total_s == Approx(large.total_s));
  // Overlapped CPU time is hidden behind the floored step, not behind its ops alone.
  const double cpu_s = (small.total_s + floor_per_layer_s * layers) / 2;
  // (each name once: --profile-set refuses a name given twice)
  const std::string floor_with_cpu =
      "step_cpu_per_request_s=0,step_floor_per_layer_s=" + std::to_string(floor_per_layer_s) +
      ",step_cpu_overhead_s=" + std::to_string(cpu_s);
  CHECK(deepseek_decode_step(floor_with_cpu, 1).overhead_s == 0);
}

TEST_CASE("with MTP the per-layer floor counts each draft pass's layer as well as the model's",
          "[op_profile]") {
  // One DeepSeek-V3 request verifying 2 drafts (3 new tokens) runs the model's 61 layers and 2 passes of its
  // one MTP layer; a floor far above the ops lifts the step to 63 layers' worth, the same step without MTP
  // (or with MTP and no draft to verify, 1 pass) to 61 / 62.
  CostOptions o;
  auto p = load_op_profile("h200-sglang");
  apply_profile_sets(*p, "step_cpu_overhead_s=0,step_cpu_per_request_s=0,step_floor_per_layer_s=0.001");
  o.profile = std::move(p);
  const ModelConfig m = model_preset("deepseek-v3");
  REQUIRE(m.mtp_layers == 1);
  const CostModel plain =
      make_cost_model(m, parse_parallel("tp8", "test"), KvLayout::kFp8E4m3, load_hardware("h200"), o);
  o.mtp = true;
  const CostModel mtp =
      make_cost_model(m, parse_parallel("tp8", "test"), KvLayout::kFp8E4m3, load_hardware("h200"), o);
  const std::vector<SeqWork> verify{SeqWork{.new_tokens = 3, .context_tokens = 1023}};
  const std::vector<SeqWork> single{SeqWork{.new_tokens = 1, .context_tokens = 1023}};
  CHECK(step_cost(plain, verify).total_s == Approx(0.001 * m.layers));
  CHECK(step_cost(mtp, verify).total_s == Approx(0.001 * (m.layers + 2)));
  CHECK(step_cost(mtp, single).total_s == Approx(0.001 * (m.layers + 1)));
}

TEST_CASE("an MLA model's context step lasts at least its MLA layers x the host's launch time",
          "[op_profile]") {
  // eager_host_per_mla_layer_s (TensorRT-LLM's context steps run eagerly): a 1,024-token context step of
  // DeepSeek-V3 under a host time far above its ops lasts layers x it; decode steps keep their ops, in a
  // CUDA graph or above the largest one; a GQA model's context step is not touched.
  const std::string kNoCpu = "step_cpu_overhead_s=0,step_cpu_per_request_s=0,";
  auto cost_model = [&](const ModelConfig& m, const std::string& sets) {
    CostOptions o;
    auto p = load_op_profile("h200-trtllm");
    apply_profile_sets(*p, kNoCpu + sets);
    o.profile = std::move(p);
    return make_cost_model(m, parse_parallel("tp8", "test"), KvLayout::kFp8E4m3, load_hardware("h200"), o);
  };
  const ModelConfig v3 = model_preset("deepseek-v3");
  REQUIRE(v3.attention == AttentionKind::kMla);
  const std::vector<SeqWork> prompt{
      SeqWork{.new_tokens = 1024, .context_tokens = 0, .prefill = true, .last_chunk = true}};
  const std::vector<SeqWork> decode(4, SeqWork{.new_tokens = 1, .context_tokens = 1024});
  const CostModel off = cost_model(v3, "eager_host_per_mla_layer_s=0");
  const CostModel on = cost_model(v3, "eager_host_per_mla_layer_s=0.01");
  const StepCost ctx_off = step_cost(off, prompt), ctx_on = step_cost(on, prompt);
  REQUIRE(ctx_off.total_s < 0.01 * v3.layers);
  CHECK(ctx_on.total_s == Approx(0.01 * v3.layers));
  CHECK(ctx_on.floor_s == Approx(0.01 * v3.layers - ctx_off.total_s));
  CHECK(ctx_on.profile_s == Approx(ctx_off.profile_s));  // the ops keep their own times
  CHECK(step_cost(on, decode).total_s == Approx(step_cost(off, decode).total_s));  // a graph step
  const std::vector<SeqWork> eager_decode(2048, SeqWork{.new_tokens = 1, .context_tokens = 1024});
  CHECK(step_cost(on, eager_decode).total_s == Approx(step_cost(off, eager_decode).total_s));
  // a floor below the ops: the step's own time
  CHECK(step_cost(cost_model(v3, "eager_host_per_mla_layer_s=1e-6"), prompt).total_s ==
        Approx(ctx_off.total_s));
  const ModelConfig llama = model_preset("llama-3.1-70b");
  REQUIRE(llama.attention == AttentionKind::kGqa);
  CHECK(step_cost(cost_model(llama, "eager_host_per_mla_layer_s=0.01"), prompt).total_s ==
        Approx(step_cost(cost_model(llama, "eager_host_per_mla_layer_s=0"), prompt).total_s));
}

namespace {

// Every field a step's outputs read, bit for bit: each term and the step's sums.
void check_same_cost(const StepCost& a, const StepCost& b) {
  for (int i = 0; i < kOpCount; ++i) {
    INFO("op " << op_name(Op(i)));
    const Term& x = a.terms[size_t(i)];
    const Term& y = b.terms[size_t(i)];
    for (double Term::*field :
         {&Term::time_s, &Term::launch_s, &Term::bytes_each, &Term::flops, &Term::hbm_bytes})
      CHECK(x.*field == y.*field);
    CHECK(x.source == y.source);
  }
  for (double StepCost::*field : {&StepCost::total_s, &StepCost::profile_s, &StepCost::overhead_s})
    CHECK(a.*field == b.*field);
  CHECK(a.busiest_rank == b.busiest_rank);
}

}  // namespace

// A run's cost model remembers curve values, grid rows and a decode rank's token ops by whole tokens
// (CostOptions::remembered_tokens); a step priced from them must be the step priced by the search, bit for
// bit, whatever the model, layout and batch: decodes of every CUDA-graph bucket and beyond it, prefill
// chunks alone and with decodes, several ranks of unequal load, each step priced twice (the second time
// from what the first remembered).
TEST_CASE("remembered curve values price every step as the search does, bit for bit", "[op_profile]") {
  struct Deployment {
    std::string model;
    std::string parallel;
    KvLayout kv;
  };
  const std::vector<Deployment> deployments = {
      {"glm-5.3", "dp8-ep8", KvLayout::kBf16},         // DSA, fused shared expert, DP attention
      {"deepseek-v3", "tp8", KvLayout::kFp8E4m3},      // MLA decode module
      {"deepseek-v3", "dp8-ep8", KvLayout::kFp8E4m3},  // MLA, dispatch / combine
      {"llama-3.1-8b", "tp2", KvLayout::kBf16},        // GQA, all-reduces
  };
  for (const Deployment& d : deployments) {
    INFO(d.model << " " << d.parallel);
    CostOptions searched;
    searched.profile = load_op_profile("h200-sglang");
    CostOptions remembered = searched;
    remembered.remembered_tokens = 4096;
    const ModelConfig m = model_preset(d.model);
    const Parallel p = parse_parallel(d.parallel, "test");
    const CostModel a = make_cost_model(m, p, d.kv, load_hardware("h200"), searched);
    const CostModel b = make_cost_model(m, p, d.kv, load_hardware("h200"), remembered);
    const int ranks = p.dp_attention;
    for (int pass = 0; pass < 2; ++pass) {
      for (const int64_t batch : {1, 2, 3, 5, 8, 13, 64, 100, 257, 600, 1500}) {
        for (const int64_t context : {1, 700, 4096, 33000}) {
          std::vector<std::vector<SeqWork>> work(static_cast<size_t>(ranks));
          for (int r = 0; r < ranks; ++r) {
            const int64_t n = std::max<int64_t>(1, batch - 3 * r);  // unequal ranks
            for (int64_t i = 0; i < n; ++i)
              work[size_t(r)].push_back({1, context + 37 * i + r, false, false});
          }
          if (batch % 2 == 1)
            work[0].push_back({std::min<int64_t>(batch * 7, 1024), context, true, batch > 50});
          std::vector<std::span<const SeqWork>> spans(work.begin(), work.end());
          check_same_cost(step_cost(a, spans), step_cost(b, spans));
        }
      }
      for (const int64_t chunk : {1, 16, 1000, 1024, 4096, 8192}) {
        const SeqWork one{chunk, 512, true, true};
        check_same_cost(step_cost(a, std::span<const SeqWork>(&one, 1)),
                        step_cost(b, std::span<const SeqWork>(&one, 1)));
      }
    }
  }
}

TEST_CASE("each shipped profile prices the kernels of every preset model it claims from its tables",
          "[op_profile]") {
  // What each profile claims (topologies/profiles/README.md): DeepSeek-V3 (MLA, FP8 MoE) and Llama-3.1-70B
  // (GQA) everywhere; GLM-5.3's DSA where the engine's collection has DSA kernel rows (SGLang; vLLM through
  // its tables_from). TensorRT-LLM's block-FP8 MoE on B200 is DeepGEMM's, measured with expert parallelism
  // only. GB200's collectives are measured on 2 and 4 GPUs (one compute tray): its claims are at TP4.
  struct Claim {
    const char* profile;
    std::vector<std::string> models;
    const char* moe_layout;
    const char* dense_layout = "tp8";
  };
  const std::vector<Claim> claims = {
      {"h200-sglang", {"deepseek-v3", "glm-5.3", "llama-3.1-70b"}, "tp8"},
      {"h200-vllm", {"deepseek-v3", "glm-5.3", "llama-3.1-70b"}, "tp8"},
      {"h200-trtllm", {"deepseek-v3", "llama-3.1-70b"}, "tp8"},
      {"b200-sglang", {"deepseek-v3", "glm-5.3", "llama-3.1-70b"}, "tp8"},
      {"b200-vllm", {"deepseek-v3", "glm-5.3", "llama-3.1-70b"}, "tp8"},
      {"b200-trtllm", {"deepseek-v3", "llama-3.1-70b"}, "tp8-ep8"},
      {"h100-sglang", {"deepseek-v3", "glm-5.3", "llama-3.1-70b"}, "tp8"},
      {"h100-vllm", {"deepseek-v3", "glm-5.3", "llama-3.1-70b"}, "tp8"},
      {"h100-trtllm", {"deepseek-v3", "llama-3.1-70b"}, "tp8"},
      {"b300-sglang", {"deepseek-v3", "glm-5.3", "llama-3.1-70b"}, "tp8"},
      {"b300-vllm", {"deepseek-v3", "glm-5.3", "llama-3.1-70b"}, "tp8"},
      {"gb200-sglang", {"deepseek-v3", "glm-5.3", "llama-3.1-70b"}, "tp4", "tp4"},
      // TensorRT-LLM 1.3.0rc20 times DeepGEMM's block-FP8 MoE without expert parallelism too (1.2.0rc5 on
      // B200 did not); GB200's collectives, as gb200-sglang's, on 2 and 4 GPUs only.
      {"b300-trtllm", {"deepseek-v3", "llama-3.1-70b"}, "tp8"},
      {"gb200-vllm", {"deepseek-v3", "glm-5.3", "llama-3.1-70b"}, "tp4", "tp4"},
      {"gb200-trtllm", {"deepseek-v3", "llama-3.1-70b"}, "tp4", "tp4"},
  };
  const Op kernels[] = {Op::kAProj,        Op::kQBProj,     Op::kSparseMla,    Op::kOProj,
                        Op::kDenseMlp,     Op::kExpertGemm, Op::kSharedExpert, Op::kAttnAllreduce,
                        Op::kMlpAllreduce, Op::kLmHead,     Op::kIndexerScore};
  for (const Claim& c : claims) {
    const auto profile = load_op_profile(c.profile);
    const Hardware hw = load_hardware(profile->hardware);
    for (const std::string& model : c.models) {
      INFO(c.profile << " " << model);
      const ModelConfig m = model_preset(model);
      CostOptions o;
      o.profile = profile;
      const std::string layout = m.is_moe() ? c.moe_layout : c.dense_layout;
      const CostModel cm = make_cost_model(m, parse_parallel(layout, "test"), m.default_kv_layout, hw, o);
      for (const bool prefill : {false, true}) {
        const StepCost sc = prefill ? prefill_step(cm, 2048, 0, true) : decode_step(cm, 16, 2047);
        for (Op op : kernels) {
          INFO(op_name(op) << (prefill ? " prefill" : " decode"));
          if (sc[op].time_s > 0) CHECK(sc[op].source == TermSource::kProfile);
        }
      }
    }
  }
}

TEST_CASE("a profile measured on one GPU is refused on another", "[op_profile]") {
  for (const char* name : {"h200-sglang", "h200-trtllm", "b200-sglang", "h100-vllm", "b300-sglang",
                           "b300-vllm", "gb200-sglang", "b300-trtllm", "gb200-vllm", "gb200-trtllm"}) {
    const auto p = load_op_profile(name);
    const std::string other = p->hardware == "b200" ? "h200" : "b200";
    CostOptions o;
    o.profile = p;
    INFO(name);
    CHECK_THROWS_AS(make_cost_model(model_preset("deepseek-v3"), parse_parallel("tp8", "test"),
                                    KvLayout::kBf16, load_hardware(other), o),
                    InputError);
  }
}

// ---- weight formats: each format's GEMMs and fused MoE from its own rows, else from another's by the rule
// ----
namespace {

// Mixtral-8x7B at tp1 (fused QKV 6,144 x 4,096; experts 4,096 / 14,336, top 2 of 8) with its weights in
// `format` (--weights-format), priced by a scratch profile holding only the GEMM and MoE rows of `labels`,
// each label at its own latency so that a test sees which rows priced an op.
constexpr std::pair<std::string_view, double> kLabelMs[] = {
    {"bfloat16", 0.1},     {"fp8", 0.02},     {"fp8_block", 0.03}, {"nvfp4", 0.04},
    {"w4a16_mxfp4", 0.05}, {"int4_wo", 0.06}, {"int8_wo", 0.07}};

double label_ms(std::string_view label) {
  for (const auto& [l, ms] : kLabelMs)
    if (l == label) return ms;
  FAIL("no label " << label);
  return 0;
}

CostModel mixtral_in(const std::string& format, std::initializer_list<std::string_view> labels,
                     const char* hardware = "h200") {
  namespace fs = std::filesystem;
  std::string name = format + "-" + hardware;
  for (std::string_view l : labels) name += "-" + std::string(l);
  const fs::path dir =
      fs::temp_directory_path() / ("tl_op_profile_formats_" + name + "-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "profile.json")
      << R"({"name": "t", "hardware": ")" << hardware
      << R"(", "engine_name": "vllm", "tables": {"gemm": "gemm.csv", "moe": "moe.csv"}})";
  std::ofstream gemm(dir / "gemm.csv"), moe(dir / "moe.csv");
  gemm << "dtype,m,n,k,latency_ms\n";
  moe << "dtype,routing,tokens,hidden,inter,topk,experts,moe_tp,moe_ep,latency_ms\n";
  for (std::string_view l : labels) {
    for (int m : {1, 16}) {
      gemm << l << "," << m << ",6144,4096," << label_ms(l) << "\n";
      moe << l << ",balanced," << m << ",4096,14336,2,8,1,1," << label_ms(l) << "\n";
    }
  }
  gemm.close();
  moe.close();
  ModelConfig m = load_hf_config(std::string(TOKENLINE_MODEL_TEST_DATA) + "/mixtral-8x7b.json");
  override_weight_format(m, format);
  auto p = load_op_profile(dir.string());
  apply_profile_sets(*p, "moe_routing_alpha=0");
  CostOptions o;
  o.profile = std::move(p);
  return make_cost_model(m, parse_parallel("tp1", "test"), KvLayout::kBf16, load_hardware(hardware), o);
}

const FormatRows& rows_of(const CostModel& cm, WeightGroup g) {
  for (const FormatRows& r : profile_curves(cm).format_rows)
    if (r.group == g) return r;
  FAIL("no rows for " << weight_group_name(g));
  static const FormatRows none;
  return none;
}

}  // namespace

// Every format's rows present beside BF16's: each format reads its own (a one-token decode step: one row per
// layer), never the BF16 ones.
TEST_CASE("each weight format prices its GEMMs and fused MoE from its own rows, never the BF16 rows",
          "[op_profile][weight_format]") {
  const std::initializer_list<std::string_view> all = {"bfloat16",    "fp8",     "fp8_block", "nvfp4",
                                                       "w4a16_mxfp4", "int4_wo", "int8_wo"};
  for (const auto& [format, label] :
       {std::pair{"bf16", "bfloat16"}, std::pair{"fp8", "fp8"}, std::pair{"fp8-block128", "fp8_block"},
        std::pair{"fp8-channel", "fp8"}, std::pair{"nvfp4", "nvfp4"}, std::pair{"mxfp4", "w4a16_mxfp4"},
        std::pair{"int4-g128", "int4_wo"}, std::pair{"int8-g128", "int8_wo"}}) {
    CAPTURE(format);
    const CostModel cm = mixtral_in(format, all);
    const StepCost sc = decode_step(cm, 1, 1023);
    REQUIRE(sc[Op::kAProj].source == TermSource::kProfile);
    REQUIRE(sc[Op::kExpertGemm].source == TermSource::kProfile);
    CHECK(sc[Op::kAProj].time_s == Approx(32 * label_ms(label) * 1e-3));
    CHECK(sc[Op::kExpertGemm].time_s == Approx(32 * label_ms(label) * 1e-3));
    CHECK(rows_of(cm, WeightGroup::kRoutedExperts).rows == label);
    CHECK_FALSE(rows_of(cm, WeightGroup::kAttention).derived);
    CHECK(sc.derived_s == 0);
    if (std::string_view(format) != "bf16") CHECK(sc[Op::kExpertGemm].time_s != Approx(32 * 0.1e-3));
  }
}

// A profile with no rows of the format: the rows of the format its math runs in, each point scaled by the two
// formats' rooflines. A one-token decode GEMM is bound by its weight bytes, so it scales by bytes per
// parameter: weight-only INT4 with a BF16 scale per 128 weights reads 0.5 + 2 / 128 B per parameter, BF16 2
// B, and both read and write the activations (6,144 + 4,096 values of 2 B).
TEST_CASE("a format without rows of its own is priced from the nearest measured format by bytes and rate",
          "[op_profile][weight_format]") {
  const double n = 6144, k = 4096, act = (n + k) * 2;
  const CostModel int4 = mixtral_in("int4-g128", {"bfloat16"});
  const StepCost sc = decode_step(int4, 1, 1023);
  const FormatRows& attn = rows_of(int4, WeightGroup::kAttention);
  CHECK(attn.rows == "bfloat16");
  CHECK(attn.derived);
  CHECK(attn.format == "int4-g128");
  CHECK(sc[Op::kAProj].source == TermSource::kProfile);
  const double bytes_ratio = (n * k * (0.5 + 2.0 / 128) + act) / (n * k * 2 + act);
  CHECK(sc[Op::kAProj].time_s == Approx(32 * 0.1e-3 * bytes_ratio));
  CHECK(rows_of(int4, WeightGroup::kRoutedExperts).derived);
  CHECK(sc[Op::kExpertGemm].time_s <
        0.35 * 32 * 0.1e-3);  // 1 token reaches 2 of 8 experts at ~0.27 x the bytes
  // The share priced by the rule: every derived op's profile time, nothing else.
  double derived = 0;
  for (Op op : {Op::kAProj, Op::kOProj, Op::kExpertGemm}) derived += sc[op].time_s;
  CHECK(sc.derived_s == Approx(derived));
  CHECK(sc.derived_s < sc.profile_s);

  // NVFP4 on B200 (an FP4 rate) with only block-FP8 and BF16 rows: from the block-FP8 rows, scaled by
  // 0.5 + 1 / 16 B (an E4M3 scale per 16 weights) over 1 + 4 / 128^2 B.
  const CostModel nvfp4 = mixtral_in("nvfp4", {"bfloat16", "fp8_block"}, "b200");
  CHECK(rows_of(nvfp4, WeightGroup::kRoutedExperts).rows == "fp8_block");
  CHECK(rows_of(nvfp4, WeightGroup::kRoutedExperts).derived);
  const double fp4_ratio = (n * k * (0.5 + 1.0 / 16) + act) / (n * k * (1 + 4.0 / (128 * 128)) + act);
  CHECK(decode_step(nvfp4, 1, 1023)[Op::kAProj].time_s == Approx(32 * 0.03e-3 * fp4_ratio));
  // And the same model with its own rows reads them unscaled.
  CHECK(decode_step(mixtral_in("nvfp4", {"bfloat16", "fp8_block", "nvfp4"}, "b200"), 1, 1023)[Op::kAProj]
            .time_s == Approx(32 * 0.04e-3));
  // W4A16 NVFP4 (ModelOpt's W4A16_NVFP4: FP4 weights, BF16 activations) is not the W4A4 kernel of the
  // nvfp4 rows: BF16 math, so the BF16 rows at NVFP4 bytes.
  const CostModel w4a16 = mixtral_in("nvfp4-w4a16", {"bfloat16", "fp8_block", "nvfp4"}, "b200");
  CHECK(rows_of(w4a16, WeightGroup::kRoutedExperts).rows == "bfloat16");
  CHECK(rows_of(w4a16, WeightGroup::kRoutedExperts).derived);
  const double w4a16_ratio = (n * k * (0.5 + 1.0 / 16) + act) / (n * k * 2 + act);
  CHECK(decode_step(w4a16, 1, 1023)[Op::kAProj].time_s == Approx(32 * 0.1e-3 * w4a16_ratio));
}

// The shipped profiles: Kimi-K2.5's INT4 experts read h200-vllm's Marlin rows (its attention, excluded, the
// BF16 rows), DeepSeek-V3.1-NVFP4's NVFP4 experts b200-sglang's FP4 rows - and its attention too: q_a, q_b,
// kv_a and kv_b stay BF16 (70M parameters a layer) but o_proj, NVFP4, holds 117M of its 187M.
TEST_CASE("Kimi-K2.5 INT4 and DeepSeek-V3.1-NVFP4 experts read their formats' rows in the shipped profiles",
          "[op_profile][weight_format]") {
  const std::string hf = std::string(TOKENLINE_MODEL_TEST_DATA) + "/hf/";
  CostOptions o;
  o.profile = load_op_profile("h200-vllm");
  const CostModel kimi =
      make_cost_model(load_hf_config(hf + "kimi-k2.5/config.json"), parse_parallel("tp8", "test"),
                      KvLayout::kFp8E4m3, load_hardware("h200"), o);
  CHECK(rows_of(kimi, WeightGroup::kRoutedExperts).rows == "int4_wo");
  CHECK_FALSE(rows_of(kimi, WeightGroup::kRoutedExperts).derived);
  CHECK(rows_of(kimi, WeightGroup::kAttention).rows == "bfloat16");
  const StepCost k = decode_step(kimi, 32, 1023);
  CHECK(k[Op::kExpertGemm].source == TermSource::kProfile);
  CHECK(k.derived_s == 0);
  o.profile = load_op_profile("b200-sglang");
  const CostModel ds =
      make_cost_model(load_hf_config(hf + "deepseek-v3.1-nvfp4/config.json"), parse_parallel("tp8", "test"),
                      KvLayout::kFp8E4m3, load_hardware("b200"), o);
  CHECK(rows_of(ds, WeightGroup::kRoutedExperts).rows == "nvfp4");
  CHECK_FALSE(rows_of(ds, WeightGroup::kRoutedExperts).derived);
  CHECK(rows_of(ds, WeightGroup::kDenseMlp).rows == "nvfp4");
  CHECK(ds.model.weights.share(WeightGroup::kAttention) == Approx(117.4 / 187.1).epsilon(0.01));
  CHECK(rows_of(ds, WeightGroup::kAttention).rows == "nvfp4");
}

}  // namespace tokenline

namespace tokenline {

// Issue 44: gpt-oss-120b as InferenceX deployed it on H200 (VLLM_MXFP4_USE_MARLIN=1) runs its MXFP4 experts
// on Marlin's fused MoE, the kernel h200-vllm's int4_wo rows time: with moe_w4a16_marlin = 1 those rows price
// it (derived: another format's rows), slower than the w4a16_mxfp4 rows in prefill and faster in decode, as
// the two kernels' rows are; Kimi-K2.5's INT4 experts read the same rows either way.
TEST_CASE("issue 44: moe_w4a16_marlin prices MXFP4 experts from the Marlin (int4_wo) rows",
          "[op_profile][weight_format]") {
  const ModelConfig oss = model_preset("gpt-oss-120b");
  auto experts_of = [&](double marlin, bool prefill) {
    auto p = load_op_profile("h200-vllm");
    apply_profile_sets(*p, "moe_w4a16_marlin=" + std::to_string(int(marlin)));
    CostOptions o;
    o.profile = std::move(p);
    const CostModel cm =
        make_cost_model(oss, parse_parallel("tp1", "test"), KvLayout::kBf16, load_hardware("h200"), o);
    const FormatRows rows = rows_of(cm, WeightGroup::kRoutedExperts);
    const StepCost s = prefill ? prefill_step(cm, 8192, 0, true) : decode_step(cm, 1, 1023);
    return std::pair{rows, s[Op::kExpertGemm].time_s};
  };
  const auto [own_rows, own_prefill_s] = experts_of(0, true);
  CHECK(own_rows.rows == "w4a16_mxfp4");
  CHECK_FALSE(own_rows.derived);
  const auto [marlin_rows, marlin_prefill_s] = experts_of(1, true);
  CHECK(marlin_rows.rows == "int4_wo");
  CHECK(marlin_rows.derived);
  // 8,192 tokens: the Marlin rows run at ~250 TFLOPS where the w4a16_mxfp4 rows reach ~500.
  CHECK(marlin_prefill_s > 1.5 * own_prefill_s);
  // One token: Marlin reads the four experts' weights faster than the w4a16_mxfp4 rows' kernel.
  CHECK(experts_of(1, false).second < experts_of(0, false).second);

  const std::string hf = std::string(TOKENLINE_MODEL_TEST_DATA) + "/hf/";
  auto p = load_op_profile("h200-vllm");
  apply_profile_sets(*p, "moe_w4a16_marlin=1");
  CostOptions o;
  o.profile = std::move(p);
  const CostModel kimi =
      make_cost_model(load_hf_config(hf + "kimi-k2.5/config.json"), parse_parallel("tp8", "test"),
                      KvLayout::kFp8E4m3, load_hardware("h200"), o);
  CHECK(rows_of(kimi, WeightGroup::kRoutedExperts).rows == "int4_wo");
  CHECK_FALSE(rows_of(kimi, WeightGroup::kRoutedExperts).derived);
  auto q = load_op_profile("h200-vllm");
  CHECK_THROWS_AS(apply_profile_sets(*q, "moe_w4a16_marlin=2"), InputError);
}

}  // namespace tokenline

namespace tokenline {
namespace {

// A decode or prefill step's routed-expert time and the rows that priced it: `model` on `profile` with vLLM's
// MoE backend `backend` ("": the profile's default per format).
struct ExpertsPriced {
  FormatRows rows;
  double decode_s = 0, prefill_s = 0;
};
ExpertsPriced experts_priced(const ModelConfig& model, const char* profile, const char* hardware,
                             const char* parallel, const std::string& backend) {
  auto p = load_op_profile(profile);
  if (!backend.empty()) REQUIRE(select_moe_backend(*p, backend, "test"));
  CostOptions o;
  o.profile = std::move(p);
  const CostModel cm =
      make_cost_model(model, parse_parallel(parallel, "test"), KvLayout::kBf16, load_hardware(hardware), o);
  return {rows_of(cm, WeightGroup::kRoutedExperts), decode_step(cm, 4, 1023)[Op::kExpertGemm].time_s,
          prefill_step(cm, 8192, 0, true)[Op::kExpertGemm].time_s};
}

}  // namespace

// Issue 44: the B200 vLLM gpt-oss-120b runs (InferenceX gptoss_fp4_b200.sh) ran FlashInfer's TensorRT-LLM-gen
// MXFP4 MoE, vLLM's choice on Blackwell (mxfp4.py get_mxfp4_backend). b200-vllm's w4a16_mxfp4 rows are that
// kernel's (aiconfigurator vLLM 0.24.0): 4 tokens at TP1 take 0.069 ms a layer, 36 layers 2.5 ms; the 0.19.0
// vllm_mxfp4_moe rows priced before took 0.20 ms a layer (7.3 ms) and had no TP-sharded rows, so TP2 was
// priced from BF16 rows (derived). This fails if gpt-oss MXFP4 is priced by the old table.
TEST_CASE("issue 44: b200-vllm prices gpt-oss MXFP4 experts by FlashInfer's TensorRT-LLM MXFP4 MoE rows",
          "[op_profile][weight_format][moe_backend]") {
  const ModelConfig oss = model_preset("gpt-oss-120b");
  const ExpertsPriced tp1 = experts_priced(oss, "b200-vllm", "b200", "tp1", "");
  CHECK(tp1.rows.rows == "w4a16_mxfp4");
  CHECK_FALSE(tp1.rows.derived);
  // 36 layers x 0.0688 ms (the power_law_1.01 rows at 4 tokens, MoE TP 1), interpolation aside.
  CHECK(tp1.decode_s == Approx(36 * 0.0688e-3).epsilon(0.15));
  CHECK(tp1.decode_s < 4e-3);  // the old rows: 7.3 ms
  const ExpertsPriced tp2 = experts_priced(oss, "b200-vllm", "b200", "tp2", "");
  CHECK(tp2.rows.rows == "w4a16_mxfp4");
  CHECK_FALSE(tp2.rows.derived);
  CHECK(tp2.decode_s < tp1.decode_s);
}

// Issue 44: the B200 vLLM Kimi-K2.5 INT4 runs (InferenceX kimik2.5_int4_b200.sh, vLLM 0.15.1) set
// VLLM_USE_FLASHINFER_MOE_INT4=1, so their group-32 INT4 experts ran FlashInfer's TensorRT-LLM MxInt4 MoE
// (trtllm_mxint4_block_scale_moe; vLLM's quantization/utils/flashinfer_mxint4_moe.py), not Marlin:
// `--moe-backend flashinfer_trtllm` prices them by b200-vllm's moe_flashinfer_trtllm.csv, aiconfigurator's
// SGLang 0.5.14 rows of that kernel at Kimi-K2.5's shape. At MoE TP 8 and 4 tokens those take 0.048 ms a
// layer (power_law_1.01), the 0.19.0 Marlin rows 0.127 ms; 60 MoE layers: 2.9 ms against 7.6 ms. This fails
// if the INT4 experts are priced by Marlin's rows under that backend, or if the default (Marlin, vLLM's
// choice without the variable) moves.
TEST_CASE("issue 44: b200-vllm prices Kimi-K2.5's INT4 experts by FlashInfer's TensorRT-LLM MxInt4 MoE rows",
          "[op_profile][weight_format][moe_backend]") {
  const ModelConfig kimi =
      load_hf_config(std::string(TOKENLINE_MODEL_TEST_DATA) + "/hf/kimi-k2.5/config.json");
  const ExpertsPriced marlin = experts_priced(kimi, "b200-vllm", "b200", "tp8", "");
  const ExpertsPriced fi = experts_priced(kimi, "b200-vllm", "b200", "tp8", "flashinfer_trtllm");
  CHECK(marlin.rows.rows == "int4_wo");
  CHECK(fi.rows.rows == "int4_wo");
  CHECK_FALSE(marlin.rows.derived);
  CHECK_FALSE(fi.rows.derived);
  // 60 MoE layers x 0.0478 ms (FlashInfer) and x 0.1265 ms (Marlin 0.19.0), 4 tokens, MoE TP 8.
  CHECK(fi.decode_s == Approx(60 * 0.0478e-3).epsilon(0.15));
  CHECK(marlin.decode_s == Approx(60 * 0.1265e-3).epsilon(0.15));
  // 8,192 tokens of prefill: 1.43 ms a layer against Marlin's 6.59 ms.
  CHECK(fi.prefill_s < 0.4 * marlin.prefill_s);
  // The table holds INT4 rows only: block-FP8 and NVFP4 experts keep moe.csv's rows under this backend.
  const ModelConfig minimax =
      load_hf_config(std::string(TOKENLINE_MODEL_TEST_DATA) + "/hf/minimax-m2.5/config.json");
  CHECK(experts_priced(minimax, "b200-vllm", "b200", "tp4", "flashinfer_trtllm").decode_s ==
        experts_priced(minimax, "b200-vllm", "b200", "tp4", "").decode_s);
}

// vLLM 0.12-0.14 (MoE TP below 8) and 0.16 run block-FP8 MoE on DeepGEMM on Hopper at every batch
// (docs/hardware-and-engines.md "vLLM's DeepGEMM MoE on Hopper"): DeepGemmExperts sizes a buffer of
// M x top-k + local experts x 127 rows, rounded to 128, and DeepGEMM's SM90 contiguous kernel loads A and
// stores D for all of them. `--moe-backend deep_gemm` on h200-vllm (engine.moe_backend.contiguous_align) sets
// moe_contiguous_align 128: the routed rows keep the Triton rows' price and the padding rows add their HBM
// bytes at the roofline, counted as activation time, not measured time. MiniMax-M2.5 at TP4 holds all 256
// experts on each GPU (intermediate 1,536 / 4): 4 decode tokens route 32 rows into a 32,640-row buffer. The
// expected bytes below are written out from the kernels' reads and writes, not from the pricing code. This
// fails if the padding is not priced, is priced as measured, or scales with anything but the buffer's rows.
TEST_CASE("vLLM's DeepGEMM MoE on Hopper pays its worst-case row buffer (--moe-backend deep_gemm)",
          "[op_profile][moe_backend]") {
  const ModelConfig mm =
      load_hf_config(std::string(TOKENLINE_MODEL_TEST_DATA) + "/hf/minimax-m2.5/config.json");
  REQUIRE(mm.routed_experts == 256);
  REQUIRE(mm.experts_per_token == 8);
  REQUIRE(mm.moe_layers() == 62);
  struct Priced {
    StepCost step;
    double hbm_bw = 0;
  };
  auto decode = [&](const char* parallel, const std::string& backend, const std::string& sets = "") {
    auto p = load_op_profile("h200-vllm", sets);
    if (!backend.empty()) REQUIRE(select_moe_backend(*p, backend, "test"));
    CostOptions o;
    o.profile = std::move(p);
    const CostModel cm =
        make_cost_model(mm, parse_parallel(parallel, "test"), KvLayout::kBf16, load_hardware("h200"), o);
    return Priced{decode_step(cm, 4, 1023), cm.hbm_bw};
  };
  const Priced triton = decode("tp4", ""), dg = decode("tp4", "deep_gemm");
  const Priced dg64 = decode("tp4", "deep_gemm", "moe_contiguous_align=64");  // a --profile-set stays
  const Term &t0 = triton.step[Op::kExpertGemm], &t128 = dg.step[Op::kExpertGemm],
             &t64 = dg64.step[Op::kExpertGemm];
  CHECK(t0.roofline_s == 0);
  CHECK(t128.time_s - t128.roofline_s == Approx(t0.time_s));  // the routed rows: the Triton rows' price
  // A padding row at TP4: GEMM1 reads 3,072 FP8 + 24 FP32 scales and writes 768 BF16 (gate + up of 384); the
  // activation reads those and writes 384 FP8 + 3 scales; GEMM2 reads those and writes 3,072 BF16; the -1 id.
  const double row_bytes = (3072 + 24 * 4) + 768 * 2 + 768 * 2 + (384 + 3 * 4) + (384 + 3 * 4) + 3072 * 2 + 4;
  // Buffers: ceil((32 + 256 x 127) / 128) x 128 = 32,640 rows; ceil((32 + 256 x 63) / 64) x 64 = 16,192.
  CHECK(t128.roofline_s - t64.roofline_s == Approx(62 * (32640.0 - 16192.0) * row_bytes / dg.hbm_bw));
  CHECK(t128.roofline_s > 5e-3);  // ~430 MB a layer
  // Counted as activation time: the measured share is the Triton step's.
  CHECK(dg.step.profile_s == Approx(triton.step.profile_s));
  CHECK(dg.step.activations_s - triton.step.activations_s == Approx(t128.roofline_s));
  // EP4: 64 experts a GPU, a quarter of the padding rows, each at the whole intermediate (1,536)
  const Priced ep4 = decode("tp4-ep4", "deep_gemm");
  const Term& ep = ep4.step[Op::kExpertGemm];
  CHECK(ep.roofline_s > 0);
  CHECK(ep.roofline_s < 0.6 * t128.roofline_s);
  // B200: vLLM's DeepGEMM MoE there is not modelled (no contiguous_align): the profile says it has no table
  auto b200 = load_op_profile("b200-vllm");
  CHECK_FALSE(select_moe_backend(*b200, "deep_gemm", "test"));
  CHECK(b200->param(TimingParam::kMoeContiguousAlign) == 0);
  auto h100 = load_op_profile("h100-vllm");
  REQUIRE(select_moe_backend(*h100, "deep_gemm", "test"));
  CHECK(h100->param(TimingParam::kMoeContiguousAlign) == 128);
  CHECK_THROWS_AS(apply_profile_sets(*h100, "moe_contiguous_align=0.5"), InputError);
}

// Issue 44: on H200 vLLM's default MXFP4 MoE is the OpenAI triton_kernels one (get_mxfp4_backend on SM90);
// VLLM_MXFP4_USE_MARLIN=1, as InferenceX's 2026 gpt-oss H200 runs set it, runs Marlin's MXFP4 MoE:
// `--moe-backend marlin` prices it from the marlin table's w4a16_mxfp4 rows (its own format, not derived).
// H100 the same since 2026-12-07 (one SM90 selection; h100-vllm's rows of its own GPU, before which MXFP4 and
// INT4 experts there were priced from BF16 rows by bytes and rate, derived).
TEST_CASE("issue 44: --moe-backend marlin prices gpt-oss MXFP4 experts on H200 from Marlin's MXFP4 rows",
          "[op_profile][weight_format][moe_backend]") {
  for (const auto& [profile, hardware] : {std::pair{"h200-vllm", "h200"}, std::pair{"h100-vllm", "h100"}}) {
    CAPTURE(profile);
    const ModelConfig oss = model_preset("gpt-oss-120b");
    const ExpertsPriced triton = experts_priced(oss, profile, hardware, "tp2", "");
    const ExpertsPriced marlin = experts_priced(oss, profile, hardware, "tp2", "marlin");
    CHECK(triton.rows.rows == "w4a16_mxfp4");
    CHECK(marlin.rows.rows == "w4a16_mxfp4");
    CHECK_FALSE(triton.rows.derived);
    CHECK_FALSE(marlin.rows.derived);
    CHECK(marlin.decode_s != triton.decode_s);
    CHECK(marlin.prefill_s != triton.prefill_s);
    // Kimi-K2.5's INT4 experts: Marlin's INT4 rows whatever the MXFP4 backend (the marlin table holds none).
    const ModelConfig kimi =
        load_hf_config(std::string(TOKENLINE_MODEL_TEST_DATA) + "/hf/kimi-k2.5/config.json");
    const ExpertsPriced k0 = experts_priced(kimi, profile, hardware, "tp8", "");
    const ExpertsPriced k1 = experts_priced(kimi, profile, hardware, "tp8", "marlin");
    CHECK(k0.rows.rows == "int4_wo");
    CHECK_FALSE(k0.rows.derived);
    CHECK(k1.decode_s == k0.decode_s);
  }
}

// Issue 44: block-FP8 experts on B200 vLLM run FlashInfer's TensorRT-LLM MoE by default (oracle/fp8.py);
// VLLM_USE_FLASHINFER_MOE_FP8=0 (MiniMax-M2.5's 0.17.0 runs) leaves Triton: --moe-backend triton swaps the
// block-FP8 rows only, the NVFP4 ones stay.
TEST_CASE("issue 44: --moe-backend replaces the MoE rows of the formats its table holds, and only those",
          "[op_profile][weight_format][moe_backend]") {
  auto count = [](const OpProfile& p, std::string_view dtype) {
    const ProfileTable& t = p.table(ProfileTableKind::kMoe);
    int64_t n = 0;
    for (size_t i = 0; i < t.rows(); ++i) n += t.text_at(i, 0) == dtype;
    return n;
  };
  auto p = load_op_profile("b200-vllm");
  CHECK(p->moe_backend == "auto");
  const int64_t nvfp4 = count(*p, "nvfp4"), fp8 = count(*p, "fp8_block"), bf16 = count(*p, "bfloat16");
  REQUIRE(nvfp4 > 0);
  REQUIRE(fp8 > 0);
  CHECK(select_moe_backend(*p, "triton", "--moe-backend"));
  CHECK(p->moe_backend == "triton");
  CHECK(count(*p, "nvfp4") == nvfp4);
  CHECK(count(*p, "bfloat16") == bf16);
  CHECK(count(*p, "fp8_block") != fp8);
  CHECK(count(*p, "fp8_block") > 0);

  const ModelConfig minimax =
      load_hf_config(std::string(TOKENLINE_MODEL_TEST_DATA) + "/hf/minimax-m2.5/config.json");
  const ExpertsPriced fi = experts_priced(minimax, "b200-vllm", "b200", "tp4", "");
  const ExpertsPriced tr = experts_priced(minimax, "b200-vllm", "b200", "tp4", "triton");
  CHECK(fi.rows.rows == "fp8_block");
  CHECK(tr.rows.rows == "fp8_block");
  CHECK(fi.decode_s != tr.decode_s);

  // The default's own name: unchanged. A backend the profile has no table of: false, unchanged.
  auto h = load_op_profile("h200-vllm");
  const int64_t rows = int64_t(h->table(ProfileTableKind::kMoe).rows());
  CHECK(select_moe_backend(*h, "auto", "--moe-backend"));
  CHECK_FALSE(select_moe_backend(*h, "flashinfer_trtllm", "--moe-backend"));
  CHECK(int64_t(h->table(ProfileTableKind::kMoe).rows()) == rows);
  // Not one of vLLM's backends, or not a vLLM profile: the flag is named.
  CHECK_THROWS_AS(select_moe_backend(*h, "flashinfer", "--moe-backend"), InputError);
  auto s = load_op_profile("h200-sglang");
  CHECK_THROWS_AS(select_moe_backend(*s, "triton", "--moe-backend"), InputError);
}

// Issue 44: the vLLM profiles' MoE tables cover the formats and shapes the published vLLM runs need, each
// table of another backend loads, and a profile's other formats keep their rows.
TEST_CASE("issue 44: the vLLM profiles' MoE rows cover each format's kernel and layout",
          "[op_profile][weight_format][moe_backend]") {
  auto has = [](const ProfileTable& t, std::string_view dtype, double hidden, double experts, double tp) {
    for (size_t i = 0; i < t.rows(); ++i)
      if (t.text_at(i, 0) == dtype && t.at(i, 1) == hidden && t.at(i, 4) == experts && t.at(i, 5) == tp)
        return true;
    return false;
  };
  for (const char* name : {"h200-vllm", "b200-vllm", "h100-vllm"}) {
    CAPTURE(name);
    auto p = load_op_profile(name);
    const ProfileTable& moe = p->table(ProfileTableKind::kMoe);
    for (double tp : {1, 2, 4, 8}) CHECK(has(moe, "w4a16_mxfp4", 2880, 128, tp));  // gpt-oss-120b
    for (double tp : {1, 2, 4}) CHECK(has(moe, "fp8_block", 3072, 256, tp));       // MiniMax-M2.5 (EP 8: 1)
    CHECK(has(moe, "int4_wo", 7168, 384, 1));                                      // Kimi-K2.5
    CHECK(has(moe, "fp8_block", 4096, 128, 1));                                    // Qwen3-235B
    CHECK(has(moe, "bfloat16", 7168, 256, 1));                                     // DeepSeek-V3
    REQUIRE_FALSE(p->moe_backend_tables.empty());
    for (const auto& [backend, other] : p->moe_backend_tables) {
      CAPTURE(backend);
      CHECK_FALSE(other.empty());
    }
  }
  auto backends = [](const char* name) {
    const auto profile = load_op_profile(name);
    std::vector<std::string> out;
    for (const auto& [backend, table] : profile->moe_backend_tables) out.push_back(backend);
    return out;
  };
  CHECK(backends("b200-vllm") == std::vector<std::string>{"flashinfer_trtllm", "triton"});
  CHECK(backends("h200-vllm") == std::vector<std::string>{"marlin"});
  CHECK(backends("h100-vllm") == std::vector<std::string>{"marlin"});
}

}  // namespace tokenline

namespace tokenline {
namespace {

// The loaded latency (ms) of each MLA decode row of `profile`, by (kv_dtype, heads, batch, keys).
struct MlaKey {
  std::string kv;
  double heads, batch, keys;
  bool operator<(const MlaKey& o) const {
    return std::tie(kv, heads, batch, keys) < std::tie(o.kv, o.heads, o.batch, o.keys);
  }
};
std::map<MlaKey, double> mla_decode_rows(const char* profile) {
  const auto p = load_op_profile(profile);
  const ProfileTable& t = p->table(ProfileTableKind::kMlaDecode);
  std::map<MlaKey, double> rows;
  for (size_t r = 0; r < t.rows(); ++r)
    rows[{std::string(t.text_at(r, 0)), t.at(r, 0), t.at(r, 1), t.at(r, 2)}] = t.at(r, 3);
  return rows;
}

// Kimi-K2.5 (61 MLA layers, 64 heads: 8 a GPU at TP8, BF16 KV as vLLM's --kv-cache-dtype auto) decoding
// `batch` requests of `context` cached tokens: the step's MLA attention (s), priced by `profile`.
double kimi_mla_decode_s(const char* profile, const char* hardware, int64_t batch, int64_t context) {
  CostOptions o;
  o.profile = load_op_profile(profile);
  const CostModel cm =
      make_cost_model(load_hf_config(std::string(TOKENLINE_MODEL_TEST_DATA) + "/hf/kimi-k2.5/config.json"),
                      parse_parallel("tp8", "test"), KvLayout::kBf16, load_hardware(hardware), o);
  const Term t = decode_step(cm, batch, context)[Op::kSparseMla];
  REQUIRE(t.source == TermSource::kProfile);
  return t.time_s;
}

}  // namespace

// Issue 44 (Kimi-K2.5 INT4 on H200 vLLM, TPOT over-predicted 1.07-1.68x): vLLM 0.14.0's mla_decode rows time
// one eager call of the MLA impl's forward (aiconfigurator collector/vllm/collect_mla.py at f306d865e: 3
// warm-ups, 6 calls between two CUDA events, no CUDA graph), whose KV write, W_UK BMM, FlashAttention-3 MLA
// kernel and W_UV BMM are launched from Python per call: 0.14-0.19 ms at 8 heads (10th-90th percentile of the
// rows at batch <= 256, context <= 4,096), where SGLang 0.5.9's graph-timed rows of the same kernel take
// 0.012-0.09 ms up to batch 64. vLLM runs a uniform decode batch in one full CUDA graph
// (FlashAttnMLAMetadataBuilder: UNIFORM_BATCH; metadata built once a step for all layers) and the BMMs are
// priced apart, so scripts/build-profile writes each vLLM 0.14.0 row as the lower of vLLM's and SGLang's
// measurement of the shape (build_mla gives the evidence). Before it, h200-vllm priced Kimi's 8 x 4,096-key
// decode attention at 61 x 0.143 ms = 8.7 ms; SGLang's row is 0.024 ms.
TEST_CASE(
    "issue 44: the vLLM 0.14.0 MLA decode rows are no slower than SGLang's graph-timed rows of the shape",
    "[op_profile][issue44]") {
  for (const char* hw : {"h200", "h100"}) {
    const std::map<MlaKey, double> vllm = mla_decode_rows((std::string(hw) + "-vllm").c_str());
    const std::map<MlaKey, double> sglang = mla_decode_rows((std::string(hw) + "-sglang").c_str());
    int shared = 0;
    for (const auto& [key, ms] : sglang) {
      const auto it = vllm.find(key);
      if (it == vllm.end()) continue;
      ++shared;
      INFO(hw << " " << key.kv << " heads " << key.heads << " batch " << key.batch << " keys " << key.keys);
      CHECK(it->second <= ms);
    }
    CHECK(shared == int(sglang.size()));  // every SGLang shape is one vLLM measured too
  }
}

TEST_CASE("issue 44: h200-vllm prices Kimi-K2.5's MLA decode attention at the graph-timed kernel rows",
          "[op_profile][issue44]") {
  // The expected time from the rows: 61 layers x SGLang's FlashAttention-3 row (BF16 KV, 8 heads, batch 8,
  // 4,096 keys), which the rule makes h200-vllm's row of that shape.
  const std::map<MlaKey, double> sglang = mla_decode_rows("h200-sglang");
  const double row_ms = sglang.at({"bfloat16", 8, 8, 4096});
  CHECK(mla_decode_rows("h200-vllm").at({"bfloat16", 8, 8, 4096}) == row_ms);
  CHECK(kimi_mla_decode_s("h200-vllm", "h200", 8, 4095) == Approx(61 * row_ms * 1e-3).epsilon(0.01));
  // At any batch and context both profiles now price the step's attention from the same rows.
  for (const auto& [batch, context] :
       std::vector<std::pair<int64_t, int64_t>>{{1, 1023}, {64, 2047}, {256, 4095}, {16, 9000}}) {
    INFO("batch " << batch << " context " << context);
    CHECK(kimi_mla_decode_s("h200-vllm", "h200", batch, context) ==
          Approx(kimi_mla_decode_s("h200-sglang", "h200", batch, context)).epsilon(1e-9));
  }
}

}  // namespace tokenline

namespace tokenline {

// b300-trtllm's NVFP4 MoE rows time CUTLASS's NVFP4 kernel (engine.moe_backend.formats); aiconfigurator times
// TensorRT-LLM-gen's (the TRTLLM backend) on SM100 only. Under --moe-backend TRTLLM the CUTLASS rows leave
// the table and NVFP4 experts are priced as a format without rows (from the BF16 rows by bytes and rate), as
// b200-trtllm prices them; CUTLASS, the default, keeps them. On the B200 NVFP4 rows priced by b300-trtllm
// transferred, the CUTLASS rows read 1.8x the measured TPOT at 4-8 clients (docs/validation.md). This fails
// if the TRTLLM backend is priced by CUTLASS's rows again, or if CUTLASS loses them.
TEST_CASE("TensorRT-LLM's TRTLLM MoE backend does not price NVFP4 experts by CUTLASS's NVFP4 rows",
          "[op_profile][weight_format][moe_backend]") {
  const std::string hf = std::string(TOKENLINE_MODEL_TEST_DATA) + "/hf/";
  const ModelConfig ds = load_hf_config(hf + "deepseek-v3.1-nvfp4/config.json");
  const auto priced = [&](const char* profile, const std::string& backend, bool* selected = nullptr) {
    CostOptions o;
    auto p = load_op_profile(profile);
    const bool s = select_moe_backend(*p, backend, "test");
    if (selected != nullptr) *selected = s;
    o.profile = std::move(p);
    return make_cost_model(ds, parse_parallel("tp8", "test"), KvLayout::kFp8E4m3, load_hardware("b300"), o);
  };
  const CostModel cutlass = priced("b300-trtllm", "CUTLASS");
  CHECK(rows_of(cutlass, WeightGroup::kRoutedExperts).rows == "nvfp4");
  CHECK_FALSE(rows_of(cutlass, WeightGroup::kRoutedExperts).derived);
  bool selected = true;
  const CostModel trtllm = priced("b300-trtllm", "TRTLLM", &selected);
  CHECK_FALSE(selected);  // no table of its own: the moe table prices the rest
  CHECK(rows_of(trtllm, WeightGroup::kRoutedExperts).rows != "nvfp4");
  CHECK(rows_of(trtllm, WeightGroup::kRoutedExperts).derived);
  // at 4 requests the CUTLASS NVFP4 kernel is the slow one (its rows exceed the BF16 kernel's at 4 tokens)
  CHECK(decode_step(trtllm, 4, 1023)[Op::kExpertGemm].time_s <
        0.7 * decode_step(cutlass, 4, 1023)[Op::kExpertGemm].time_s);
  // formats the backend has no rows of but that time no other backend's kernel keep their rows: BF16
  // attention
  CHECK(rows_of(trtllm, WeightGroup::kAttention).rows == rows_of(cutlass, WeightGroup::kAttention).rows);
}

}  // namespace tokenline
