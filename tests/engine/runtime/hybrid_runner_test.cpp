// The real engine on the GQA hybrids (gpt-oss-tiny: sliding-window + full layers; qwen3.5-tiny: Gated
// DeltaNet + full layers) through the shared core: window layers read the core's window pages, Gated
// DeltaNet layers keep their state in the core's state slots. A request's tokens must not depend on
// preemption (recompute from position 0 into a reset slot), on slot reuse, or on the run.
#include <catch2/catch.hpp>
#include <map>

#include "engine/core/instance_loop.h"
#include "engine/runtime/engine_loop.h"
#include "engine/runtime/model_runner.h"
#include "tests/engine/runtime/fake_clock.h"

using namespace tokenline;

namespace {

constexpr int32_t kPageTokens = 16;
constexpr int64_t kChunk = 64;

// 12 requests at time 0, prompts 40..62 tokens and 10..13 output tokens: every context outgrows
// gpt-oss-tiny's 32-token window.
std::vector<TimedRequest> workload() {
  std::vector<TimedRequest> out;
  for (int i = 0; i < 12; ++i) {
    TimedRequest t;
    t.arrival_s = 0;
    t.spec.id = i;
    t.spec.prompt_tokens = 40 + 2 * i;
    t.spec.output_tokens = 10 + i % 4;
    t.spec.block_tokens = kPageTokens;
    const int64_t blocks = (t.spec.prompt_tokens + kPageTokens - 1) / kPageTokens;
    for (int64_t b = 0; b < blocks; ++b) t.spec.block_hashes.push_back(10000 + 100 * i + b);
    out.push_back(t);
  }
  return out;
}

struct Run {
  std::map<RequestId, std::vector<int32_t>> tokens;
  std::vector<double> step_durations;
  int64_t preemptions = 0;
  InstanceCounters last;
};

struct Observer final : EngineObserver {
  const ModelRunner* runner = nullptr;
  Run* run = nullptr;
  void on_arrival(RequestId, double) override {}
  void on_preemption(RequestId, double, bool) override { ++run->preemptions; }
  void on_step(const StepPlan&, const StepOutcome& o, double, const InstanceCounters& c) override {
    run->step_durations.push_back(o.duration_s);
    run->last = c;
  }
  void on_record(const RequestRecord& r) override { run->tokens[r.id] = *runner->tokens(r.id); }
};

// The run's configuration as `tokenline run` makes it (cli/engine_job.cpp): as many window pages as main
// pages (never binding), holding a step's context window; a state slot per running request and no prefix
// cache.
Run generate(const std::string& model, int64_t pages, int64_t max_running) {
  const ModelShape shape = load_model_shape(model);
  const bool window = shape.mixer_layers(LayerMixer::kSlidingWindow) > 0;
  const bool linear = shape.mixer_layers(LayerMixer::kGatedDeltaNet) > 0;
  const int64_t window_pages = window ? pages : 0;
  const int64_t slots = linear ? max_running : 0;
  test::FakeClock clock(1e-5);
  ModelRunner runner(shape, ModelWeights::random(shape, 5),
                     RunnerConfig{.total_pages = pages,
                                  .page_tokens = kPageTokens,
                                  .window_pages = window_pages,
                                  .state_slots = slots},
                     clock);
  InstanceConfig c;
  c.scheduler.max_batch_tokens = kChunk;
  c.scheduler.max_running_requests = max_running;
  c.scheduler.max_context_tokens = shape.max_context_tokens;
  c.kv.page_tokens = kPageTokens;
  c.kv.total_pages = pages;
  c.kv.reservation = ReservationPolicy::kIncremental;
  if (window) {
    c.kv.window = {.window_tokens = shape.window_tokens,
                   .total_pages = window_pages,
                   .bytes_per_page = shape.window_kv_bytes_per_token * kPageTokens,
                   .hold_step_context = true};
  }
  c.kv.state_slots = slots;
  c.kv.prefix_cache = !linear;
  Instance instance(c);
  Run run;
  Observer observer;
  observer.runner = &runner;
  observer.run = &run;
  (void)run_engine_loop(instance, runner, clock, workload(), 9, observer);
  std::string why;
  CHECK(instance.check(&why));
  INFO(why);
  return run;
}

void check_same_tokens(const Run& a, const Run& b) {
  REQUIRE(a.tokens.size() == 12);
  REQUIRE(b.tokens.size() == 12);
  for (const auto& [id, tokens] : a.tokens) {
    INFO("request " << id);
    CHECK(tokens.size() > 40);
    CHECK(b.tokens.at(id) == tokens);
  }
}

// The same request alone, outside the core: its prompt prefilled in one step then decoded token by token,
// every window layer given every page of the request (the window mask alone limits what it reads) and
// slot 0 for the state. Returns prompt + `output` tokens.
std::vector<int32_t> alone(const std::string& model, std::vector<int32_t> prompt, int64_t output) {
  const ModelShape shape = load_model_shape(model);
  test::FakeClock clock(1e-5);
  constexpr int64_t kPages = 8;
  ModelRunner runner(
      shape, ModelWeights::random(shape, 5),
      RunnerConfig{
          .total_pages = kPages, .page_tokens = kPageTokens, .window_pages = kPages, .state_slots = 1},
      clock);
  const auto prompt_len = static_cast<int64_t>(prompt.size());
  runner.set_prompt(1, std::move(prompt));
  for (int64_t context = 0; context < prompt_len + output - 1;) {
    const bool prefill = context == 0;
    const int64_t n = prefill ? prompt_len : 1, need = (context + n + kPageTokens - 1) / kPageTokens;
    StepBatches step;
    step.ranks.push_back(Batch{.rank = 0,
                               .entries = {BatchEntry{.id = 1,
                                                      .phase = prefill ? Phase::kPrefill : Phase::kDecode,
                                                      .new_tokens = n,
                                                      .context_tokens = context,
                                                      .last_chunk = prefill}}});
    BatchPages pages;
    pages.indptr = {0, static_cast<int32_t>(need)};
    for (int32_t i = 0; i < need; ++i) pages.indices.push_back(i);
    if (shape.mixer_layers(LayerMixer::kSlidingWindow) > 0) {
      pages.window_indptr = pages.indptr;
      pages.window_indices = pages.indices;
      pages.window_first = {0};
    }
    if (shape.mixer_layers(LayerMixer::kGatedDeltaNet) > 0) pages.state_slots = {0};
    step.pages.push_back(pages);
    (void)runner.execute(step);
    context += n;
  }
  return *runner.tokens(1);
}

// Every request of `run` computed alone gives the run's tokens.
void check_alone(const std::string& model, const Run& run) {
  const std::vector<TimedRequest> arrivals = workload();
  REQUIRE(run.tokens.size() == arrivals.size());
  for (const TimedRequest& t : arrivals) {
    INFO("request " << t.spec.id);
    const std::vector<int32_t>& got = run.tokens.at(t.spec.id);
    REQUIRE(static_cast<int64_t>(got.size()) == t.spec.prompt_tokens + t.spec.output_tokens);
    const std::vector<int32_t> prompt(got.begin(), got.begin() + t.spec.prompt_tokens);
    CHECK(alone(model, prompt, t.spec.output_tokens) == got);
  }
}

}  // namespace

TEST_CASE("hybrid engine: each request through the core gives its tokens computed alone with every page") {
  for (const char* model : {"gpt-oss-tiny", "qwen3.5-tiny", "llama-tiny"}) {
    INFO(model);
    // 3 running at a time, 64-token chunks: prompts split over steps, windows move, slots are reused.
    check_alone(model, generate(model, 128, 3));
  }
}

TEST_CASE(
    "hybrid engine: gpt-oss-tiny on the core's window pages - preemption and batching change no token") {
  const Run roomy = generate("gpt-oss-tiny", 128, 16);
  const Run tight = generate("gpt-oss-tiny", 12, 16);   // 12 pages of 16 tokens: the burst preempts
  const Run narrow = generate("gpt-oss-tiny", 128, 3);  // 3 at a time: other batches, pages reused
  CHECK(roomy.preemptions == 0);
  CHECK(tight.preemptions > 0);
  CHECK(roomy.last.kv.window.dropped_pages > 0);  // pages left the window and went back
  CHECK(roomy.last.kv.window.total_pages > 0);
  check_same_tokens(roomy, tight);
  check_same_tokens(roomy, narrow);
}

TEST_CASE(
    "hybrid engine: qwen3.5-tiny's state in the core's slots - preemption and slot reuse change no token") {
  const Run roomy = generate("qwen3.5-tiny", 128, 16);
  const Run tight = generate("qwen3.5-tiny", 12, 16);
  const Run narrow = generate("qwen3.5-tiny", 128, 3);  // 3 slots for 12 requests: every slot reused
  CHECK(roomy.preemptions == 0);
  CHECK(tight.preemptions > 0);
  CHECK(narrow.last.kv.state_total_slots == 3);
  CHECK(roomy.last.kv.state_total_slots == 16);
  check_same_tokens(roomy, tight);
  check_same_tokens(roomy, narrow);
}

TEST_CASE("hybrid engine: the same run twice gives the same tokens and step times (fake clock)") {
  for (const char* model : {"gpt-oss-tiny", "qwen3.5-tiny"}) {
    INFO(model);
    const Run a = generate(model, 12, 16), b = generate(model, 12, 16);
    check_same_tokens(a, b);
    CHECK(a.step_durations == b.step_durations);
    CHECK(a.preemptions == b.preemptions);
  }
}

TEST_CASE("hybrid engine: the tiny hybrids' shapes and what the runner refuses for them") {
  const ModelShape oss = load_model_shape("gpt-oss-tiny");
  CHECK(oss.gqa);
  CHECK(oss.attention_sinks);
  CHECK(oss.mixer_layers(LayerMixer::kSlidingWindow) == 2);
  CHECK(oss.mixer(0) == LayerMixer::kSlidingWindow);
  CHECK(oss.mixer(1) == LayerMixer::kAttention);
  const ModelShape qwen = load_model_shape("qwen3.5-tiny");
  CHECK(qwen.mixer_layers(LayerMixer::kGatedDeltaNet) == 6);
  CHECK(qwen.mixer(3) == LayerMixer::kAttention);
  CHECK(qwen.mixer(7) == LayerMixer::kAttention);
  CHECK(qwen.attn_output_gate);
  CHECK(qwen.qk_norm);
  CHECK(runner_layout_error(oss, RunnerConfig{.tp = 2, .total_pages = 8, .window_pages = 8}).find("tp1") !=
        std::string::npos);
  CHECK(runner_layout_error(oss, RunnerConfig{.total_pages = 8}).find("window pages") != std::string::npos);
  CHECK(runner_layout_error(qwen, RunnerConfig{.total_pages = 8}).find("state slots") != std::string::npos);
  CHECK(runner_layout_error(qwen, RunnerConfig{.total_pages = 8, .state_slots = 4}).empty());
  // DeepSeek-V4: sim and ledger price its compressed attention; the runner has no kernel of it.
  CHECK_THROWS_WITH(
      load_model_shape(std::string(TOKENLINE_SOURCE_DIR) + "/tests/engine/model/data/hf/deepseek-v4-flash"),
      Catch::Contains("compressed attention") && Catch::Contains("'deepseek_v4'"));
  // Kimi Linear and Kimi-K3: sim and ledger price their KDA layers; the runner has no kernel of them.
  for (const char* kimi : {"kimi-linear-48b-a3b", "kimi-k3"}) {
    INFO(kimi);
    CHECK_THROWS_WITH(
        load_model_shape(std::string(TOKENLINE_SOURCE_DIR) + "/tests/engine/model/data/hf/" + kimi),
        Catch::Contains("no kernel of Kimi Delta Attention") && Catch::Contains("kda_scan") &&
            Catch::Contains("'kimi_linear'"));
  }
  // MiMo-V2-Flash and Gemma 4: full layers of their own KV heads or head width (and MiMo's values narrower
  // than its keys), which the runner's one GQA head shape does not hold.
  for (const char* model : {"mimo-v2-flash", "gemma-4-26b-a4b"}) {
    INFO(model);
    CHECK_THROWS_WITH(
        load_model_shape(std::string(TOKENLINE_SOURCE_DIR) + "/tests/engine/model/data/hf/" + model),
        Catch::Contains("full layers of their own head width or KV heads"));
  }
}
