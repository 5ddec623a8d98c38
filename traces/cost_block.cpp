#include "traces/cost_block.h"

#include <cmath>
#include <nlohmann/json.hpp>

namespace tokenline {
namespace {

using Json = nlohmann::ordered_json;

constexpr double kRoundTo = 1e9;  // as metrics.json
constexpr double kMillion = 1e6;  // tokens per quoted unit
double rounded(double v) {
  return std::isfinite(v) ? std::round(v * kRoundTo) / kRoundTo : 0.0;
}

Json per_million(double usd, int64_t tokens) {
  return tokens > 0 ? Json(rounded(usd * kMillion / static_cast<double>(tokens))) : Json(nullptr);
}

}  // namespace

std::string cost_block_json(const CostInputs& in) {
  const double usd = in.gpu_hours * in.usd_per_gpu_hour;
  const Json j = {{"usd_per_gpu_hour", rounded(in.usd_per_gpu_hour)},
                  {"price_source", in.price_source},
                  {"gpu_hours", rounded(in.gpu_hours)},
                  {"usd_total", rounded(usd)},
                  {"usd_per_million_input_tokens", per_million(usd, in.input_tokens)},
                  {"usd_per_million_output_tokens", per_million(usd, in.output_tokens)},
                  {"usd_per_million_cached_tokens", per_million(usd, in.cached_tokens)}};
  return j.dump();
}

}  // namespace tokenline
