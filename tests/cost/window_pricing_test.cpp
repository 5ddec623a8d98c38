// Window layers priced per layer kind (docs/layers.md): the window_attention row reads at most W keys, the
// full layers' sparse_mla row is what a full-attention model's would be for those layers, and the KV pools
// are split as each engine splits them.
#include <catch2/catch.hpp>
#include <vector>

#include "cost/memory.h"
#include "cost/op_profile.h"
#include "cost/step_cost.h"
#include "topologies/hardware_loader.h"

using namespace tokenline;

namespace {

CostModel cm_of(const ModelConfig& m, const char* parallel, CostOptions o = {}) {
  return make_cost_model(m, parse_parallel(parallel, "test"), KvLayout::kBf16, load_hardware("h200"), o);
}

// gpt-oss-120b with every layer full: what its sparse_mla row would be without windows.
ModelConfig all_full(ModelConfig m) {
  m.mixers.clear();
  m.window_tokens = 0;
  return m;
}

}  // namespace

TEST_CASE("A Llama ledger has no window row, gpt-oss has both, 18 layers each", "[step_cost][window]") {
  const StepCost llama = decode_step(cm_of(model_preset("llama-3.1-8b"), "tp1"), 8, 4096);
  CHECK(llama[Op::kWindowAttn].count == 0);
  CHECK(llama[Op::kSparseMla].layers == 32);
  const StepCost oss = decode_step(cm_of(model_preset("gpt-oss-120b"), "tp8"), 8, 4096);
  CHECK(oss[Op::kWindowAttn].layers == 18);
  CHECK(oss[Op::kSparseMla].layers == 18);
  CHECK(op_name(Op::kWindowAttn) == "window_attention");
}

TEST_CASE("Window layers read at most W keys, full layers are priced as before", "[step_cost][window]") {
  const ModelConfig m = model_preset("gpt-oss-120b");
  const CostModel cm = cm_of(m, "tp8");
  const CostModel full = cm_of(all_full(m), "tp8");
  // gpt-oss-120b at TP8, BF16 KV: 8 KV heads x 64 dims x K and V x 2 B = 2,048 B per token per layer; one
  // head per GPU, so a GPU reads 256 B per key per layer.
  CHECK(cm.kv_bytes_token_layer == 2048);
  for (const int64_t context : {1000, 100000}) {
    const StepCost s = decode_step(cm, 16, context);
    const StepCost f = decode_step(full, 16, context);
    // The window row: 16 requests x 128 keys x 18 layers x 2,048 B (the rank's bytes), whatever the context.
    CHECK(s[Op::kWindowAttn].kv_bytes == Approx(16.0 * 128 * 18 * 2048));
    // The full row: the all-full model's bytes for half its layers.
    CHECK(s[Op::kSparseMla].kv_bytes == Approx(f[Op::kSparseMla].kv_bytes / 2));
    CHECK(s.bytes.kv_read == Approx(s[Op::kSparseMla].kv_bytes + s[Op::kWindowAttn].kv_bytes));
    // Everything but attention is the same model.
    CHECK(s[Op::kExpertGemm].weight_bytes == f[Op::kExpertGemm].weight_bytes);
    CHECK(s[Op::kNormRopeKvWrite].kv_bytes == f[Op::kNormRopeKvWrite].kv_bytes);  // every layer writes
  }
  // A 4,096-token prefill from empty: a window layer's causal pairs are 128 x 129 / 2 + (4096 - 128) x 128;
  // attention FLOPs per pair 4 x 64 heads x 64 dims, plus the sinks' 4 per (token, head); over 18 layers.
  const StepCost p = prefill_step(cm, 4096, 0, true);
  const double pairs = 128.0 * 129 / 2 + (4096.0 - 128) * 128;
  CHECK(p[Op::kWindowAttn].rank_flops == Approx(18 * (pairs * 4 * 64 * 64 + 4096.0 * 64 * 4)));
  const StepCost pf = prefill_step(full, 4096, 0, true);
  CHECK(p[Op::kSparseMla].rank_flops == Approx(pf[Op::kSparseMla].rank_flops / 2));
}

TEST_CASE("Chunked layers attend within their chunk: (p mod W) + 1 keys", "[step_cost][window]") {
  ModelConfig m = model_preset("gpt-oss-120b");
  for (MixerKind& k : m.mixers)
    if (k == MixerKind::kSlidingWindow) k = MixerKind::kChunkedAttention;
  m.window_tokens = 8192;
  const CostModel cm = cm_of(m, "tp8");
  CHECK(cm.chunked_window);
  // Position 10,000 (context 10,000): its chunk began at 8,192, so 1,809 keys.
  const StepCost s = decode_step(cm, 1, 10000);
  CHECK(s[Op::kWindowAttn].kv_bytes == Approx(1809.0 * 18 * 2048));
  // A prefill chunk of 8,192 from 4,096: 4,096 positions end chunk 0 (4,097 .. 8,192 keys), 4,096 start
  // chunk 1 (1 .. 4,096 keys).
  const StepCost p = prefill_step(cm, 8192, 4096, false);
  const double pairs = (4097.0 + 8192) * 4096 / 2 + (1.0 + 4096) * 4096 / 2;
  CHECK(p[Op::kWindowAttn].rank_flops == Approx(18 * (pairs * 4 * 64 * 64 + 8192.0 * 64 * 4)));
}

TEST_CASE("A measured profile prices window layers at min(ctx, W)", "[step_cost][window][profile]") {
  CostOptions o;
  o.profile = load_op_profile("h200-vllm");
  const CostModel cm = cm_of(model_preset("gpt-oss-120b"), "tp8", o);
  const StepCost near = decode_step(cm, 16, 1000);
  const StepCost far = decode_step(cm, 16, 100000);
  CHECK(near[Op::kWindowAttn].source == TermSource::kProfile);
  CHECK(near[Op::kWindowAttn].time_s == Approx(far[Op::kWindowAttn].time_s));
  CHECK(far[Op::kSparseMla].time_s > 2 * near[Op::kSparseMla].time_s);
  // The window row at 100K is the full row at the window's own context.
  CHECK(far[Op::kWindowAttn].time_s == Approx(decode_step(cm, 16, 127)[Op::kSparseMla].time_s));
}

TEST_CASE("Window KV pools: SGLang's ratio split, vLLM's shared pool", "[memory][window]") {
  const CostModel cm = cm_of(model_preset("gpt-oss-120b"), "tp8");
  const KvTokenBytes t = kv_bytes_per_token_per_gpu(cm, KvPlacement::kPerTpRank);
  CHECK(t.main == 18 * 256);  // full layers, one KV head per GPU
  CHECK(t.window == 18 * 256);
  const KvCapacity sglang = kv_capacity(cm, sglang_behavior(), 131072);
  CHECK(sglang.window_bytes_per_token == 18 * 256);
  // full x (full bytes + 0.8 x window bytes) = free; window = 0.8 x full (model_runner.py's split).
  CHECK(sglang.window_tokens_per_rank == int64_t(double(sglang.tokens_per_rank) * 0.8));
  CHECK(double(sglang.tokens_per_rank) * (t.main + 0.8 * t.window) ==
        Approx(sglang.free_bytes).epsilon(1e-6));
  const KvCapacity vllm = kv_capacity(cm, vllm_behavior(), 131072, 64);
  // Set apart: max_num_seqs 1,024 requests x (128 / 64 + 2) pages of 64 tokens (the window and the page
  // a step's first query starts in), plus two steps' prefill chunks held beside their windows
  // (max_num_batched_tokens 8,192: 2 x 128 pages); the rest full.
  constexpr int64_t kWindowPages = 1024 * 4 + 2 * 8192 / 64;
  CHECK(vllm.window_tokens_per_rank == kWindowPages * 64);
  CHECK(vllm.window_pages_per_rank == kWindowPages);
  CHECK(double(vllm.tokens_per_rank) * t.main + double(kWindowPages) * 64 * t.window ==
        Approx(vllm.free_bytes).epsilon(1e-6));
  // A Llama has no window pool and its capacity is as before.
  const CostModel llama = cm_of(model_preset("llama-3.1-8b"), "tp1");
  const KvCapacity l = kv_capacity(llama, vllm_behavior(), 131072);
  CHECK(l.window_pages_per_rank == 0);
  CHECK(l.tokens_per_rank == int64_t(l.free_bytes / l.bytes_per_token));
  // PD hand-off: a window layer sends its last W tokens only.
  CHECK(pd_transfer(cm, 100000).kv_bytes == Approx(2048.0 * (18 * 100000 + 18 * 128)));
}
