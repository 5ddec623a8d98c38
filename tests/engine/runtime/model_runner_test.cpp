#include "engine/runtime/model_runner.h"

#include <catch2/catch.hpp>
#include <filesystem>

#include "engine/runtime/byte_tokenizer.h"
#include "tests/engine/runtime/fake_clock.h"

using namespace tokenline;

namespace {

constexpr int32_t kPageTokens = 16;
constexpr int64_t kPages = 32;

ModelRunner make_runner(ModelWeights weights, Clock& clock) {
  return ModelRunner(load_model_shape("glm-5.3-tiny"), std::move(weights),
                     RunnerConfig{.dp_ranks = 1, .total_pages = kPages, .page_tokens = kPageTokens}, clock);
}

// Prefills a 40-token prompt in one step on pages {5, 2, 9}; returns the last token's logits.
std::vector<float> prefill_logits(ModelRunner& runner, int64_t chunk) {
  const std::vector<int32_t> prompt =
      ByteTokenizer().encode("the quick brown fox jumps over the lazy dog", true);
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
    runner.set_step_pages({{{5, 2, 9}}});
    (void)runner.execute(step);
  }
  return runner.last_logits(0);
}

}  // namespace

TEST_CASE("a random checkpoint written and read back gives identical logits through the runner") {
  const ModelShape shape = load_model_shape("glm-5.3-tiny");
  const std::string path =
      (std::filesystem::temp_directory_path() / "tokenline_runner_roundtrip.safetensors").string();
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
  runner.set_step_pages({{{0}}});
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
