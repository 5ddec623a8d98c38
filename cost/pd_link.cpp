#include "cost/pd_link.h"

#include <cassert>

namespace tokenline {
namespace {

constexpr double kIb200BytesPerS = 200e9 / 8;  // 200 Gb/s line rate
constexpr double kIb400BytesPerS = 400e9 / 8;  // 400 Gb/s NDR line rate

}  // namespace

std::string_view to_string(PdLink link) {
  switch (link) {
    case PdLink::kNvlink:
      return "nvlink";
    case PdLink::kIb200:
      return "ib200";
    case PdLink::kIb400:
      return "ib400";
  }
  return "";
}

PdLinkRate pd_link_rate(PdLink link, const CostModel& cm, int gpus_sending) {
  assert(gpus_sending >= 1 && "at least one GPU sends");
  const Hardware& hw = cm.hardware;
  const bool ideal = cm.options.ideal;
  PdLinkRate rate;
  switch (link) {
    case PdLink::kNvlink:
      rate.bytes_per_s = hw.nvlink_bw * (ideal ? 1.0 : hw.efficiency.nvlink);
      rate.latency_s = ideal ? 0 : hw.nvlink_latency_s;
      break;
    case PdLink::kIb200:
    case PdLink::kIb400:
      rate.bytes_per_s = (link == PdLink::kIb200 ? kIb200BytesPerS : kIb400BytesPerS) *
                         (ideal ? 1.0 : hw.efficiency.ib) * hw.nics_per_gpu;
      rate.latency_s = ideal ? 0 : hw.ib_latency_s;
      break;
  }
  rate.bytes_per_s *= gpus_sending;
  return rate;
}

}  // namespace tokenline
