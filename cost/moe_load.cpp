#include "cost/moe_load.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <numeric>

namespace tokenline {
namespace {

std::vector<double> normalized(std::vector<double> v) {
  const double sum = std::accumulate(v.begin(), v.end(), 0.0);
  if (sum <= 0) {
    std::fill(v.begin(), v.end(), 1.0 / static_cast<double>(v.size()));
  } else {
    for (double& x : v) x /= sum;
  }
  return v;
}

// Zipf popularity of one layer: popularity rank i gets (i + 1)^-alpha, ranks assigned to experts by a
// Fisher-Yates shuffle so the hot experts sit on random EP ranks.
std::vector<double> zipf_layer(int32_t experts, double alpha, Rng& rng) {
  std::vector<int32_t> order(static_cast<size_t>(experts));
  std::iota(order.begin(), order.end(), 0);
  for (int32_t i = experts - 1; i > 0; --i) {
    const auto j = static_cast<int32_t>(rng.uniform_int(0, i));
    std::swap(order[static_cast<size_t>(i)], order[static_cast<size_t>(j)]);
  }
  std::vector<double> load(static_cast<size_t>(experts));
  for (int32_t i = 0; i < experts; ++i) {
    load[static_cast<size_t>(order[static_cast<size_t>(i)])] = std::pow(double(i + 1), -alpha);
  }
  return normalized(std::move(load));
}

// Static placement: expert e on rank e / (E / ep), as checkpoints lay experts out.
std::vector<double> static_rank_shares(const std::vector<double>& load, int32_t ep) {
  const size_t per_rank = load.size() / static_cast<size_t>(ep);
  std::vector<double> shares(static_cast<size_t>(ep), 0.0);
  for (size_t e = 0; e < load.size(); ++e) shares[e / per_rank] += load[e];
  return shares;
}

}  // namespace

std::string_view to_string(ExpertSkew skew) {
  switch (skew) {
    case ExpertSkew::kUniform:
      return "uniform";
    case ExpertSkew::kZipf:
      return "zipf";
    case ExpertSkew::kHistogram:
      return "histogram";
  }
  return "";
}

std::vector<double> eplb_rank_shares(const std::vector<double>& load_in, int32_t ep, int32_t redundant) {
  assert(ep > 0 && load_in.size() % static_cast<size_t>(ep) == 0 && "experts must divide over ep");
  assert((load_in.size() + static_cast<size_t>(redundant)) % static_cast<size_t>(ep) == 0);
  const std::vector<double> load = normalized(load_in);
  const size_t experts = load.size();
  std::vector<int32_t> copies(experts, 1);
  for (int32_t r = 0; r < redundant; ++r) {  // each spare slot to the expert with the heaviest copy
    size_t best = 0;
    for (size_t e = 1; e < experts; ++e) {
      if (load[e] / copies[e] > load[best] / copies[best]) best = e;
    }
    ++copies[best];
  }
  struct Item {
    double load;
    size_t expert;
  };
  std::vector<Item> items;
  for (size_t e = 0; e < experts; ++e) {
    for (int32_t c = 0; c < copies[e]; ++c) items.push_back({load[e] / copies[e], e});
  }
  std::stable_sort(items.begin(), items.end(), [](const Item& a, const Item& b) { return a.load > b.load; });
  const size_t slots = items.size() / static_cast<size_t>(ep);
  std::vector<double> shares(static_cast<size_t>(ep), 0.0);
  std::vector<size_t> used(static_cast<size_t>(ep), 0);
  for (const Item& item : items) {
    size_t best = shares.size();
    for (size_t r = 0; r < shares.size(); ++r) {
      if (used[r] < slots && (best == shares.size() || shares[r] < shares[best])) best = r;
    }
    shares[best] += item.load;
    ++used[best];
  }
  return shares;
}

ExpertLoadModel::ExpertLoadModel(int32_t experts, int32_t ep, int32_t layers, const MoeLoadOptions& options,
                                 uint64_t placement_seed)
    : ep_(ep) {
  assert(experts > 0 && ep > 0 && experts % ep == 0 && "experts must divide over ep");
  Rng placement(placement_seed, "expert_placement");
  const int32_t rows = options.skew == ExpertSkew::kHistogram ? static_cast<int32_t>(options.histogram.size())
                                                              : std::max<int32_t>(layers, 1);
  for (int32_t l = 0; l < rows; ++l) {
    std::vector<double> load;
    switch (options.skew) {
      case ExpertSkew::kUniform:
        load.assign(static_cast<size_t>(experts), 1.0 / experts);
        break;
      case ExpertSkew::kZipf:
        load = zipf_layer(experts, options.zipf_alpha, placement);
        break;
      case ExpertSkew::kHistogram:
        load = normalized(options.histogram[static_cast<size_t>(l)]);
        assert(load.size() == static_cast<size_t>(experts) && "histogram row size != experts");
        break;
    }
    shares_.push_back(options.eplb ? eplb_rank_shares(load, ep, options.redundant_experts)
                                   : static_rank_shares(load, ep));
  }
}

double ExpertLoadModel::draw_imbalance(double pairs, Rng& rng) const {
  if (pairs <= 0 || ep_ <= 1 || shares_.empty()) return 1.0;
  const auto layer = static_cast<size_t>(rng.uniform_int(0, static_cast<int64_t>(shares_.size()) - 1));
  double busiest = 0;
  for (double q : shares_[layer]) {
    const double mean = pairs * q;
    const double load = std::max(0.0, mean + std::sqrt(mean * (1 - q)) * rng.normal());
    busiest = std::max(busiest, load);
  }
  return std::max(1.0, busiest * ep_ / pairs);
}

double ExpertLoadModel::expected_imbalance() const {
  if (shares_.empty()) return 1.0;
  double sum = 0;
  for (const auto& row : shares_) sum += *std::max_element(row.begin(), row.end()) * ep_;
  return sum / static_cast<double>(shares_.size());
}

}  // namespace tokenline
