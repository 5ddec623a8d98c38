#include <catch2/catch.hpp>
#include <thread>

#include "kernels/cpu/kernels.h"
#include "kernels/cpu/local_communicator.h"
#include "kernels/cpu/sharded_layers.h"
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
  cpu::gemm({gate_up.data(), x.data(), w_gate_up.data(), nullptr, DType::kF32, kTokens, 2 * kInter, kHidden, false});
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
    cpu::mlp_tp(comm, {outs[r].data(), x.data(), gu_shard.data(), down_shard.data(), DType::kF32, kTokens, kHidden, local});
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
  cpu::router({ids.data(), weights.data(), logits.data(), nullptr, kTokens, kExperts, 4, 2, kTopk, 2.5f, true});
  cpu::moe_experts({want.data(), x.data(), ids.data(), weights.data(), w_gate_up.data(), w_down.data(), DType::kF32,
                    kTokens, kTopk, kHidden, kInter, 0, kExperts});

  // Rank r owns experts [2r, 2r + 2) and the tokens [begin_r, end_r) of an uneven split (rank 0 has none).
  const int32_t local = kExperts / kRanks;
  const std::vector<int32_t> token_begin = {0, 0, 3, 4, kTokens};
  cpu::LocalGroup group(kRanks);
  std::vector<std::vector<float>> outs(kRanks);
  on_ranks(group, [&](Communicator& comm) {
    const int32_t r = comm.rank(), t0 = token_begin[r], n = token_begin[r + 1] - t0;
    outs[r].resize(static_cast<size_t>(n) * kHidden);
    cpu::moe_experts_ep(comm, {outs[r].data(), x.data() + t0 * kHidden, ids.data() + t0 * kTopk, weights.data() + t0 * kTopk,
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
