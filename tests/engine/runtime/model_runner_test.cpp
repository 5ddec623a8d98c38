#include "engine/runtime/model_runner.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <string_view>

#include "engine/runtime/cuda_devices.h"
#include "tests/engine/runtime/fake_clock.h"

using namespace tokenline;

namespace {

// Fills each rank's page table (CSR) from [rank][entry] page id lists.
void set_pages(StepBatches& step, const std::vector<std::vector<std::vector<int32_t>>>& pages) {
  step.pages.resize(pages.size());
  for (size_t r = 0; r < pages.size(); ++r) {
    BatchPages& t = step.pages[r];
    t.indptr.assign(1, 0);
    t.indices.clear();
    for (const std::vector<int32_t>& entry : pages[r]) {
      t.indices.insert(t.indices.end(), entry.begin(), entry.end());
      t.indptr.push_back(static_cast<int32_t>(t.indices.size()));
    }
  }
}

constexpr int32_t kPageTokens = 16;
constexpr int64_t kPages = 32;

// A prompt's token ids as serve/'s ByteTokenizer gives them (the engine has no tokenizer): BOS 256, then
// one id per byte.
std::vector<int32_t> byte_prompt(std::string_view text, bool add_bos) {
  std::vector<int32_t> ids;
  if (add_bos) ids.push_back(256);
  for (char c : text) ids.push_back(static_cast<int32_t>(static_cast<unsigned char>(c)));
  return ids;
}

ModelRunner make_runner(ModelWeights weights, Clock& clock) {
  return ModelRunner(load_model_shape("glm-5.3-tiny"), weights,
                     RunnerConfig{.dp_ranks = 1, .total_pages = kPages, .page_tokens = kPageTokens}, clock);
}

// Prefills a 40-token prompt in one step on pages {5, 2, 9}; returns the last token's logits.
std::vector<float> prefill_logits(ModelRunner& runner, int64_t chunk) {
  const std::vector<int32_t> prompt = byte_prompt("the quick brown fox jumps over the lazy dog", true);
  runner.set_prompt(1, prompt);
  const auto n = static_cast<int64_t>(prompt.size());
  for (int64_t done = 0; done < n; done += chunk) {
    const int64_t take = std::min(chunk, n - done);
    StepBatches step;
    step.ranks.push_back(Batch{.rank = 0,
                               .entries = {BatchEntry{.id = 1,
                                                      .phase = Phase::kPrefill,
                                                      .new_tokens = take,
                                                      .context_tokens = done,
                                                      .last_chunk = done + take == n}}});
    set_pages(step, {{{5, 2, 9}}});
    (void)runner.execute(step);
  }
  return runner.last_logits(0);
}

}  // namespace

TEST_CASE("a random checkpoint written and read back gives identical logits through the runner") {
  const ModelShape shape = load_model_shape("glm-5.3-tiny");
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("tokenline_runner_roundtrip-" + std::to_string(::getpid()) + ".safetensors"))
                               .string();
  ModelWeights::random(shape, 11).save(path);
  test::FakeClock clock(1e-6);
  ModelRunner fresh = make_runner(ModelWeights::random(shape, 11), clock);
  ModelRunner loaded = make_runner(ModelWeights::load(shape, path), clock);
  ModelRunner other = make_runner(ModelWeights::random(shape, 12), clock);
  const std::vector<float> a = prefill_logits(fresh, 64), b = prefill_logits(loaded, 64);
  REQUIRE(a.size() == static_cast<size_t>(shape.vocab));
  CHECK(a == b);
  CHECK(prefill_logits(other, 64) != a);
  std::filesystem::remove(path);
}

TEST_CASE("runner: a prefill in chunks over the paged cache gives the one-shot logits and sampled token") {
  const ModelShape shape = load_model_shape("glm-5.3-tiny");
  test::FakeClock clock(1e-6);
  ModelRunner whole = make_runner(ModelWeights::random(shape, 3), clock);
  ModelRunner chunked = make_runner(ModelWeights::random(shape, 3), clock);
  const std::vector<float> a = prefill_logits(whole, 64), b = prefill_logits(chunked, 7);
  double err = 0, ref = 0;
  for (size_t i = 0; i < a.size(); ++i) err += (a[i] - b[i]) * (a[i] - b[i]), ref += a[i] * a[i];
  INFO("NMSE " << err / ref);
  CHECK(err / ref < 1e-10);
  CHECK(whole.tokens(1)->back() == chunked.tokens(1)->back());
  CHECK(whole.tokens(1)->size() == 45);  // 44 prompt ids (BOS + 43 bytes) + the sampled one
}

TEST_CASE("runner: op spans carry the ledger's op names, back to back within the measured step") {
  const ModelShape shape = load_model_shape("glm-5.3-tiny");
  test::FakeClock clock(1e-6);
  ModelRunner runner = make_runner(ModelWeights::random(shape, 3), clock);
  runner.set_prompt(9, {1, 2, 3, 4, 5});
  StepBatches step;
  step.ranks.push_back(Batch{
      .rank = 0,
      .entries = {BatchEntry{
          .id = 9, .phase = Phase::kPrefill, .new_tokens = 5, .context_tokens = 0, .last_chunk = true}}});
  set_pages(step, {{{0}}});
  const StepOutcome out = runner.execute(step);
  std::vector<std::string> names;
  double end_s = 0;
  for (const OpSpan& op : out.ops) {
    names.push_back(op.name);
    CHECK(op.start_s >= end_s - 1e-12);
    end_s = op.start_s + op.duration_s;
  }
  const std::vector<std::string> want = {
      "embed",         "rmsnorm",    "a_proj", "norm_rope_kv_write", "q_b_proj", "indexer_score",
      "topk_select",   "sparse_mla", "o_proj", "dense_mlp",          "router",   "expert_gemm",
      "shared_expert", "lm_head",    "sample"};
  CHECK(names == want);
  CHECK(end_s <= out.duration_s + 1e-12);
  CHECK(out.duration_s > 0);
  CHECK(out.accepted_drafts.empty());
}

namespace {

double nmse(const std::vector<float>& got, const std::vector<float>& want) {
  double err = 0, ref = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    err += (static_cast<double>(got[i]) - want[i]) * (static_cast<double>(got[i]) - want[i]);
    ref += static_cast<double>(want[i]) * want[i];
  }
  return err / ref;
}

// Two requests (40- and 23-token prompts) prefilled in one step, then decoded twice; in a dp2 layout A
// goes to group 0 and B to group 1. Returns, per step, the logits of A's then B's sampling row.
struct TwoRequests {
  std::vector<std::vector<float>> logits;   // [step][2 * vocab]
  std::vector<std::string> span_names;      // the first step's spans ("name@rank/stream")
  std::vector<int32_t> a_tokens, b_tokens;  // everything sampled
};

BatchEntry entry(RequestId id, Phase phase, int64_t new_tokens, int64_t context) {
  return BatchEntry{
      .id = id, .phase = phase, .new_tokens = new_tokens, .context_tokens = context, .last_chunk = true};
}

TwoRequests run_two_requests(const RunnerConfig& config) {
  const ModelShape shape = load_model_shape("glm-5.3-tiny");
  test::FakeClock clock(1e-6);
  ModelRunner runner(shape, ModelWeights::random(shape, 5), config, clock);
  const std::vector<int32_t> a = byte_prompt("sharded forward passes sum to the same logits", true);
  const std::vector<int32_t> b = byte_prompt("every rank holds a slice", true);
  runner.set_prompt(1, a);
  runner.set_prompt(2, b);
  const auto na = static_cast<int64_t>(a.size()), nb = static_cast<int64_t>(b.size());
  const bool split = config.dp_ranks == 2;
  TwoRequests out;
  for (int step = 0; step < 3; ++step) {
    const Phase phase = step == 0 ? Phase::kPrefill : Phase::kDecode;
    const BatchEntry ea = entry(1, phase, step == 0 ? na : 1, step == 0 ? 0 : na + step - 1);
    const BatchEntry eb = entry(2, phase, step == 0 ? nb : 1, step == 0 ? 0 : nb + step - 1);
    StepBatches batches;
    if (split) {
      batches.ranks = {Batch{.rank = 0, .entries = {ea}}, Batch{.rank = 1, .entries = {eb}}};
      set_pages(batches, {{{3, 7, 5, 6}}, {{1, 4, 2}}});
    } else {
      batches.ranks = {Batch{.rank = 0, .entries = {ea, eb}}};
      set_pages(batches, {{{3, 7, 5, 6}, {1, 4, 2}}});
    }
    const StepOutcome outcome = runner.execute(batches);
    std::vector<float> logits = runner.last_logits(0);
    if (split) logits.insert(logits.end(), runner.last_logits(1).begin(), runner.last_logits(1).end());
    out.logits.push_back(std::move(logits));
    for (const OpSpan& op : outcome.ops) {
      if (step == 0) {
        out.span_names.push_back(std::string(op.name) + "@" + std::to_string(op.rank) +
                                 (op.stream == Stream::kComm ? "/comm" : "/compute"));
      }
    }
  }
  out.a_tokens = *runner.tokens(1);
  out.b_tokens = *runner.tokens(2);
  return out;
}

bool has(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

// Issue 7: a TP- and EP-sharded forward on the in-process communicator equals the unsharded one.
TEST_CASE("runner: TP and EP sharded forwards on the in-process communicator equal the unsharded one") {
  const RunnerConfig base{.total_pages = 8, .page_tokens = kPageTokens};
  const TwoRequests want = run_two_requests(base);
  struct Layout {
    const char* name;
    int32_t dp, tp, ep;
    std::vector<std::string> spans;  // spans the layout must show
  };
  const std::vector<Layout> layouts = {
      {"tp2", 1, 2, 1, {"attn_allreduce@0/comm", "mlp_allreduce@0/comm", "vocab_allgather@0/comm"}},
      {"tp4", 1, 4, 1, {"attn_allreduce@0/comm"}},
      {"tp2-ep2", 1, 2, 2, {"dispatch@0/comm", "combine@0/comm", "mlp_allreduce@0/comm"}},
      {"tp4-ep4", 1, 4, 4, {"dispatch@0/comm"}},
      {"dp2-ep2", 2, 1, 2, {"dispatch@0/comm", "dispatch@1/comm", "expert_gemm@1/compute"}},
      {"dp2-tp2-ep4", 2, 2, 4, {"attn_allreduce@1/comm", "combine@1/comm"}},
      {"dp2-tp2", 2, 2, 1, {"mlp_allreduce@1/comm"}},
  };
  for (const Layout& layout : layouts) {
    INFO("layout " << layout.name);
    RunnerConfig config = base;
    config.dp_ranks = layout.dp;
    config.tp = layout.tp;
    config.ep = layout.ep;
    REQUIRE(runner_layout_error(load_model_shape("glm-5.3-tiny"), config).empty());
    const TwoRequests got = run_two_requests(config);
    for (size_t step = 0; step < want.logits.size(); ++step) {
      INFO("step " << step << " NMSE " << nmse(got.logits[step], want.logits[step]));
      REQUIRE(got.logits[step].size() == want.logits[step].size());
      CHECK(nmse(got.logits[step], want.logits[step]) < 1e-10);
    }
    CHECK(got.a_tokens == want.a_tokens);
    CHECK(got.b_tokens == want.b_tokens);
    for (const std::string& span : layout.spans) {
      INFO("span " << span);
      CHECK(has(got.span_names, span));
    }
  }
  CHECK_FALSE(has(want.span_names, "attn_allreduce@0/comm"));  // one rank: no collectives
}

TEST_CASE("runner: under EP an idle attention group still serves its experts") {
  const ModelShape shape = load_model_shape("glm-5.3-tiny");
  test::FakeClock clock(1e-6);
  const RunnerConfig one{.total_pages = kPages, .page_tokens = kPageTokens};
  RunnerConfig dp2 = one;
  dp2.dp_ranks = 2;
  dp2.ep = 2;
  ModelRunner single(shape, ModelWeights::random(shape, 3), one, clock);
  ModelRunner spread(shape, ModelWeights::random(shape, 3), dp2, clock);
  // Group 1 has no requests; group 0's rows still need group 1's experts.
  const std::vector<float> want = prefill_logits(single, 64), got = prefill_logits(spread, 64);
  INFO("NMSE " << nmse(got, want));
  CHECK(nmse(got, want) < 1e-10);
}

TEST_CASE("runner: layouts the runner cannot split are named") {
  const ModelShape shape = load_model_shape("glm-5.3-tiny");  // 4 heads, 8 experts
  CHECK(runner_layout_error(shape, RunnerConfig{.tp = 3}).find("heads") != std::string::npos);
  CHECK(runner_layout_error(shape, RunnerConfig{.dp_ranks = 2, .tp = 2, .ep = 2}).find("every GPU rank") !=
        std::string::npos);
  CHECK(runner_layout_error(shape, RunnerConfig{.dp_ranks = 16, .ep = 16}).find("experts") !=
        std::string::npos);
  CHECK(runner_layout_error(shape, RunnerConfig{.dp_ranks = 2, .tp = 4, .ep = 8}).empty());
}

TEST_CASE("runner: the CUDA kernels give the CPU runner's logits (skips without a GPU)") {
  if (runtime_cuda_devices() <= 0) {
    WARN("SKIP: " << (runtime_cuda_devices() < 0 ? "a build without CUDA" : "no CUDA device")
                  << "; kernels/cuda/check-on-gpu.sh runs this on a GPU machine");
    return;
  }
  RunnerConfig cuda{.total_pages = 8, .page_tokens = kPageTokens, .kernels = runtime_cuda_kernels()};
  const TwoRequests want = run_two_requests(RunnerConfig{.total_pages = 8, .page_tokens = kPageTokens});
  const TwoRequests got = run_two_requests(cuda);
  for (size_t step = 0; step < want.logits.size(); ++step) {
    INFO("step " << step << " NMSE " << nmse(got.logits[step], want.logits[step]));
    REQUIRE(got.logits[step].size() == want.logits[step].size());
    CHECK(nmse(got.logits[step], want.logits[step]) < 1e-6);
  }
  CHECK(got.span_names == want.span_names);
}

namespace {

// Request 1: prefill of `prompt`, then decode steps; with MTP each decode verifies one draft (planted
// by `plant` when given) and advances by what it emitted, as the core's commit does.
struct Decoded {
  std::vector<int32_t> tokens;
  std::vector<int32_t> accepted;  // per decode step (MTP only)
  std::vector<std::string> ops;   // the last step's span names
};

Decoded decode_steps(int32_t mtp, int steps, const std::vector<std::vector<int32_t>>& plant = {},
                     int32_t tp = 1, int32_t ep = 1) {
  const ModelShape shape = load_model_shape("glm-5.3-tiny");
  test::FakeClock clock(1e-6);
  ModelRunner runner(
      shape, ModelWeights::random(shape, 5),
      RunnerConfig{.tp = tp, .ep = ep, .total_pages = 8, .page_tokens = kPageTokens, .mtp_draft_tokens = mtp},
      clock);
  const std::vector<int32_t> prompt = byte_prompt("speculative decoding is lossless", true);
  runner.set_prompt(1, prompt);
  Decoded out;
  int64_t context = 0;
  for (int step = 0; step <= steps; ++step) {
    const bool prefill = step == 0;
    const int64_t draft = prefill ? 0 : mtp;
    if (!prefill && static_cast<size_t>(step - 1) < plant.size()) runner.set_drafts(1, plant[step - 1]);
    StepBatches batches;
    batches.ranks.push_back(
        Batch{.rank = 0,
              .entries = {BatchEntry{.id = 1,
                                     .phase = prefill ? Phase::kPrefill : Phase::kDecode,
                                     .new_tokens = prefill ? static_cast<int64_t>(prompt.size()) : 1 + draft,
                                     .context_tokens = context,
                                     .draft_tokens = static_cast<int32_t>(draft),
                                     .last_chunk = true}}});
    set_pages(batches, {{{0, 1, 2, 3}}});
    const StepOutcome outcome = runner.execute(batches);
    const int64_t accepted = outcome.accepted_drafts.empty() ? 0 : outcome.accepted_drafts[0][0];
    if (!prefill && mtp > 0) out.accepted.push_back(static_cast<int32_t>(accepted));
    context += prefill ? static_cast<int64_t>(prompt.size()) : 1 + accepted;
    out.ops.clear();
    for (const OpSpan& op : outcome.ops) out.ops.push_back(op.name);
  }
  out.tokens = *runner.tokens(1);
  return out;
}

}  // namespace

TEST_CASE(
    "runner: greedy MTP drafts are verified losslessly - a right draft saves a step, a wrong one costs "
    "none") {
  const Decoded plain = decode_steps(0, 6);
  const size_t prompt = plain.tokens.size() - 7;  // 7 sampled: one by the prefill, one per decode
  const std::vector<int32_t> sampled(plain.tokens.begin() + static_cast<std::ptrdiff_t>(prompt),
                                     plain.tokens.end());
  // Decode 1 verifies sampled[1] (right: emits sampled[1], sampled[2]); decode 2 verifies a wrong token.
  const int32_t wrong = (sampled[4] + 1) % 512;
  const Decoded mtp = decode_steps(1, 3, {{sampled[1]}, {wrong}, {sampled[5]}});
  CHECK(mtp.accepted == std::vector<int32_t>{1, 0, 1});
  // Prefill 1 + decodes 2 + 1 + 2 tokens: the plain run's first 6 samples, in 4 steps instead of 6.
  REQUIRE(mtp.tokens.size() == prompt + 6);
  CHECK(std::equal(mtp.tokens.begin(), mtp.tokens.end(), plain.tokens.begin()));
  CHECK(std::find(mtp.ops.begin(), mtp.ops.end(), "mtp_draft") != mtp.ops.end());
  CHECK(std::find(plain.ops.begin(), plain.ops.end(), "mtp_draft") == plain.ops.end());
  // The MTP layer's own drafts (nothing planted) never change what is emitted, sharded or not.
  const Decoded own = decode_steps(1, 6);
  CHECK(std::equal(own.tokens.begin(), own.tokens.end(), plain.tokens.begin()));
  const Decoded sharded = decode_steps(1, 3, {{sampled[1]}, {wrong}, {sampled[5]}}, 2, 2);
  CHECK(sharded.tokens == mtp.tokens);
  CHECK(sharded.accepted == mtp.accepted);
}

TEST_CASE("runner: k = 2 chained drafts - both stand, the first only, or none, tokens are the plain run's") {
  const Decoded plain = decode_steps(0, 8);
  const size_t prompt = plain.tokens.size() - 9;  // 9 sampled: one by the prefill, one per decode
  const std::vector<int32_t> s(plain.tokens.begin() + static_cast<std::ptrdiff_t>(prompt),
                               plain.tokens.end());
  const int32_t wrong5 = (s[5] + 1) % 512, wrong6 = (s[6] + 1) % 512;
  // Decode 1 verifies [s1, s2] (both stand: emits s1 s2 s3), decode 2 [s4, wrong] (emits s4 s5), decode 3
  // [wrong, s7] (emits s6), decode 4 whatever the MTP layer chained itself.
  const Decoded mtp = decode_steps(2, 4, {{s[1], s[2]}, {s[4], wrong5}, {wrong6, s[7]}});
  REQUIRE(mtp.accepted.size() == 4);
  CHECK(std::vector<int32_t>(mtp.accepted.begin(), mtp.accepted.begin() + 3) ==
        std::vector<int32_t>{2, 1, 0});
  REQUIRE(mtp.tokens.size() >= prompt + 8);
  CHECK(std::equal(mtp.tokens.begin(), mtp.tokens.end(), plain.tokens.begin()));
  // The layer's own chained drafts (nothing planted), k = 3: still the plain run's tokens.
  const Decoded own = decode_steps(3, 4);
  CHECK(std::equal(own.tokens.begin(), own.tokens.end(), plain.tokens.begin()));
}
