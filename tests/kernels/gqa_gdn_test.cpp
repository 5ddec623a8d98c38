// CPU GQA attention (full, sliding window with the window's pages only, sink logits) and Gated DeltaNet
// (conv1d + gated delta rule in a state slot) against naive references written here.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels/cpu/kernels.h"
#include "tests/kernels/test_util.h"

using namespace tokenline;

namespace {

constexpr int32_t kHeads = 4, kKvHeads = 2, kDim = 8, kPage = 4, kLen = 23;

float bf16_round(float x) {
  return bf16_to_float(float_to_bf16(x));
}

// One sequence of kLen tokens: keys / values [kLen, kv_heads * dim], written through gqa_kv_write into
// a pool of `pages` pages (page ids in `table`, starting at page index `first`).
struct Cache {
  std::vector<float> k, v, q;
  std::vector<uint8_t> pool;
  std::vector<int32_t> indptr, indices, last_len{1}, first;
  PagedKvTable table() const {
    return PagedKvTable{kPage, 1, indptr.data(), indices.data(), last_len.data()};
  }
};

Cache make_cache(int32_t first_page, const std::vector<int32_t>& page_ids) {
  Cache c;
  const int32_t dim = kKvHeads * kDim;
  c.k = test::random_vector(int64_t{kLen} * dim, 1);
  c.v = test::random_vector(int64_t{kLen} * dim, 2);
  c.q = test::random_vector(int64_t{kLen} * kHeads * kDim, 3);
  const int32_t pool_pages = 16;
  // Unwritten slots hold NaN bytes: a read of a page the table does not name would poison the output.
  c.pool.assign(static_cast<size_t>(pool_pages) * kPage * gqa_kv_token_bytes(kKvHeads, kDim), 0xFF);
  c.indptr = {0, static_cast<int32_t>(page_ids.size())};
  c.indices = page_ids;
  c.first = {first_page};
  std::vector<int32_t> seq(kLen, 0), pos(kLen);
  for (int32_t i = 0; i < kLen; ++i) pos[static_cast<size_t>(i)] = i;
  cpu::gqa_kv_write({c.pool.data(), c.k.data(), c.v.data(), seq.data(), pos.data(), c.first.data(), c.table(),
                     kLen, kKvHeads, kDim});
  return c;
}

// Naive masked softmax attention of token t, head h over positions [lo, t], with an optional sink.
std::vector<float> reference(const Cache& c, int32_t t, int32_t h, int32_t lo, const float* sink) {
  const int32_t dim = kKvHeads * kDim, kvh = h / (kHeads / kKvHeads);
  std::vector<double> scores;
  for (int32_t s = lo; s <= t; ++s) {
    double d = 0;
    for (int32_t i = 0; i < kDim; ++i)
      d += double(c.q[size_t((t * kHeads + h) * kDim + i)]) *
           bf16_round(c.k[size_t(s * dim + kvh * kDim + i)]);
    scores.push_back(d / std::sqrt(double(kDim)));
  }
  double mx = sink ? *sink : -1e300;
  for (double s : scores) mx = std::max(mx, s);
  double denom = sink ? std::exp(*sink - mx) : 0.0;
  std::vector<double> acc(kDim, 0.0);
  for (size_t j = 0; j < scores.size(); ++j) {
    const double w = std::exp(scores[j] - mx);
    denom += w;
    for (int32_t i = 0; i < kDim; ++i)
      acc[size_t(i)] += w * bf16_round(c.v[size_t((lo + int32_t(j)) * dim + kvh * kDim + i)]);
  }
  std::vector<float> out(kDim);
  for (int32_t i = 0; i < kDim; ++i) out[size_t(i)] = float(acc[size_t(i)] / denom);
  return out;
}

std::vector<float> attend(const Cache& c, int32_t window, const float* sinks, bool window_table) {
  std::vector<float> out(size_t(kLen) * kHeads * kDim, 0.0f);
  std::vector<int32_t> seq(kLen, 0), pos(kLen);
  for (int32_t i = 0; i < kLen; ++i) pos[size_t(i)] = i;
  cpu::gqa_attention({out.data(), c.q.data(), c.pool.data(), seq.data(), pos.data(),
                      window_table ? c.first.data() : nullptr, sinks, c.table(), kLen, kHeads, kKvHeads, kDim,
                      kDim, window, 1.0f / std::sqrt(float(kDim))});
  return out;
}

}  // namespace

TEST_CASE("gqa attention: full causal attention over the pages equals the masked reference") {
  const Cache c = make_cache(0, {7, 3, 11, 0, 5, 9});  // 6 pages of 4 hold 23 tokens
  const std::vector<float> got = attend(c, 0, nullptr, false);
  for (int32_t t = 0; t < kLen; ++t) {
    for (int32_t h = 0; h < kHeads; ++h) {
      const std::vector<float> want = reference(c, t, h, 0, nullptr);
      const std::vector<float> row(got.begin() + (t * kHeads + h) * kDim,
                                   got.begin() + (t * kHeads + h + 1) * kDim);
      INFO("t " << t << " h " << h);
      CHECK(test::nmse(row, want) < 1e-10);
    }
  }
}

TEST_CASE(
    "gqa attention: a sliding window equals full attention with the window mask, pages outside unread") {
  constexpr int32_t kWindow = 6;
  // The window table holds pages 3..5 of the sequence only (positions 12..23); the last queries' windows
  // lie in them, and the pool's other slots are NaN.
  const Cache c = make_cache(3, {4, 12, 1});
  const std::vector<float> got = attend(c, kWindow, nullptr, true);
  for (int32_t t = 17; t < kLen; ++t) {  // windows [t - 5, t] within positions 12..22
    for (int32_t h = 0; h < kHeads; ++h) {
      const std::vector<float> want = reference(c, t, h, t - kWindow + 1, nullptr);
      const std::vector<float> row(got.begin() + (t * kHeads + h) * kDim,
                                   got.begin() + (t * kHeads + h + 1) * kDim);
      INFO("t " << t << " h " << h);
      for (float x : row) REQUIRE(std::isfinite(x));
      CHECK(test::nmse(row, want) < 1e-10);
    }
  }
  // The same window over a table with every page: the same rows, and different from full attention.
  const Cache all = make_cache(0, {7, 3, 11, 0, 5, 9});
  const std::vector<float> windowed = attend(all, kWindow, nullptr, false),
                           full = attend(all, 0, nullptr, false);
  const size_t row22 = size_t(22 * kHeads * kDim);
  CHECK(std::vector<float>(windowed.begin() + row22, windowed.end()) ==
        std::vector<float>(got.begin() + row22, got.end()));
  CHECK(test::nmse(std::vector<float>(full.begin() + row22, full.end()),
                   std::vector<float>(windowed.begin() + row22, windowed.end())) > 1e-4);
}

TEST_CASE("gqa attention: sink logits change the output as one more zero-valued key") {
  const Cache c = make_cache(0, {7, 3, 11, 0, 5, 9});
  const std::vector<float> sinks = {0.5f, -1.0f, 2.0f, 0.0f};
  const std::vector<float> with = attend(c, 0, sinks.data(), false), without = attend(c, 0, nullptr, false);
  CHECK(test::nmse(with, without) > 1e-3);
  for (int32_t t : {0, 9, 22}) {
    for (int32_t h = 0; h < kHeads; ++h) {
      const std::vector<float> want = reference(c, t, h, 0, &sinks[size_t(h)]);
      const std::vector<float> row(with.begin() + (t * kHeads + h) * kDim,
                                   with.begin() + (t * kHeads + h + 1) * kDim);
      CHECK(test::nmse(row, want) < 1e-10);
    }
  }
}

namespace {

constexpr int32_t kKh = 2, kVh = 4, kDk = 8, kDv = 6, kConvK = 4;
constexpr int32_t kChannels = 2 * kKh * kDk + kVh * kDv;
constexpr int64_t kConvFloats = int64_t{kConvK - 1} * kChannels;
constexpr int64_t kStateFloats = kConvFloats + int64_t{kVh} * kDk * kDv;

struct Gdn {
  std::vector<float> x, a, b, conv_w, a_log, dt_bias;
  int32_t n = 0;
};

Gdn make_gdn(int32_t n) {
  Gdn g;
  g.n = n;
  g.x = test::random_vector(int64_t{n} * kChannels, 21);
  g.a = test::random_vector(int64_t{n} * kVh, 22);
  g.b = test::random_vector(int64_t{n} * kVh, 23);
  g.conv_w = test::random_vector(int64_t{kChannels} * kConvK, 24, -0.5f, 0.5f);
  g.a_log = test::random_vector(kVh, 25, -0.5f, 0.5f);
  g.dt_bias = test::random_vector(kVh, 26, -0.1f, 0.1f);
  return g;
}

// Runs tokens [t0, t1) of g as one step of sequence 0 in state slot `slot` of `state`; returns the outputs.
std::vector<float> gdn_step(const Gdn& g, int32_t t0, int32_t t1, std::vector<float>& state, int32_t slot) {
  const int32_t n = t1 - t0;
  std::vector<int32_t> seq(size_t(n), 0), slots = {slot};
  std::vector<float> conv(size_t(n) * kChannels), out(size_t(n) * kVh * kDv);
  cpu::gdn_conv({conv.data(), g.x.data() + int64_t{t0} * kChannels, state.data(), g.conv_w.data(), seq.data(),
                 slots.data(), n, kChannels, kConvK, kStateFloats});
  cpu::gdn_recurrence({out.data(), conv.data(), g.a.data() + int64_t{t0} * kVh,
                       g.b.data() + int64_t{t0} * kVh, g.a_log.data(), g.dt_bias.data(), state.data(),
                       seq.data(), slots.data(), n, kKh, kVh, kDk, kDv, kChannels, kStateFloats,
                       kConvFloats});
  return out;
}

// The conv and delta rule written out in double from their definitions, over all tokens from a zero state.
std::vector<double> gdn_reference(const Gdn& g) {
  std::vector<double> out(size_t(g.n) * kVh * kDv), s(size_t(kVh) * kDk * kDv, 0.0);
  std::vector<double> conv(size_t(g.n) * kChannels);
  for (int32_t t = 0; t < g.n; ++t) {
    for (int32_t c = 0; c < kChannels; ++c) {
      double acc = 0;
      for (int32_t j = 0; j < kConvK; ++j) {
        const int32_t src = t - (kConvK - 1) + j;
        if (src >= 0) acc += double(g.conv_w[size_t(c * kConvK + j)]) * g.x[size_t(src * kChannels + c)];
      }
      conv[size_t(t * kChannels + c)] = acc / (1 + std::exp(-acc));
    }
  }
  for (int32_t t = 0; t < g.n; ++t) {
    for (int32_t h = 0; h < kVh; ++h) {
      const int32_t kh = h / (kVh / kKh);
      const double* row = &conv[size_t(t * kChannels)];
      std::vector<double> q(kDk), k(kDk);
      double qn = 0, kn = 0;
      for (int32_t i = 0; i < kDk; ++i) {
        q[size_t(i)] = row[kh * kDk + i];
        k[size_t(i)] = row[kKh * kDk + kh * kDk + i];
        qn += q[size_t(i)] * q[size_t(i)];
        kn += k[size_t(i)] * k[size_t(i)];
      }
      for (int32_t i = 0; i < kDk; ++i) {
        q[size_t(i)] /= std::sqrt(qn + 1e-6) * std::sqrt(double(kDk));
        k[size_t(i)] /= std::sqrt(kn + 1e-6);
      }
      const double a = g.a[size_t(t * kVh + h)] + g.dt_bias[size_t(h)];
      const double gate = -std::exp(double(g.a_log[size_t(h)])) * std::log1p(std::exp(a));
      const double beta = 1 / (1 + std::exp(-double(g.b[size_t(t * kVh + h)])));
      double* S = &s[size_t(h) * kDk * kDv];
      for (int32_t e = 0; e < kDk * kDv; ++e) S[e] *= std::exp(gate);
      for (int32_t j = 0; j < kDv; ++j) {
        double kv = 0;
        for (int32_t i = 0; i < kDk; ++i) kv += S[i * kDv + j] * k[size_t(i)];
        const double delta = (row[2 * kKh * kDk + h * kDv + j] - kv) * beta;
        for (int32_t i = 0; i < kDk; ++i) S[i * kDv + j] += k[size_t(i)] * delta;
      }
      for (int32_t j = 0; j < kDv; ++j) {
        double o = 0;
        for (int32_t i = 0; i < kDk; ++i) o += S[i * kDv + j] * q[size_t(i)];
        out[size_t((t * kVh + h) * kDv + j)] = o;
      }
    }
  }
  return out;
}

}  // namespace

TEST_CASE("gated deltanet: a prefill of N tokens then a decode equals N + 1 decodes, state included") {
  constexpr int32_t kN = 11;
  const Gdn g = make_gdn(kN + 1);
  std::vector<float> chunked(3 * kStateFloats, 0.0f), stepwise(3 * kStateFloats, 0.0f);
  std::vector<float> out_chunked = gdn_step(g, 0, kN, chunked, 2);
  const std::vector<float> last = gdn_step(g, kN, kN + 1, chunked, 2);
  out_chunked.insert(out_chunked.end(), last.begin(), last.end());
  std::vector<float> out_steps;
  for (int32_t t = 0; t <= kN; ++t) {
    const std::vector<float> o = gdn_step(g, t, t + 1, stepwise, 1);
    out_steps.insert(out_steps.end(), o.begin(), o.end());
  }
  CHECK(out_chunked == out_steps);
  CHECK(std::vector<float>(chunked.begin() + 2 * kStateFloats, chunked.end()) ==
        std::vector<float>(stepwise.begin() + kStateFloats, stepwise.begin() + 2 * kStateFloats));
  // Only the sequence's own slot moved.
  for (int64_t i = 0; i < 2 * kStateFloats; ++i) REQUIRE(chunked[size_t(i)] == 0.0f);
  // And both are the delta rule's definition.
  const std::vector<double> want = gdn_reference(g);
  std::vector<float> wantf(want.begin(), want.end());
  CHECK(test::nmse(out_chunked, wantf) < 1e-10);
}

TEST_CASE("gated deltanet: two sequences in one call equal each alone, in their own slots") {
  const Gdn g = make_gdn(10);
  std::vector<float> alone(2 * kStateFloats, 0.0f), together(2 * kStateFloats, 0.0f);
  const std::vector<float> a = gdn_step(g, 0, 6, alone, 0);   // sequence A: tokens 0..5 in slot 0
  const std::vector<float> b = gdn_step(g, 6, 10, alone, 1);  // sequence B: tokens 6..9 in slot 1
  std::vector<int32_t> seq = {0, 0, 0, 0, 0, 0, 1, 1, 1, 1}, slots = {0, 1};
  std::vector<float> conv(10 * kChannels), out(10 * kVh * kDv);
  cpu::gdn_conv({conv.data(), g.x.data(), together.data(), g.conv_w.data(), seq.data(), slots.data(), 10,
                 kChannels, kConvK, kStateFloats});
  cpu::gdn_recurrence({out.data(), conv.data(), g.a.data(), g.b.data(), g.a_log.data(), g.dt_bias.data(),
                       together.data(), seq.data(), slots.data(), 10, kKh, kVh, kDk, kDv, kChannels,
                       kStateFloats, kConvFloats});
  std::vector<float> both = a;
  both.insert(both.end(), b.begin(), b.end());
  CHECK(out == both);
  CHECK(together == alone);
}

TEST_CASE("gated rmsnorm and sigmoid gate: their definitions") {
  const std::vector<float> x = {1, -2, 3, 0.5f}, z = {0.3f, -1, 2, 0}, w = {1, 0.5f, 2, 1};
  std::vector<float> out(4);
  cpu::gated_rmsnorm({out.data(), x.data(), z.data(), w.data(), 1, 4, 1e-6f});
  const double rms = std::sqrt((1 + 4 + 9 + 0.25) / 4 + 1e-6);
  for (size_t i = 0; i < 4; ++i) CHECK(out[i] == Approx(x[i] / rms * w[i] * z[i] / (1 + std::exp(-z[i]))));
  std::vector<float> y = {1, 2, 9, 3, 4, 9};  // 2 rows, stride 3, dim 2
  const std::vector<float> gate = {0, 100, -100, 0};
  cpu::sigmoid_gate({y.data(), gate.data(), 2, 2, 3, 2});
  CHECK(y[0] == Approx(0.5));
  CHECK(y[1] == Approx(2.0));
  CHECK(y[2] == 9);
  CHECK(y[3] == Approx(0.0).margin(1e-30));
  CHECK(y[4] == Approx(2.0));
}
