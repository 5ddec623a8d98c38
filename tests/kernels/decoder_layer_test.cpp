// A tiny glm_moe_dsa decoder layer (MLA with DSA indexer + sparse attention, MoE with shared expert), LM
// head and MTP draft stitched from the CPU kernels, the way engine/runtime will. Checks that one batched
// prefill over the paged cache equals token-by-token decode, and that ragged batches of two sequences
// equal running them alone.
#include <catch2/catch.hpp>
#include <cmath>

#include "kernels/cpu/kernels.h"
#include "tests/kernels/test_util.h"

using namespace tokenline;

namespace {

constexpr int32_t kHidden = 256, kHeads = 4, kQLora = 64, kKvLora = 128, kRope = 16, kNope = 32, kV = 32;
constexpr int32_t kIdxHeads = 4, kIdxDim = 32, kIdxTopk = 6;  // top-6 < context: attention really is sparse
constexpr int32_t kExperts = 8, kTopk = 2, kGroups = 4, kTopkGroups = 2, kInter = 64, kVocab = 512;
constexpr int32_t kPageSize = 4, kMaxLen = 16;
constexpr float kEps = 1e-6f, kTheta = 10000.0f;
constexpr KvLayout kLayout = KvLayout::kFp8DsMla;

using Vec = std::vector<float>;

struct Weights {
  uint64_t s;
  explicit Weights(uint64_t seed) : s(seed) {}
  Vec w(int64_t n, float scale) { return test::random_vector(n, s++, -scale, scale); }
  Vec embed = w(kVocab * kHidden, 1.0f), attn_norm = w(kHidden, 1.0f), ffn_norm = w(kHidden, 1.0f);
  Vec q_a = w(kQLora * kHidden, 0.06f), q_a_norm = w(kQLora, 1.0f),
      q_b = w(kHeads * (kNope + kRope) * kQLora, 0.12f);
  Vec kv_a = w((kKvLora + kRope) * kHidden, 0.06f), kv_norm = w(kKvLora, 1.0f),
      kv_b = w(kHeads * (kNope + kV) * kKvLora, 0.09f);
  Vec o = w(kHidden * kHeads * kV, 0.09f);
  Vec idx_q = w(kIdxHeads * kIdxDim * kQLora, 0.12f), idx_k = w(kIdxDim * kHidden, 0.06f),
      idx_w = w(kIdxHeads * kHidden, 0.06f);
  Vec idx_k_norm = w(kIdxDim, 1.0f);
  Vec gate = w(kExperts * kHidden, 0.06f), bias = w(kExperts, 0.05f);
  Vec experts_gu = w(kExperts * 2 * kInter * kHidden, 0.06f),
      experts_dn = w(kExperts * kHidden * kInter, 0.12f);
  Vec shared_gu = w(2 * kInter * kHidden, 0.06f), shared_dn = w(kHidden * kInter, 0.12f);
  Vec final_norm = w(kHidden, 1.0f), lm_head = w(kVocab * kHidden, 0.06f);
  Vec mtp_enorm = w(kHidden, 1.0f), mtp_hnorm = w(kHidden, 1.0f), mtp_eh = w(kHidden * 2 * kHidden, 0.04f);
};

// One layer's caches over a page table sized for kMaxLen tokens per sequence.
struct LayerCache {
  test::PageTableHost table;
  std::vector<uint8_t> kv, idx_k;
  explicit LayerCache(int32_t sequences)
      : table(test::make_page_table(std::vector<int32_t>(static_cast<size_t>(sequences), kMaxLen), kPageSize,
                                    true)),
        kv(static_cast<size_t>(table.num_pages) * kPageSize * kv_token_bytes(kLayout, kKvLora, kRope)),
        idx_k(static_cast<size_t>(table.num_pages) * kPageSize * kIdxDim * 2) {}
};

struct Batch {
  std::vector<int32_t> seq, pos;
  int32_t n() const { return static_cast<int32_t>(seq.size()); }
};

Vec linear(const Vec& x, const Vec& w, int32_t n, int32_t k) {
  const auto m = static_cast<int32_t>(x.size() / static_cast<size_t>(k));
  Vec out(static_cast<size_t>(m) * n);
  cpu::gemm({out.data(), x.data(), w.data(), nullptr, DType::kF32, m, n, k, false});
  return out;
}

Vec norm(const Vec& x, const Vec& w, int32_t dim) {
  Vec out(x.size());
  const auto rows = static_cast<int32_t>(x.size() / static_cast<size_t>(dim));
  cpu::rmsnorm({out.data(), nullptr, x.data(), w.data(), rows, dim, dim, dim, kEps});
  return out;
}

// Indexer top-k positions for each token (writes this batch's index keys first: a token sees itself).
std::vector<int32_t> select_positions(const Weights& w, LayerCache& c, const Batch& b, const Vec& x,
                                      const Vec& q_a) {
  Vec q = linear(q_a, w.idx_q, kIdxHeads * kIdxDim, kQLora), k = linear(x, w.idx_k, kIdxDim, kHidden);
  cpu::layernorm({k.data(), k.data(), w.idx_k_norm.data(), nullptr, b.n(), kIdxDim, kEps});  // V3.2's k_norm
  Vec hw = linear(x, w.idx_w, kIdxHeads, kHidden);
  for (auto& v : hw) v /= std::sqrt(static_cast<float>(kIdxHeads * kIdxDim));
  cpu::rope({q.data(), b.pos.data(), b.n(), kIdxHeads, kIdxDim, 0, kRope, kTheta});
  cpu::rope({k.data(), b.pos.data(), b.n(), 1, kIdxDim, 0, kRope, kTheta});
  cpu::index_k_write({c.idx_k.data(), k.data(), b.seq.data(), b.pos.data(), c.table.view(), b.n(), kIdxDim});
  Vec scores(static_cast<size_t>(b.n()) * kMaxLen);
  cpu::indexer_score({scores.data(), q.data(), hw.data(), c.idx_k.data(), b.seq.data(), b.pos.data(),
                      c.table.view(), b.n(), kIdxHeads, kIdxDim, kMaxLen});
  std::vector<int32_t> topk(static_cast<size_t>(b.n()) * kIdxTopk);
  cpu::topk_select({topk.data(), scores.data(), b.pos.data(), b.n(), kMaxLen, kIdxTopk});
  return topk;
}

Vec attention(const Weights& w, LayerCache& c, const Batch& b, const Vec& x) {
  const Vec q_a = norm(linear(x, w.q_a, kQLora, kHidden), w.q_a_norm, kQLora);
  Vec q = linear(q_a, w.q_b, kHeads * (kNope + kRope), kQLora);
  cpu::rope({q.data(), b.pos.data(), b.n(), kHeads, kNope + kRope, kNope, kRope, kTheta});
  Vec kv_a = linear(x, w.kv_a, kKvLora + kRope, kHidden);
  cpu::rmsnorm({kv_a.data(), nullptr, kv_a.data(), w.kv_norm.data(), b.n(), kKvLora, kKvLora + kRope,
                kKvLora + kRope, kEps});
  cpu::rope({kv_a.data(), b.pos.data(), b.n(), 1, kKvLora + kRope, kKvLora, kRope, kTheta});
  cpu::kv_write({c.kv.data(), kv_a.data(), kv_a.data() + kKvLora, b.seq.data(), b.pos.data(), c.table.view(),
                 kLayout, b.n(), kKvLora + kRope, kKvLora, kRope});
  const std::vector<int32_t> topk = select_positions(w, c, b, x, q_a);
  Vec q_latent(static_cast<size_t>(b.n()) * kHeads * kKvLora), o_latent(q_latent.size()),
      o(static_cast<size_t>(b.n()) * kHeads * kV);
  cpu::mla_absorb_q(
      {q_latent.data(), q.data(), w.kv_b.data(), DType::kF32, b.n(), kHeads, kNope, kRope, kV, kKvLora});
  cpu::mla_attention_sparse({o_latent.data(), q_latent.data(), q.data() + kNope, c.kv.data(), b.seq.data(),
                             b.pos.data(), topk.data(), c.table.view(), kLayout, b.n(), kHeads, kKvLora,
                             kRope, kNope + kRope, kIdxTopk,
                             1.0f / std::sqrt(static_cast<float>(kNope + kRope))});
  cpu::mla_absorb_out(
      {o.data(), o_latent.data(), w.kv_b.data(), DType::kF32, b.n(), kHeads, kNope, kV, kKvLora});
  return linear(o, w.o, kHidden, kHeads * kV);
}

Vec moe(const Weights& w, const Vec& x, int32_t n) {
  const Vec logits = linear(x, w.gate, kExperts, kHidden);
  std::vector<int32_t> ids(static_cast<size_t>(n) * kTopk);
  Vec weights(ids.size()), routed(x.size()), act(static_cast<size_t>(n) * kInter);
  cpu::router({ids.data(), weights.data(), logits.data(), w.bias.data(), n, kExperts, kGroups, kTopkGroups,
               kTopk, 2.5f, true});
  cpu::moe_experts({routed.data(), x.data(), ids.data(), weights.data(), w.experts_gu.data(),
                    w.experts_dn.data(), DType::kF32, n, kTopk, kHidden, kInter, 0, kExperts});
  const Vec gu = linear(x, w.shared_gu, 2 * kInter, kHidden);
  cpu::silu_mul({act.data(), gu.data(), n, kInter});
  Vec shared = linear(act, w.shared_dn, kHidden, kInter);
  for (size_t i = 0; i < shared.size(); ++i) shared[i] += routed[i];
  return shared;
}

// Pre-norm decoder layer on the residual stream h (updated in place).
void layer(const Weights& w, LayerCache& c, const Batch& b, Vec& h) {
  const Vec a = attention(w, c, b, norm(h, w.attn_norm, kHidden));
  for (size_t i = 0; i < h.size(); ++i) h[i] += a[i];
  const Vec m = moe(w, norm(h, w.ffn_norm, kHidden), b.n());
  for (size_t i = 0; i < h.size(); ++i) h[i] += m[i];
}

Vec embed(const Weights& w, const std::vector<int32_t>& ids) {
  Vec h(ids.size() * kHidden);
  cpu::embedding({h.data(), w.embed.data(), ids.data(), DType::kF32, static_cast<int32_t>(ids.size()),
                  kHidden, 0, kVocab});
  return h;
}

struct Output {
  Vec logits, draft_logits;  // main model and MTP draft, [tokens, vocab]
};

// Main layer + LM head, then the MTP draft fed by the next token's embedding and the main hidden state.
Output forward(const Weights& w, LayerCache& main_cache, LayerCache& mtp_cache, const Batch& b,
               const std::vector<int32_t>& ids, const std::vector<int32_t>& next_ids) {
  Vec h = embed(w, ids);
  layer(w, main_cache, b, h);
  Output out;
  out.logits = linear(norm(h, w.final_norm, kHidden), w.lm_head, kVocab, kHidden);
  const Vec e = embed(w, next_ids);
  Vec cat(static_cast<size_t>(b.n()) * 2 * kHidden);
  cpu::mtp_input(
      {cat.data(), e.data(), h.data(), w.mtp_enorm.data(), w.mtp_hnorm.data(), b.n(), kHidden, kEps});
  Vec hm = linear(cat, w.mtp_eh, kHidden, 2 * kHidden);
  layer(w, mtp_cache, b, hm);  // the MTP layer shares the main layer's shapes; the test reuses its weights
  out.draft_logits = linear(norm(hm, w.final_norm, kHidden), w.lm_head, kVocab, kHidden);
  return out;
}

std::vector<int32_t> prompt(int32_t n, uint64_t seed) {
  Pcg32State rng = pcg32_seed(seed, 3);
  std::vector<int32_t> ids(static_cast<size_t>(n));
  for (auto& id : ids) id = static_cast<int32_t>(pcg32_next(rng) % kVocab);
  return ids;
}

}  // namespace

TEST_CASE("decoder layer: batched prefill over the paged fp8 cache equals token-by-token decode") {
  const Weights w(100);
  const int32_t n = 12;
  const auto ids = prompt(n + 1, 1);
  const std::vector<int32_t> input(ids.begin(), ids.end() - 1), next(ids.begin() + 1, ids.end());
  LayerCache main_a(1), mtp_a(1), main_b(1), mtp_b(1);
  Batch all;
  for (int32_t p = 0; p < n; ++p) all.seq.push_back(0), all.pos.push_back(p);
  const Output prefill = forward(w, main_a, mtp_a, all, input, next);
  Vec logits, draft;
  for (int32_t p = 0; p < n; ++p) {
    const Output step = forward(w, main_b, mtp_b, Batch{{0}, {p}}, {input[p]}, {next[p]});
    logits.insert(logits.end(), step.logits.begin(), step.logits.end());
    draft.insert(draft.end(), step.draft_logits.begin(), step.draft_logits.end());
  }
  const double err = test::nmse(logits, prefill.logits), draft_err = test::nmse(draft, prefill.draft_logits);
  INFO("logits NMSE " << err << ", MTP draft NMSE " << draft_err);
  CHECK(err < 1e-12);
  CHECK(draft_err < 1e-12);
  CHECK(main_a.kv == main_b.kv);                                   // the same bytes reach the same slots
  CHECK(test::nmse(prefill.draft_logits, prefill.logits) > 1e-3);  // the draft is its own computation
}

TEST_CASE(
    "decoder layer: a ragged batch of two sequences equals running each alone, greedy decode is "
    "deterministic") {
  const Weights w(200);
  const auto a = prompt(7, 2), b = prompt(5, 3);
  LayerCache main_ab(2), mtp_ab(2), main_a(1), mtp_a(1), main_b(1), mtp_b(1);
  Batch both, only_a, only_b;
  std::vector<int32_t> ids;
  for (int32_t p = 0; p < 7; ++p) {  // interleave the two sequences token by token
    if (p < 5) both.seq.push_back(1), both.pos.push_back(p), ids.push_back(b[p]);
    both.seq.push_back(0), both.pos.push_back(p), ids.push_back(a[p]);
    only_a.seq.push_back(0), only_a.pos.push_back(p);
    if (p < 5) only_b.seq.push_back(0), only_b.pos.push_back(p);
  }
  const Vec together = forward(w, main_ab, mtp_ab, both, ids, ids).logits;
  const Vec alone_a = forward(w, main_a, mtp_a, only_a, a, a).logits;
  const Vec alone_b = forward(w, main_b, mtp_b, only_b, b, b).logits;
  for (int32_t i = 0; i < both.n(); ++i) {
    const Vec& alone = both.seq[i] == 0 ? alone_a : alone_b;
    const Vec got(together.begin() + i * kVocab, together.begin() + (i + 1) * kVocab);
    const Vec want(alone.begin() + both.pos[i] * kVocab, alone.begin() + (both.pos[i] + 1) * kVocab);
    REQUIRE(test::nmse(got, want) < 1e-12);
  }

  auto generate = [&](uint64_t seed, float temperature) {
    LayerCache main_c(1), mtp_c(1);
    std::vector<int32_t> tokens = a;
    Batch pre;
    for (int32_t p = 0; p < 7; ++p) pre.seq.push_back(0), pre.pos.push_back(p);
    Vec logits = forward(w, main_c, mtp_c, pre, tokens, tokens).logits;
    Vec last(logits.end() - kVocab, logits.end());
    for (int32_t step = 0; step < 4; ++step) {
      int32_t id = -1, k = 0;
      const float p = 1.0f;
      const uint64_t s = static_cast<uint64_t>(step);
      cpu::sample({&id, last.data(), &temperature, &k, &p, &seed, &s, 1, kVocab});
      tokens.push_back(id);
      const auto pos = static_cast<int32_t>(tokens.size()) - 1;
      last = forward(w, main_c, mtp_c, Batch{{0}, {pos}}, {id}, {id}).logits;
    }
    return tokens;
  };
  CHECK(generate(5, 0.0f) == generate(6, 0.0f));  // greedy ignores the seed
  CHECK(generate(5, 1.0f) == generate(5, 1.0f));
}
