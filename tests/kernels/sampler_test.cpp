#include <catch2/catch.hpp>
#include <cmath>

#include "kernels/cpu/kernels.h"
#include "tests/kernels/test_util.h"

using namespace tokenline;

namespace {

constexpr int32_t kVocab = 1000;

struct Rows {
  std::vector<float> logits, temperature, top_p;
  std::vector<int32_t> top_k, out;
  std::vector<uint64_t> seeds, steps;
  explicit Rows(int32_t n, uint64_t seed)
      : logits(test::random_vector(static_cast<int64_t>(n) * kVocab, seed, -5.0f, 5.0f)),
        temperature(n, 1.0f),
        top_p(n, 1.0f),
        top_k(n, 0),
        out(n, -1),
        seeds(n, 0),
        steps(n, 0) {}
  std::vector<int32_t> run() {
    cpu::sample({out.data(), logits.data(), temperature.data(), top_k.data(), top_p.data(), seeds.data(),
                 steps.data(), static_cast<int32_t>(out.size()), kVocab});
    return out;
  }
};

}  // namespace

TEST_CASE("greedy sampling is argmax, top_k = 1 is argmax at any temperature") {
  Rows rows(8, 41);
  for (int32_t r = 0; r < 8; ++r) rows.temperature[r] = r < 4 ? 0.0f : 1.5f, rows.top_k[r] = r < 4 ? 0 : 1;
  const auto got = rows.run();
  for (int32_t r = 0; r < 8; ++r) {
    const float* row = rows.logits.data() + static_cast<int64_t>(r) * kVocab;
    CHECK(got[r] == std::max_element(row, row + kVocab) - row);
  }
}

TEST_CASE("sampling is deterministic for (seed, step) and varies across seeds") {
  Rows a(16, 42), b(16, 42);
  for (int32_t r = 0; r < 16; ++r) {
    a.seeds[r] = b.seeds[r] = 1000 + r;
    a.steps[r] = b.steps[r] = 3;
    a.top_k[r] = b.top_k[r] = 50;
    a.top_p[r] = b.top_p[r] = 0.9f;
  }
  const auto first = a.run();
  CHECK(first == b.run());
  for (auto& s : b.seeds) s += 1;
  CHECK(first != b.run());
}

TEST_CASE("sampling frequencies follow the temperature-scaled, top-k/top-p filtered distribution") {
  // Logits ln(4), ln(3), ln(2), ln(1): probabilities 0.4, 0.3, 0.2, 0.1. top_k 3 drops id 3; top_p 0.6
  // keeps {0, 1} (0.4 + 0.3 >= 0.6), renormalized to 4/7 and 3/7.
  const int32_t vocab = 4, draws = 20000;
  const std::vector<float> row = {std::log(4.0f), std::log(3.0f), std::log(2.0f), std::log(1.0f)};
  for (auto [k, p] : {std::pair{3, 1.0f}, std::pair{0, 0.6f}}) {
    std::vector<float> logits, temperature(draws, 1.0f), top_p(draws, p);
    std::vector<int32_t> top_k(draws, k), out(draws);
    std::vector<uint64_t> seeds(draws), steps(draws, 0);
    for (int32_t i = 0; i < draws; ++i) logits.insert(logits.end(), row.begin(), row.end()), seeds[i] = i;
    cpu::sample({out.data(), logits.data(), temperature.data(), top_k.data(), top_p.data(), seeds.data(),
                 steps.data(), draws, vocab});
    std::vector<double> freq(vocab, 0.0);
    for (int32_t id : out) freq[id] += 1.0 / draws;
    const std::vector<double> want = k == 3 ? std::vector<double>{4.0 / 9, 3.0 / 9, 2.0 / 9, 0.0}
                                            : std::vector<double>{4.0 / 7, 3.0 / 7, 0.0, 0.0};
    for (int32_t i = 0; i < vocab; ++i) CHECK(freq[i] == Approx(want[i]).margin(0.015));
  }
}
