#include "kernels/cpu/sharded_layers.h"

#include <catch2/catch.hpp>
#include <thread>

#include "kernels/cpu/kernels.h"
#include "kernels/cpu/local_communicator.h"
#include "tests/kernels/test_util.h"

using namespace tokenline;

namespace {

constexpr int32_t kHidden = 256, kInter = 128, kExperts = 8, kTopk = 2, kTokens = 10, kRanks = 4;

template <class Fn>
void on_ranks(cpu::LocalGroup& group, Fn fn) {
  std::vector<std::thread> threads;
  for (int32_t r = 0; r < group.size(); ++r) threads.emplace_back([&, r] { fn(group.rank(r)); });
  for (auto& t : threads) t.join();
}

}  // namespace

TEST_CASE("TP-sharded SwiGLU MLP (column-split gate/up, row-split down, all-reduce) equals unsharded") {
  const auto x = test::random_vector(kTokens * kHidden, 61);
  const auto w_gate_up = test::random_vector(2 * kInter * kHidden, 62, -0.1f, 0.1f);
  const auto w_down = test::random_vector(kHidden * kInter, 63, -0.1f, 0.1f);
  std::vector<float> gate_up(kTokens * 2 * kInter), act(kTokens * kInter), want(kTokens * kHidden);
  cpu::gemm({gate_up.data(), x.data(), w_gate_up.data(), nullptr, DType::kF32, kTokens, 2 * kInter, kHidden,
             false});
  cpu::silu_mul({act.data(), gate_up.data(), kTokens, kInter});
  cpu::gemm({want.data(), act.data(), w_down.data(), nullptr, DType::kF32, kTokens, kHidden, kInter, false});

  const int32_t local = kInter / kRanks;
  cpu::LocalGroup group(kRanks);
  std::vector<std::vector<float>> outs(kRanks);
  on_ranks(group, [&](Communicator& comm) {
    const int32_t r = comm.rank();
    std::vector<float> gu_shard, down_shard;
    for (int32_t half = 0; half < 2; ++half) {  // gate rows then up rows of this rank's slice
      const auto* begin = w_gate_up.data() + (static_cast<int64_t>(half) * kInter + r * local) * kHidden;
      gu_shard.insert(gu_shard.end(), begin, begin + static_cast<int64_t>(local) * kHidden);
    }
    for (int32_t row = 0; row < kHidden; ++row) {
      const auto* begin = w_down.data() + static_cast<int64_t>(row) * kInter + r * local;
      down_shard.insert(down_shard.end(), begin, begin + local);
    }
    outs[r].resize(kTokens * kHidden);
    cpu::mlp_tp(comm, {outs[r].data(), x.data(), gu_shard.data(), down_shard.data(), DType::kF32, kTokens,
                       kHidden, local});
  });
  for (int32_t r = 0; r < kRanks; ++r) {
    const double err = test::nmse(outs[r], want);
    INFO("rank " << r << " NMSE " << err);
    CHECK(err < 1e-12);
  }
  CHECK(outs[0] == outs[3]);  // deterministic reduction: identical on every rank
}

TEST_CASE("EP-sharded MoE (experts split over ranks, all-to-all dispatch/combine) equals unsharded") {
  const auto x = test::random_vector(kTokens * kHidden, 64);
  const auto w_gate_up = test::random_vector(kExperts * 2 * kInter * kHidden, 65, -0.1f, 0.1f);
  const auto w_down = test::random_vector(kExperts * kHidden * kInter, 66, -0.1f, 0.1f);
  const auto logits = test::random_vector(kTokens * kExperts, 67, -3.0f, 3.0f);
  std::vector<int32_t> ids(kTokens * kTopk);
  std::vector<float> weights(kTokens * kTopk), want(kTokens * kHidden);
  cpu::router(
      {ids.data(), weights.data(), logits.data(), nullptr, kTokens, kExperts, 4, 2, kTopk, 2.5f, true});
  cpu::moe_experts({want.data(), x.data(), ids.data(), weights.data(), w_gate_up.data(), w_down.data(),
                    DType::kF32, kTokens, kTopk, kHidden, kInter, 0, kExperts});

  // Rank r owns experts [2r, 2r + 2) and the tokens [begin_r, end_r) of an uneven split (rank 0 has none).
  const int32_t local = kExperts / kRanks;
  const std::vector<int32_t> token_begin = {0, 0, 3, 4, kTokens};
  cpu::LocalGroup group(kRanks);
  std::vector<std::vector<float>> outs(kRanks);
  on_ranks(group, [&](Communicator& comm) {
    const int32_t r = comm.rank(), t0 = token_begin[r], n = token_begin[r + 1] - t0;
    outs[r].resize(static_cast<size_t>(n) * kHidden);
    cpu::moe_experts_ep(
        comm, {outs[r].data(), x.data() + t0 * kHidden, ids.data() + t0 * kTopk, weights.data() + t0 * kTopk,
               w_gate_up.data() + static_cast<int64_t>(r) * local * 2 * kInter * kHidden,
               w_down.data() + static_cast<int64_t>(r) * local * kHidden * kInter, DType::kF32, n, kTopk,
               kHidden, kInter, r * local, local});
  });
  std::vector<float> got;
  for (int32_t r = 0; r < kRanks; ++r) got.insert(got.end(), outs[r].begin(), outs[r].end());
  const double err = test::nmse(got, want);
  INFO("EP NMSE " << err);
  CHECK(err < 1e-12);
}

TEST_CASE("TP vocab-parallel embedding (all-reduce) and LM head (all-gather) equal unsharded") {
  const int32_t vocab = 64, hidden = 32, tokens = 5, shard = vocab / kRanks;
  const auto table = test::random_vector(vocab * hidden, 68);
  const auto head = test::random_vector(vocab * hidden, 69);
  const std::vector<int32_t> ids = {0, 17, 63, 32, 17};
  std::vector<float> emb(tokens * hidden), logits(tokens * vocab);
  cpu::embedding({emb.data(), table.data(), ids.data(), DType::kF32, tokens, hidden, 0, vocab});
  cpu::gemm({logits.data(), emb.data(), head.data(), nullptr, DType::kF32, tokens, vocab, hidden, false});
  cpu::LocalGroup group(kRanks);
  std::vector<std::vector<float>> emb_r(kRanks), logits_r(kRanks);
  on_ranks(group, [&](Communicator& comm) {
    const int32_t r = comm.rank();
    emb_r[r].resize(tokens * hidden);
    cpu::embedding({emb_r[r].data(), table.data() + r * shard * hidden, ids.data(), DType::kF32, tokens,
                    hidden, r * shard, shard});
    comm.all_reduce_sum(emb_r[r].data(), tokens * hidden);
    std::vector<float> part(tokens * shard), gathered(static_cast<size_t>(kRanks) * tokens * shard);
    cpu::gemm({part.data(), emb_r[r].data(), head.data() + r * shard * hidden, nullptr, DType::kF32, tokens,
               shard, hidden, false});
    comm.all_gather(gathered.data(), part.data(), static_cast<int64_t>(part.size() * sizeof(float)));
    logits_r[r].resize(tokens * vocab);  // gathered is [rank][token][shard] -> [token][vocab]
    for (int32_t q = 0; q < kRanks; ++q) {
      for (int32_t t = 0; t < tokens; ++t) {
        for (int32_t j = 0; j < shard; ++j)
          logits_r[r][t * vocab + q * shard + j] = gathered[(q * tokens + t) * shard + j];
      }
    }
  });
  for (int32_t r = 0; r < kRanks; ++r) {
    CHECK(emb_r[r] == emb);  // exactly one rank holds each row; the others add zeros
    CHECK(logits_r[r] == logits);
  }
}

TEST_CASE(
    "TP-sharded MLA (heads split: q_b/kv_b/o_proj shards, replicated latent cache, all-reduce) equals "
    "unsharded") {
  constexpr int32_t heads = 8, nope = 32, rope = 16, v = 32, kv_lora = 128, q_lora = 64, hidden = 128,
                    page = 4;
  const int32_t local = heads / kRanks;
  const std::vector<int32_t> seq = {0, 0, 0, 0, 0, 0}, pos = {0, 1, 2, 3, 4, 5};
  const auto n = static_cast<int32_t>(seq.size());
  const auto table = test::make_page_table({n}, page, true);
  const auto q_a = test::random_vector(n * q_lora, 70);
  const auto kv = test::random_vector(n * (kv_lora + rope), 71);
  const auto w_q_b = test::random_vector(heads * (nope + rope) * q_lora, 72, -0.2f, 0.2f);
  const auto w_kv_b = test::random_vector(heads * (nope + v) * kv_lora, 73, -0.1f, 0.1f);
  const auto w_o = test::random_vector(hidden * heads * v, 74, -0.1f, 0.1f);
  std::vector<uint8_t> cache(static_cast<size_t>(table.num_pages) * page *
                             kv_token_bytes(KvLayout::kBf16, kv_lora, rope));
  cpu::kv_write({cache.data(), kv.data(), kv.data() + kv_lora, seq.data(), pos.data(), table.view(),
                 KvLayout::kBf16, n, kv_lora + rope, kv_lora, rope});
  // Attention output for heads [h0, h0 + nh) given that many heads' q_b / kv_b rows and o_proj columns.
  auto attention = [&](int32_t nh, const float* q_b, const float* kv_b, const std::vector<float>& o) {
    std::vector<float> q(static_cast<size_t>(n) * nh * (nope + rope)),
        ql(static_cast<size_t>(n) * nh * kv_lora), ol(ql.size());
    std::vector<float> ov(static_cast<size_t>(n) * nh * v), out(static_cast<size_t>(n) * hidden);
    cpu::gemm({q.data(), q_a.data(), q_b, nullptr, DType::kF32, n, nh * (nope + rope), q_lora, false});
    cpu::rope({q.data(), pos.data(), n, nh, nope + rope, nope, rope, 10000.0f});
    cpu::mla_absorb_q({ql.data(), q.data(), kv_b, DType::kF32, n, nh, nope, rope, v, kv_lora});
    cpu::mla_attention_dense({ol.data(), ql.data(), q.data() + nope, cache.data(), seq.data(), pos.data(),
                              nullptr, table.view(), KvLayout::kBf16, n, nh, kv_lora, rope, nope + rope, 0,
                              0.125f});
    cpu::mla_absorb_out({ov.data(), ol.data(), kv_b, DType::kF32, n, nh, nope, v, kv_lora});
    cpu::gemm({out.data(), ov.data(), o.data(), nullptr, DType::kF32, n, hidden, nh * v, false});
    return out;
  };
  const auto want = attention(heads, w_q_b.data(), w_kv_b.data(), w_o);
  cpu::LocalGroup group(kRanks);
  std::vector<std::vector<float>> got(kRanks);
  on_ranks(group, [&](Communicator& comm) {
    const int32_t r = comm.rank();
    std::vector<float> o_shard;  // o_proj columns of this rank's heads: [hidden, local * v]
    for (int32_t row = 0; row < hidden; ++row) {
      const auto* begin = w_o.data() + static_cast<int64_t>(row) * heads * v + r * local * v;
      o_shard.insert(o_shard.end(), begin, begin + local * v);
    }
    got[r] = attention(local, w_q_b.data() + r * local * (nope + rope) * q_lora,
                       w_kv_b.data() + r * local * (nope + v) * kv_lora, o_shard);
    comm.all_reduce_sum(got[r].data(), static_cast<int64_t>(got[r].size()));
  });
  for (int32_t r = 0; r < kRanks; ++r) {
    const double err = test::nmse(got[r], want);
    INFO("rank " << r << " NMSE " << err);
    CHECK(err < 1e-12);
  }
}
