#include "cost/step_cost.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "common/input_error.h"
#include "cost/op_profile.h"
#include "topologies/hardware_loader.h"

using namespace tokenline;

namespace {

CostModel glm(const char* parallel, CostOptions o = {}) {
  return make_cost_model(model_preset("glm-5.3"), parse_parallel(parallel, "test"), KvLayout::kFp8DsMla,
                         load_hardware("h200"), o);
}

double parts(const StepCost& s) {
  return s.compute_s + s.weights_s + s.kv_s + s.indexer_s + s.activations_s + s.comm_s + s.launch_s;
}

}  // namespace

TEST_CASE("The uniform decode step is step_cost over identical per-rank lists", "[step_cost]") {
  const CostModel cm = glm("dp8-ep8");
  const std::vector<SeqWork> seqs(32, SeqWork{1, 131072, false, false});
  std::vector<std::span<const SeqWork>> ranks(8, seqs);
  const StepCost a = step_cost(cm, ranks);
  const StepCost b = decode_step(cm, 32, 131072);
  CHECK(a.total_s == b.total_s);
  CHECK(a.flops() == b.flops());
  CHECK(a.tokens == 256);
  // The instance does 8 ranks' attention work; the busiest rank's share is 1/8 of it.
  CHECK(a[Op::kSparseMla].flops == Approx(8 * a[Op::kSparseMla].rank_flops));
}

TEST_CASE("Heterogeneous ranks: the step takes the busiest rank's time", "[step_cost]") {
  const CostModel cm = glm("dp8-ep8");
  const std::vector<SeqWork> light(4, SeqWork{1, 4096, false, false});
  const std::vector<SeqWork> heavy = {SeqWork{1, 500000, false, false}, SeqWork{8192, 200000, true, false},
                                      SeqWork{1, 1000, false, false}};
  const std::span<const SeqWork> ranks[3] = {light, heavy, light};
  const StepCost s = step_cost(cm, ranks);
  CHECK(s.busiest_rank == 1);
  CHECK(s.tokens == 4 + 8194 + 4);
  // The heavy rank alone costs at least as much attention time as the mixed step's busiest rank share.
  const StepCost alone = step_cost(cm, std::span<const SeqWork>(heavy));
  CHECK(s[Op::kIndexerScore].time_s == Approx(alone[Op::kIndexerScore].time_s));
  CHECK(s[Op::kIndexerScore].flops > alone[Op::kIndexerScore].flops);  // instance sums the light ranks too
  // Only the decoding sequences and none of the non-final prefill tokens reach the LM head.
  CHECK(s[Op::kVocabAllgather].bytes_each == Approx(2.0 * 154880 * 4));
  CHECK(parts(s) == Approx(s.total_s));
}

TEST_CASE("Decode cost grows with context through the indexer only, sparse KV reads stop at top-k",
          "[step_cost]") {
  const CostModel cm = glm("tp8");
  const StepCost short_ctx = decode_step(cm, 8, 4096);
  const StepCost long_ctx = decode_step(cm, 8, 500000);
  CHECK(long_ctx.bytes.indexer_read > 100 * short_ctx.bytes.indexer_read);
  CHECK(long_ctx.bytes.kv_read == short_ctx.bytes.kv_read);
  CHECK(decode_step(cm, 8, 1000).bytes.kv_read < short_ctx.bytes.kv_read);  // below top-k: every key
  CHECK(long_ctx.total_s > short_ctx.total_s);
  CHECK(long_ctx.bytes.weight_read == Approx(short_ctx.bytes.weight_read));
}

TEST_CASE("Prefill: only the last chunk computes logits and samples", "[step_cost]") {
  const CostModel cm = glm("tp8");
  const StepCost mid = prefill_step(cm, 4096, 8192, false);
  const StepCost last = prefill_step(cm, 4096, 8192, true);
  CHECK(mid[Op::kLmHead].count == 0);
  CHECK(mid[Op::kSample].count == 0);
  CHECK(last[Op::kLmHead].count == 1);
  CHECK(last[Op::kSample].flops > 0);
  CHECK(last.total_s > mid.total_s);
  // A chunk's KV write does not depend on its prefix; its indexer work does.
  const StepCost later = prefill_step(cm, 4096, 65536, false);
  CHECK(later.bytes.kv_write == mid.bytes.kv_write);
  CHECK(later[Op::kIndexerScore].flops > mid[Op::kIndexerScore].flops);
}

TEST_CASE("Achieved efficiencies make every step slower than the seed's ideal figures", "[step_cost]") {
  CostOptions ideal;
  ideal.ideal = true;
  const StepCost real = decode_step(glm("dp8-ep8"), 64, 65536);
  const StepCost best = decode_step(glm("dp8-ep8", ideal), 64, 65536);
  CHECK(real.total_s > best.total_s);
  CHECK(real.flops() == best.flops());
  CHECK(real.collective_bytes() == best.collective_bytes());
  CHECK(real.launch_s > 0);
}

TEST_CASE("An idle step costs nothing, MTP adds a draft term", "[step_cost]") {
  const CostModel cm = glm("tp8");
  const StepCost idle = step_cost(cm, std::span<const SeqWork>());
  CHECK(idle.total_s == 0);
  CHECK(idle.collective_count() == 0);
  CostOptions mtp;
  mtp.mtp = true;
  CHECK(decode_step(glm("tp8", mtp), 16, 8192)[Op::kMtpDraft].flops > 0);
  CHECK(decode_step(cm, 16, 8192)[Op::kMtpDraft].flops == 0);
}

TEST_CASE("k MTP drafts are k sequential passes over the draft layer's weights", "[step_cost]") {
  CostOptions o;
  o.mtp = true;
  const CostModel cm = glm("tp8", o);
  const std::vector<SeqWork> one(16, SeqWork{1, 8192, false, false});    // verify 1 token, draft 1
  const std::vector<SeqWork> three(16, SeqWork{3, 8192, false, false});  // verify 1 + 2 drafts, draft 2
  const StepCost a = step_cost(cm, one), b = step_cost(cm, three);
  CHECK(b[Op::kMtpDraft].weight_bytes == Approx(2 * a[Op::kMtpDraft].weight_bytes));
  CHECK(b[Op::kMtpDraft].count == 2 * a[Op::kMtpDraft].count);
  CHECK(b[Op::kMtpDraft].rank_flops == Approx(3 * a[Op::kMtpDraft].rank_flops));  // per decode token
  CHECK(b.total_s > a.total_s);
}

TEST_CASE("Dense GQA models cost attention over every cached key", "[step_cost]") {
  const CostModel cm = make_cost_model(model_preset("llama-3.1-8b"), parse_parallel("tp1", "t"),
                                       KvLayout::kBf16, load_hardware("h200"));
  const StepCost s = decode_step(cm, 4, 10000);
  CHECK(s.bytes.kv_read == 4.0 * 10001 * 4096 * 32);  // (L + 1) keys x 2 x 8 x 128 x 2 B x 32 layers
  CHECK(s[Op::kIndexerScore].count == 0);
  CHECK(s[Op::kDispatch].count == 0);
  CHECK(s.collective_count() == 0);  // one GPU
  // Every weight once except the embedding table, of which only the 4 looked-up rows are read.
  CHECK(s.bytes.weight_read == Approx((8.03e9 - 128256.0 * 4096) * 2).epsilon(0.01));
}

TEST_CASE("make_cost_model rejects layouts that do not fit the model", "[step_cost]") {
  CHECK_THROWS_WITH(make_cost_model(model_preset("llama-3.1-8b"), parse_parallel("tp1", "t"),
                                    KvLayout::kFp8DsMla, load_hardware("h200")),
                    Catch::Contains("--kv-layout"));
  CHECK_THROWS_WITH(glm("dp3-ep3"), Catch::Contains("ep3"));
}

TEST_CASE("Chunking a prompt does not change its indexer scoring or its KV writes", "[step_cost]") {
  // Causal (query, key) pairs and written tokens add up over chunks exactly; only the per-step weight
  // reads and launches repeat.
  const CostModel cm = glm("tp8");
  const StepCost whole = prefill_step(cm, 8192, 0, true);
  double idx_flops = 0, kv_write = 0, weights = 0;
  for (const ChunkCost& c : prefill_chunks(cm, 8192, 2048)) {
    idx_flops += c.cost[Op::kIndexerScore].flops;
    kv_write += c.cost.bytes.kv_write;
    weights += c.cost.bytes.weight_read;
  }
  CHECK(idx_flops == Approx(whole[Op::kIndexerScore].flops).epsilon(1e-12));
  CHECK(kv_write == Approx(whole.bytes.kv_write).epsilon(1e-12));
  CHECK(weights > 3 * whole.bytes.weight_read);
}

TEST_CASE("Collective groups follow the layout", "[step_cost]") {
  const Parallel dp = parse_parallel("dp4-tp2-ep8", "t");
  CHECK(collective_group(Op::kDispatch, dp) == 8);
  CHECK(collective_group(Op::kAttnAllreduce, dp) == 2);
  CHECK(collective_group(Op::kReduceScatter, dp) == 8);
  CHECK(collective_group(Op::kSparseMla, dp) == 0);
  for (int i = 0; i < kOpCount; ++i) CHECK(op_name(Op(i)) != "?");
}

TEST_CASE("find_op is op_name's inverse and refuses other names", "[step_cost]") {
  for (int i = 0; i < kOpCount; ++i) CHECK(find_op(op_name(Op(i))) == Op(i));
  CHECK(!find_op("attention"));
  CHECK(!find_op(""));
}

TEST_CASE("Issue 43: TensorRT-LLM's and vLLM's EP keep tokens on the TP ranks, DeepEP dispatches them",
          "[step_cost][trtllm]") {
  const ModelConfig ds = model_preset("deepseek-v3");  // 61 layers, 58 MoE, hidden 7,168, top-8
  const Hardware h200 = load_hardware("h200");
  auto priced_by = [&](const char* profile, const char* parallel) {
    CostOptions o;
    o.profile = load_op_profile(profile);
    return make_cost_model(ds, parse_parallel(parallel, "t"), ds.default_kv_layout, h200, o);
  };
  const double hidden_bf16 = 16 * 7168 * 2;  // 16 decode tokens' hidden states, BF16
  // TP8-EP8 without attention DP (trtllm-serve --tp_size 8 --ep_size 8): each GPU holds the 16 tokens, runs
  // its 32 experts over them and all-reduces the MoE output with the attention TP, as pure TP8 does.
  const CostModel trt = priced_by("h200-trtllm", "tp8-ep8");
  REQUIRE(trt.moe_comm == MoeComm::kGatherOrAllReduce);
  const StepCost t = decode_step(trt, 16, 1535);
  CHECK(t[Op::kDispatch].count == 0);
  CHECK(t[Op::kCombine].count == 0);
  CHECK(t[Op::kDispatch].time_s + t[Op::kCombine].time_s == 0);
  CHECK(t[Op::kAttnAllreduce].count == 61);
  CHECK(t[Op::kMlpAllreduce].count == 61);
  CHECK(t[Op::kMlpAllreduce].bytes_each == hidden_bf16);
  CHECK(t[Op::kExpertGemm].time_s > 0);
  // SGLang's TP8-EP8 with --moe-a2a-backend deepep (MoeComm::kAllToAll): each TP rank dispatches its 1/8 of
  // the tokens to 8 experts (FP8) and gets them back (BF16) on the 58 MoE layers.
  CostModel deepep = priced_by("h200-sglang", "tp8-ep8");
  deepep.moe_comm = MoeComm::kAllToAll;
  const StepCost s = decode_step(deepep, 16, 1535);
  CHECK(s[Op::kDispatch].count == 58);
  CHECK(s[Op::kDispatch].bytes_each == 16.0 / 8 * 8 * 7168 * 1);
  CHECK(s[Op::kCombine].bytes_each == 16.0 / 8 * 8 * 7168 * 2);
  CHECK(s[Op::kMlpAllreduce].count == 61);
  // SGLang's default --moe-a2a-backend none (MoeComm::kLocalExperts, token_dispatcher/standard.py), what
  // h200-sglang's engine block prices, under attention TP: the same collectives without the dispatch and
  // combine (attention DP gathers instead: the next test).
  {
    const CostModel local = priced_by("h200-sglang", "tp8-ep8");
    REQUIRE(local.moe_comm == MoeComm::kLocalExperts);
    CostModel all_to_all = local;
    all_to_all.moe_comm = MoeComm::kAllToAll;
    const StepCost a2a = decode_step(all_to_all, 16, 1535);
    const StepCost l = decode_step(local, 16, 1535);
    CHECK(a2a[Op::kDispatch].count == 58);
    CHECK(l[Op::kDispatch].count == 0);
    CHECK(l[Op::kCombine].count == 0);
    for (Op op : {Op::kEmbedAllreduce, Op::kAttnAllreduce, Op::kMlpAllreduce, Op::kDpAllgather,
                  Op::kReduceScatter, Op::kDenseAllreduce, Op::kVocabAllgather, Op::kExpertGemm}) {
      CHECK(l[op].count == a2a[op].count);
      CHECK(l[op].time_s == a2a[op].time_s);
    }
  }
  // vLLM's TP8 with --enable-expert-parallel and no data parallelism (fused_moe/config.py
  // use_all2all_kernels = dp_size > 1 and use_ep): no token moves, the MoE output is all-reduced over the
  // TP group as under pure TP8; with data parallelism its default allgather_reducescatter backend gathers
  // the DP ranks' hidden states before each MoE layer and reduce-scatters the output.
  {
    const CostModel v = priced_by("h200-vllm", "tp8-ep8");
    REQUIRE(v.moe_comm == MoeComm::kGatherOrAllReduce);
    const StepCost ep = decode_step(v, 16, 1535);
    const StepCost tp = decode_step(priced_by("h200-vllm", "tp8"), 16, 1535);
    CHECK(ep[Op::kDispatch].count + ep[Op::kCombine].count == 0);
    for (Op op : {Op::kEmbedAllreduce, Op::kAttnAllreduce, Op::kMlpAllreduce, Op::kVocabAllgather}) {
      CHECK(ep[op].count == tp[op].count);
      CHECK(ep[op].bytes_each == tp[op].bytes_each);
    }
    CHECK(ep[Op::kMlpAllreduce].count == 61);
    CHECK(ep[Op::kMlpAllreduce].bytes_each == hidden_bf16);
    const StepCost dp = decode_step(priced_by("h200-vllm", "dp8-ep8"), 16, 1535);
    CHECK(dp[Op::kDpAllgather].count == 58);
    CHECK(dp[Op::kReduceScatter].count == 58);
    CHECK(dp[Op::kDispatch].count + dp[Op::kCombine].count == 0);
    // --all2all-backend deepep_low_latency (MoeComm::kAllToAllUnderDp): under DP each MoE layer dispatches
    // the rank's 16 tokens to 8 experts (FP8) and combines them (BF16), no gather or scatter; without DP vLLM
    // builds no all-to-all (use_all2all_kernels), so TP8-EP8 keeps the all-reduces.
    CostModel deep_dp = priced_by("h200-vllm", "dp8-ep8");
    deep_dp.moe_comm = MoeComm::kAllToAllUnderDp;
    const StepCost a = decode_step(deep_dp, 16, 1535);
    CHECK(a[Op::kDispatch].count == 58);
    CHECK(a[Op::kDispatch].bytes_each == 16.0 * 8 * 7168 * 1);
    CHECK(a[Op::kCombine].bytes_each == 16.0 * 8 * 7168 * 2);
    for (Op none : {Op::kDpAllgather, Op::kReduceScatter, Op::kAttnAllreduce, Op::kMlpAllreduce,
                    Op::kDenseAllreduce, Op::kEmbedAllreduce, Op::kVocabAllgather})
      CHECK(a[none].count == 0);
    CostModel deep_tp = v;
    deep_tp.moe_comm = MoeComm::kAllToAllUnderDp;
    const StepCost tp_only = decode_step(deep_tp, 16, 1535);
    for (int i = 0; i < kOpCount; ++i) {
      INFO(op_name(Op(i)));
      CHECK(tp_only.terms[size_t(i)].count == ep.terms[size_t(i)].count);
      CHECK(tp_only.terms[size_t(i)].time_s == ep.terms[size_t(i)].time_s);
    }
  }
  // TensorRT-LLM's attention DP (enable_attention_dp): one all-gather before and one reduce-scatter after
  // each MoE layer of the rank's own tokens; embedding, dense MLP, shared experts and LM head unsharded.
  const StepCost d = decode_step(priced_by("h200-trtllm", "dp8-ep8"), 16, 1535);
  CHECK(d[Op::kDpAllgather].count == 58);
  CHECK(d[Op::kDpAllgather].bytes_each == hidden_bf16);
  CHECK(d[Op::kReduceScatter].count == 58);
  CHECK(d[Op::kReduceScatter].bytes_each == hidden_bf16);
  for (Op none : {Op::kDispatch, Op::kCombine, Op::kEmbedAllreduce, Op::kDenseAllreduce, Op::kAttnAllreduce,
                  Op::kMlpAllreduce, Op::kVocabAllgather})
    CHECK(d[none].count == 0);
  // A dense model is pure TP on either engine: the same collectives.
  const ModelConfig llama = model_preset("llama-3.1-70b");
  CostOptions o;
  o.profile = load_op_profile("h200-trtllm");
  const StepCost l = decode_step(
      make_cost_model(llama, parse_parallel("tp4", "t"), llama.default_kv_layout, h200, o), 8, 1000);
  const StepCost r =
      decode_step(make_cost_model(llama, parse_parallel("tp4", "t"), llama.default_kv_layout, h200), 8, 1000);
  for (Op c : kCollectiveOps) {
    CHECK(l[c].count == r[c].count);
    CHECK(l[c].bytes_each == r[c].bytes_each);
  }
}

namespace {

// The h200-sglang comm table's rows of `op` over 8 GPUs that bracket `bytes`: {latency below, above} in s.
std::pair<double, double> table_bracket(const OpProfile& p, std::string_view op, double bytes) {
  const ProfileTable& t = p.table(ProfileTableKind::kComm);
  double lo_bytes = 0, hi_bytes = 1e300, lo_s = 0, hi_s = 0;
  for (size_t i = 0; i < t.rows(); ++i) {
    if (t.text_at(i, 0) != op || t.at(i, 0) != 8) continue;
    const double b = t.at(i, 1), s = t.at(i, 2) * 1e-3;
    if (b <= bytes && b > lo_bytes) std::tie(lo_bytes, lo_s) = std::pair{b, s};
    if (b >= bytes && b < hi_bytes) std::tie(hi_bytes, hi_s) = std::pair{b, s};
  }
  REQUIRE(lo_s > 0);
  REQUIRE(hi_s > 0);
  return {lo_s, hi_s};
}

// The latency (s) a profile's comm table gives `op` on `gpus` GPUs at a message of `bytes`: linear in
// log bytes between the two rows around it (topologies/profiles/README.md), computed from the rows here.
double comm_table_s(const OpProfile& p, std::string_view op, int gpus, double bytes) {
  const ProfileTable& t = p.table(ProfileTableKind::kComm);
  std::vector<std::pair<double, double>> rows;
  for (size_t i = 0; i < t.rows(); ++i)
    if (t.text_at(i, 0) == op && t.at(i, 0) == gpus) rows.emplace_back(t.at(i, 1), t.at(i, 2) * 1e-3);
  std::sort(rows.begin(), rows.end());
  REQUIRE(rows.size() >= 2);
  REQUIRE(rows.front().first < bytes);
  REQUIRE(bytes < rows.back().first);
  size_t hi = 1;
  while (rows[hi].first <= bytes) ++hi;
  const auto [x0, t0] = rows[hi - 1];
  const auto [x1, t1] = rows[hi];
  return t0 + std::log(bytes / x0) / std::log(x1 / x0) * (t1 - t0);
}

}  // namespace

TEST_CASE("Issue 43: SGLang's attention DP without an all-to-all gathers every rank's tokens around each MLP",
          "[step_cost]") {
  const ModelConfig ds = model_preset("deepseek-v3");  // 61 layers (3 dense, 58 MoE), hidden 7,168
  CostOptions o;
  o.profile = load_op_profile("h200-sglang");
  CostModel cm =
      make_cost_model(ds, parse_parallel("dp8-ep8", "t"), ds.default_kv_layout, load_hardware("h200"), o);
  cm.moe_comm = MoeComm::kLocalExperts;
  // A balanced decode (64 tokens on each of 8 ranks; a decode step is MAX_LEN): before every
  // layer's MLP an all-gather of 8 x 64 tokens' BF16 hidden states over the 8 GPUs, after it a
  // reduce-scatter of the same buffer; no embedding all-reduce (the embedding is replicated). Each term
  // carries one rank's padded share; the comm table is read at the whole buffer (dp x that).
  const StepCost d = decode_step(cm, 64, 1535);
  const double gathered = 8.0 * 64 * 7168 * 2;
  CHECK(d[Op::kDpAllgather].count == 61);
  CHECK(d[Op::kDpAllgather].bytes_each == gathered / 8);
  CHECK(d[Op::kReduceScatter].count == 61);
  CHECK(d[Op::kReduceScatter].bytes_each == gathered / 8);
  for (Op none : {Op::kDispatch, Op::kCombine, Op::kEmbedAllreduce, Op::kDenseAllreduce, Op::kAttnAllreduce,
                  Op::kMlpAllreduce})
    CHECK(d[none].count == 0);
  // Each call costs the comm table's time at the gathered size (between the rows that bracket it), so the
  // step costs at least 61 x (both collectives' lower rows) more than a step without them.
  const auto [ag_lo, ag_hi] = table_bracket(*o.profile, "nccl_all_gather", gathered);
  const auto [rs_lo, rs_hi] = table_bracket(*o.profile, "nccl_reduce_scatter", gathered);
  CHECK(d[Op::kDpAllgather].source == TermSource::kProfile);
  CHECK(d[Op::kDpAllgather].time_s >= 61 * ag_lo * (1 - 1e-9));
  CHECK(d[Op::kDpAllgather].time_s <= 61 * ag_hi * (1 + 1e-9));
  CHECK(d[Op::kReduceScatter].time_s >= 61 * rs_lo * (1 - 1e-9));
  CHECK(d[Op::kReduceScatter].time_s <= 61 * rs_hi * (1 + 1e-9));
  CHECK(d.comm_s + d.profile_s >= 61 * (ag_lo + rs_lo));
  // A skewed decode (64 tokens on one rank, 1 on the seven others) still runs the CUDA graph captured with
  // MAX_LEN: every rank pads to 64. A step with a prefill chunk on one rank (is_extend_in_batch) is
  // SUM_LEN: per MLP two all-reduces of the 4,103-token buffer over the 8 GPUs (the gather's and the MLP
  // output's), no all-gather / reduce-scatter.
  const std::vector<SeqWork> busy(64, SeqWork{1, 1535, false, false}), one(1, SeqWork{1, 1535, false, false});
  const std::vector<SeqWork> chunk{SeqWork{4096, 0, true, true}};
  std::vector<std::span<const SeqWork>> skewed(8, one), prefill(8, one);
  skewed[0] = busy;
  prefill[3] = chunk;
  const StepCost k = step_cost(cm, skewed);
  CHECK(k[Op::kDpAllgather].count == 61);
  CHECK(k[Op::kDpAllgather].bytes_each == gathered / 8);
  CHECK(k[Op::kDenseAllreduce].count == 0);
  const StepCost s = step_cost(cm, prefill);
  CHECK(s[Op::kDenseAllreduce].count == 122);
  CHECK(s[Op::kDenseAllreduce].bytes_each == 4103.0 * 7168 * 2);
  CHECK(s[Op::kDpAllgather].count == 0);
  CHECK(s[Op::kReduceScatter].count == 0);
  // DeepEP's all-to-all (MoeComm::kAllToAll) keeps its pricing: the MLP runs on the rank's own tokens.
  cm.moe_comm = MoeComm::kAllToAll;
  const StepCost a = decode_step(cm, 64, 1535);
  CHECK(a[Op::kDispatch].count == 58);
  CHECK(a[Op::kReduceScatter].bytes_each == 64.0 * 7168 * 2);
}

TEST_CASE("Issue 43: all-gather and reduce-scatter are read from the comm tables at the whole buffer",
          "[step_cost][comm]") {
  // nccl-tests' size, the comm tables' bytes, is an all-gather's whole output and a reduce-scatter's whole
  // input (aiconfigurator collector/network/collect_nccl.py; nccl-tests AllGatherGetCollByteCount); the
  // ledger's DP gather and scatter carry one DP rank's tokens: the table is read at dp x that.
  const ModelConfig ds = model_preset("deepseek-v3");  // hidden 7,168, 58 MoE layers
  const Hardware h200 = load_hardware("h200");
  auto priced_by = [&](const char* profile, const char* parallel) {
    CostOptions o;
    o.profile = load_op_profile(profile);
    return make_cost_model(ds, parse_parallel(parallel, "t"), ds.default_kv_layout, h200, o);
  };
  const double rank_bytes = 16.0 * 7168 * 2;  // 16 decode tokens' BF16 hidden states on one DP rank
  // TensorRT-LLM's attention DP: per MoE layer a gather and a scatter over the 8 GPUs of 8 x 16 tokens.
  const CostModel trt = priced_by("h200-trtllm", "dp8-ep8");
  const StepCost t = decode_step(trt, 16, 1535);
  REQUIRE(t[Op::kDpAllgather].source == TermSource::kProfile);
  REQUIRE(t[Op::kReduceScatter].source == TermSource::kProfile);
  CHECK(t[Op::kDpAllgather].bytes_each == rank_bytes);  // the ledger keeps the seed's per-rank message
  CHECK(t[Op::kDpAllgather].time_s ==
        Approx(58 * comm_table_s(*trt.options.profile, "nccl_all_gather", 8, 8 * rank_bytes)).epsilon(1e-9));
  CHECK(t[Op::kReduceScatter].time_s ==
        Approx(58 * comm_table_s(*trt.options.profile, "nccl_reduce_scatter", 8, 8 * rank_bytes))
            .epsilon(1e-9));
  // Read at the rank's share the gather would be cheaper: the 8 x matters at this size.
  CHECK(t[Op::kDpAllgather].time_s >
        1.2 * 58 * comm_table_s(*trt.options.profile, "nccl_all_gather", 8, rank_bytes));
  // SGLang's DP attention under its tables, with DeepEP (the seed's path: one gather per step, a scatter
  // per layer) and without an all-to-all backend (--moe-a2a-backend none): whatever the count, each call
  // reads the table at the DP ranks' tokens together, over the 8 GPUs; with two GPUs per DP rank
  // (dp4-tp2) that is the 4 DP ranks' tokens.
  const std::pair<const char*, int> layouts[] = {{"dp8-ep8", 8}, {"dp4-tp2-ep8", 4}};
  const std::pair<Op, std::string_view> rows[] = {{Op::kDpAllgather, "nccl_all_gather"},
                                                  {Op::kReduceScatter, "nccl_reduce_scatter"}};
  for (const auto& [parallel, dp] : layouts)
    for (const MoeComm comm : {MoeComm::kAllToAll, MoeComm::kLocalExperts}) {
      INFO(parallel << (comm == MoeComm::kAllToAll ? " all-to-all" : " local experts"));
      CostModel sgl = priced_by("h200-sglang", parallel);
      sgl.moe_comm = comm;
      const StepCost s = decode_step(sgl, 16, 1535);
      for (const auto& [op, row] : rows) {
        const Term& c = s[op];
        REQUIRE(c.count > 0);
        REQUIRE(c.source == TermSource::kProfile);
        CHECK(c.bytes_each == rank_bytes);
        CHECK(c.time_s ==
              Approx(double(c.count) * comm_table_s(*sgl.options.profile, row, 8, dp * rank_bytes))
                  .epsilon(1e-9));
      }
    }
  // The LM head's logits gather already carries the whole gathered logits (16 x vocab x 4): read as is.
  const CostModel tp = priced_by("h200-sglang", "tp8-ep8");
  const StepCost v = decode_step(tp, 16, 1535);
  REQUIRE(v[Op::kVocabAllgather].source == TermSource::kProfile);
  CHECK(v[Op::kVocabAllgather].bytes_each == 16.0 * ds.vocab * 4);
  CHECK(v[Op::kVocabAllgather].time_s ==
        Approx(comm_table_s(*tp.options.profile, "nccl_all_gather", 8, 16.0 * ds.vocab * 4)).epsilon(1e-9));
  // Without a table (the roofline) the transfer stays the seed's: bytes_total over the link rate.
  const CostModel roof = make_cost_model(ds, parse_parallel("dp8-ep8", "t"), ds.default_kv_layout, h200);
  const StepCost r = decode_step(roof, 16, 1535);
  const Term& g = r[Op::kReduceScatter];
  CHECK(g.source == TermSource::kRoofline);
  CHECK(g.memory_s == g.bytes_total / roof.link_bw);
}

TEST_CASE(
    "Issue 43: a collective over more GPUs than its table measured costs at least the largest group's row",
    "[step_cost][comm]") {
  // gb200-trtllm's comm table measures 2 and 4 GPUs (one tray); attention DP over 32 GPUs of an NVL72 rack
  // gathers and scatters over all 32. The same whole buffer over more GPUs takes no less time (more ring
  // steps, none larger): the 4-GPU row bounds the roofline from below.
  const ModelConfig ds = model_preset("deepseek-v3");  // 58 MoE layers, hidden 7,168
  const Hardware gb200 = load_hardware("gb200");
  CostOptions o;
  o.profile = load_op_profile("gb200-trtllm");
  const ProfileTable& comm = o.profile->table(ProfileTableKind::kComm);
  double largest = 0;
  for (size_t i = 0; i < comm.rows(); ++i)
    if (comm.text_at(i, 0) == "nccl_all_gather") largest = std::max(largest, comm.at(i, 0));
  REQUIRE(largest == 4);
  const double rank_bytes = 8.0 * 7168 * 2;  // 8 decode tokens' BF16 hidden states on one DP rank
  const CostModel wide =
      make_cost_model(ds, parse_parallel("dp32-ep32", "t"), ds.default_kv_layout, gb200, o);
  const StepCost s = decode_step(wide, 8, 1535);
  const std::pair<Op, std::string_view> rows[] = {{Op::kDpAllgather, "nccl_all_gather"},
                                                  {Op::kReduceScatter, "nccl_reduce_scatter"}};
  for (const auto& [op, row] : rows) {
    INFO(row);
    const Term& t = s[op];
    REQUIRE(t.count == 58);
    CHECK(t.source == TermSource::kProfile);
    // the 4-GPU row at the 32 ranks' whole buffer, above what the roofline gave (one launch, bytes at link
    // rate)
    const double floor_s = 58 * comm_table_s(*o.profile, row, 4, 32 * rank_bytes);
    CHECK(t.time_s == Approx(floor_s).epsilon(1e-9));
    CHECK(t.time_s > 2 * (t.bytes_total / wide.link_bw + 58 * 4e-6));
    CHECK(t.smaller_group);  // a bound: the profile does not cover this group (cli/time_source_choice.cpp)
  }
  // The step says how much of its measured time is such a bound (metrics.json time_sources.bounded_share).
  CHECK(s.bounded_s == Approx(s[Op::kDpAllgather].time_s + s[Op::kReduceScatter].time_s).epsilon(1e-12));
  CHECK(s.bounded_s < s.profile_s);
  // A measured group keeps its own rows: DP4 reads the 4-GPU row at its 4 ranks' buffer.
  const CostModel tray = make_cost_model(ds, parse_parallel("dp4-ep4", "t"), ds.default_kv_layout, gb200, o);
  const StepCost m = decode_step(tray, 8, 1535);
  CHECK(m[Op::kDpAllgather].time_s ==
        Approx(58 * comm_table_s(*o.profile, "nccl_all_gather", 4, 4 * rank_bytes)).epsilon(1e-9));
  CHECK_FALSE(m[Op::kDpAllgather].smaller_group);
  CHECK(m.bounded_s == 0);
  CHECK(m.profile_s > 0);
}

TEST_CASE("Issue 44: MiniMax-M2's q/k norms over all heads all-reduce their variances under attention TP",
          "[step_cost][qk_norm]") {
  const ModelConfig mm = model_preset("minimax-m2.5");  // 62 GQA layers, 48 q / 8 kv heads of 128
  REQUIRE(mm.qk_norm_all_heads);
  const Hardware h200 = load_hardware("h200");
  auto model = [&](const ModelConfig& m, const char* parallel) {
    return make_cost_model(m, parse_parallel(parallel, "t"), m.default_kv_layout, h200);
  };
  // TP4 (vLLM 0.16.0's layout of the H200 rows): per layer one all-reduce over the 4 GPUs of the 4 decode
  // tokens' q and k variances, FP32: 4 x 2 x 4 B.
  const CostModel tp4 = model(mm, "tp4");
  const StepCost d = decode_step(tp4, 4, 1500);
  const Term& t = d[Op::kQkNormAllreduce];
  CHECK(t.count == 62);
  CHECK(t.bytes_each == 4 * 2 * 4);
  CHECK(collective_group(Op::kQkNormAllreduce, tp4.parallel) == 4);
  CHECK(t.time_s > 0);
  // It is the only difference from the same model with per-head norms, and the step is that much longer.
  ModelConfig per_head = mm;
  per_head.qk_norm_all_heads = false;
  const StepCost p = decode_step(model(per_head, "tp4"), 4, 1500);
  CHECK(p[Op::kQkNormAllreduce].count == 0);
  CHECK(d.total_s - p.total_s == Approx(t.time_s));
  CHECK(d[Op::kAttnAllreduce].count == p[Op::kAttnAllreduce].count);
  // A prefill chunk's message grows with its tokens.
  CHECK(prefill_step(tp4, 8192, 0, true)[Op::kQkNormAllreduce].bytes_each == 8192 * 2 * 4);
  // Under EP (vLLM 0.18.0's --enable-expert-parallel at TP8) attention stays TP8: the same 62 calls over 8.
  const CostModel ep8 = model(mm, "tp8-ep8");
  CHECK(decode_step(ep8, 4, 1500)[Op::kQkNormAllreduce].count == 62);
  CHECK(collective_group(Op::kQkNormAllreduce, ep8.parallel) == 8);
  // Attention DP: over each rank's own TP group, none where attention runs on one GPU.
  const CostModel dp_tp2 = model(mm, "dp4-tp2-ep8");
  CHECK(decode_step(dp_tp2, 4, 1500)[Op::kQkNormAllreduce].count == 62);
  CHECK(collective_group(Op::kQkNormAllreduce, dp_tp2.parallel) == 2);
  CHECK(decode_step(model(mm, "dp8-ep8"), 4, 1500)[Op::kQkNormAllreduce].count == 0);
  CHECK(decode_step(model(mm, "tp1"), 4, 1500)[Op::kQkNormAllreduce].count == 0);
  // Per-head q/k norms (Qwen3.5's, Gemma 3's; Llama 4's weightless L2 norm, no qk_norm weights) need no
  // collective at any TP.
  for (const char* name : {"qwen3.5-397b-a17b", "gemma-3-27b", "llama-4-scout"}) {
    INFO(name);
    const ModelConfig m = model_preset(name);
    CHECK(m.qk_norm == (std::string_view(name) != "llama-4-scout"));
    CHECK_FALSE(m.qk_norm_all_heads);
    CHECK(decode_step(model(m, "tp4"), 4, 1500)[Op::kQkNormAllreduce].count == 0);
  }
}

TEST_CASE("Issue 44: under h200-vllm the q/k norm all-reduce is priced by vLLM's custom all-reduce rows",
          "[step_cost][qk_norm]") {
  const ModelConfig mm = model_preset("minimax-m2.5");
  CostOptions o;
  o.profile = load_op_profile("h200-vllm");
  const CostModel cm =
      make_cost_model(mm, parse_parallel("tp4", "t"), mm.default_kv_layout, load_hardware("h200"), o);
  const StepCost d = decode_step(cm, 4, 1500);
  const Term& qk = d[Op::kQkNormAllreduce];
  CHECK(qk.count == 62);
  CHECK(qk.source == TermSource::kProfile);
  // 32 B messages against the attention all-reduce's 24 KiB ones: both on the table's latency floor
  // (custom_ar_graph at 4 GPUs: 4.5 us from 256 B to 16 KiB), so no more than the attention's.
  CHECK(qk.time_s > 0);
  CHECK(qk.time_s <= d[Op::kAttnAllreduce].time_s);
  CHECK(qk.time_s > 0.5 * d[Op::kAttnAllreduce].time_s);
}
