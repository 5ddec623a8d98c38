// GpuPrice: a hardware's list price per GPU-hour, read from the optional "price" block of its JSON
// (topologies/hardware/<name>.json):
//   "price": {"usd_per_gpu_hour": {"value": 4.54, "source": "<who lists it, where>", "date": "YYYY-MM-DD"}}
// The price is an on-demand cloud list price at that date (docs/cost.md); `tokenline sim --gpu-price list`
// takes it, --gpu-price USD replaces it.
#pragma once

#include <string>

namespace tokenline {

struct GpuPrice {
  double usd_per_gpu_hour = 0;  // 0: the hardware JSON lists no price
  std::string source;
  std::string date;
};

// The price block of a hardware preset or JSON path. Throws InputError for a malformed block (the file and
// field named); a JSON without one gives usd_per_gpu_hour 0.
GpuPrice load_gpu_price(const std::string& name_or_path);

}  // namespace tokenline
