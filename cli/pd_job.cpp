#include "cli/pd_job.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>
#include <sstream>

#include "common/input_error.h"
#include "common/input_limits.h"
#include "common/number_text.h"
#include "engine/core/pd_handoff.h"

namespace tokenline {
namespace {

int32_t parse_count(const std::string& text, const std::string& spec) {
  if (text.empty() || text.size() > 3)
    throw InputError("--pd", "xPyD with x, y >= 1 (e.g. 1P1D, 2P1D)", "'" + spec + "'");
  for (char c : text) {
    if (std::isdigit(static_cast<unsigned char>(c)) == 0)
      throw InputError("--pd", "xPyD with x, y >= 1 (e.g. 1P1D, 2P1D)", "'" + spec + "'");
  }
  const int32_t n = std::stoi(text);
  if (n < 1) throw InputError("--pd", "xPyD with x, y >= 1 (e.g. 1P1D, 2P1D)", "'" + spec + "'");
  return n;
}

// One histogram row per non-empty line: the MoE layer's expert counts, separated by commas or spaces.
// Counts are bounded so that a layer's sum stays finite: a day at 1M tokens/s routes 8.6e10 tokens.
constexpr double kMaxExpertCount = 1e15;

std::vector<std::vector<double>> read_histogram(const std::string& path, int32_t experts) {
  const std::string option = "--expert-skew histogram:" + path;
  const std::optional<std::string> text = read_bounded_file(path, limits::kMaxProfileFileBytes, option);
  if (!text) throw InputError(option, "a readable file", "cannot open it");
  std::istringstream in(*text);
  std::vector<std::vector<double>> rows;
  std::string line;
  for (int64_t line_no = 1; std::getline(in, line); ++line_no) {
    for (char& c : line) c = c == ',' ? ' ' : c;
    std::istringstream fields(line);
    std::vector<double> row;
    double v = 0;
    while (fields >> v) {
      if (!(v >= 0 && v <= kMaxExpertCount))
        throw InputError(path + ":" + std::to_string(line_no), "expert counts in [0, 1e15]",
                         std::to_string(v));
      row.push_back(v);
    }
    if (!fields.eof()) throw InputError(path + ":" + std::to_string(line_no), "numbers", "'" + line + "'");
    if (row.empty()) continue;
    if (static_cast<int32_t>(row.size()) != experts)
      throw InputError(path + ":" + std::to_string(line_no), std::to_string(experts) + " expert counts",
                       std::to_string(row.size()));
    rows.push_back(std::move(row));
  }
  if (rows.empty()) throw InputError(path, "one line of expert counts per MoE layer", "no counts");
  return rows;
}

}  // namespace

std::string_view to_string(PdTransferMode mode) {
  switch (mode) {
    case PdTransferMode::kWholeRequest:
      return "whole";
    case PdTransferMode::kLayerStream:
      return "layer";
  }
  return "";
}

PdConfig parse_pd(const std::string& spec, const std::string& link, const std::string& mode) {
  PdConfig pd;
  pd.prefill_instances = 0;
  pd.decode_instances = 0;
  if (spec.empty()) return pd;
  const size_t p = spec.find_first_of("Pp");
  const size_t d = spec.find_first_of("Dd");
  if (p == std::string::npos || d == std::string::npos || d != spec.size() - 1 || p > d)
    throw InputError("--pd", "xPyD with x, y >= 1 (e.g. 1P1D, 2P1D)", "'" + spec + "'");
  pd.prefill_instances = parse_count(spec.substr(0, p), spec);
  pd.decode_instances = parse_count(spec.substr(p + 1, d - p - 1), spec);
  if (link == "nvlink") {
    pd.link = PdLink::kNvlink;
  } else if (link == "ib200") {
    pd.link = PdLink::kIb200;
  } else if (link == "ib400") {
    pd.link = PdLink::kIb400;
  } else {
    throw InputError("--pd-link", "nvlink, ib200 or ib400", "'" + link + "'");
  }
  if (mode == "whole") {
    pd.mode = PdTransferMode::kWholeRequest;
  } else if (mode == "layer") {
    pd.mode = PdTransferMode::kLayerStream;
  } else {
    throw InputError("--pd-transfer", "whole or layer", "'" + mode + "'");
  }
  return pd;
}

void apply_pd_path_costs(SimConfig& config, PdConfig& pd, const OpProfile* profile) {
  if (profile == nullptr) return;
  config.feed.first_token_latency_s += profile->param(TimingParam::kPdFirstTokenLatencyS);
  pd.handoff_per_token_s = profile->param(TimingParam::kPdHandoffPerTokenS);
}

void apply_pd_roles(SimConfig& config, const PdConfig& pd) {
  const InstanceConfig& first_decode = config.instances[static_cast<size_t>(pd.prefill_instances)].config;
  for (int32_t i = 0; i < config.instance_count(); ++i) {
    InstanceConfig& c = config.instances[static_cast<size_t>(i)].config;
    const bool prefill = i < pd.prefill_instances;
    c.scheduler.role = prefill ? InstanceRole::kPrefillOnly : InstanceRole::kDecodeOnly;
    if (!prefill &&
        (c.dp_ranks != first_decode.dp_ranks || c.kv.total_pages != first_decode.kv.total_pages)) {
      throw InputError("--parallel", "one layout for every decode instance",
                       config.instances[static_cast<size_t>(i)].parallel_name + " and " +
                           config.instances[static_cast<size_t>(pd.prefill_instances)].parallel_name);
    }
  }
}

void check_pd_capacity(const SimConfig& config, const PdConfig& pd, ArrivalSource& workload) {
  const KvConfig& kv = config.instances[static_cast<size_t>(pd.prefill_instances)].config.kv;
  const PdHandoff handoff(
      PdPoolShape{.decode_pages_per_rank = kv.total_pages, .page_tokens = kv.page_tokens});
  TimedRequest a;
  int64_t smallest = -1, requests = 0;
  while (workload.next(a)) {
    if (a.spec.prompt_tokens <= 0 || a.spec.output_tokens <= 0) continue;  // rejected on arrival anyway
    ++requests;
    const int64_t pages = handoff.decode_pages(a.spec.prompt_tokens, a.spec.output_tokens);
    if (smallest < 0 || pages < smallest) smallest = pages;
  }
  if (requests > 0 && smallest > kv.total_pages) {
    throw InputError("--pd", "a decode pool whose ranks hold at least one request of the workload",
                     "decode ranks of " + std::to_string(kv.total_pages) +
                         " pages; the smallest request needs " + std::to_string(smallest) + " pages (" +
                         std::to_string(kv.page_tokens) + " tokens each)");
  }
}

StepNoise parse_step_noise(const StepNoiseOptions& o, int32_t experts) {
  StepNoise n;
  const std::string& s = o.expert_skew;
  if (s == "uniform") {
    n.moe.skew = ExpertSkew::kUniform;
  } else if (s.rfind("zipf:", 0) == 0) {
    n.moe.skew = ExpertSkew::kZipf;
    size_t used = 0;
    try {
      n.moe.zipf_alpha = std::stod(s.substr(5), &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != s.size() - 5 || !(n.moe.zipf_alpha >= 0))
      throw InputError("--expert-skew", "zipf:<alpha >= 0>", "'" + s + "'");
  } else if (s.rfind("histogram:", 0) == 0) {
    n.moe.skew = ExpertSkew::kHistogram;
    n.moe.histogram = read_histogram(s.substr(10), experts);
  } else {
    throw InputError("--expert-skew", "uniform, zipf:<alpha> or histogram:<file>", "'" + s + "'");
  }
  n.expert_skew = s != "uniform" || o.eplb_redundant >= 0;
  n.moe.eplb = o.eplb_redundant >= 0;
  n.moe.redundant_experts = std::max(o.eplb_redundant, 0);
  if (o.eplb_redundant < -1 || o.eplb_redundant > experts)
    throw InputError(
        "--eplb-redundant",
        "-1 (no EPLB) or 0 to " + std::to_string(experts) + " redundant experts (one replica each)",
        std::to_string(o.eplb_redundant));
  if (o.mtp_drafts < 0) throw InputError("--mtp", "draft tokens >= 0", std::to_string(o.mtp_drafts));
  if (!(o.mtp_accept_mean >= 0 && o.mtp_accept_mean <= 1))
    throw InputError("--mtp-accept", "a mean acceptance in [0, 1]", std::to_string(o.mtp_accept_mean));
  // A Beta with mean m has a standard deviation below sqrt(m (1 - m)) (0 at m = 0 or 1).
  const double most_std = std::sqrt(o.mtp_accept_mean * (1 - o.mtp_accept_mean));
  if (!(o.mtp_accept_std >= 0) || (o.mtp_accept_std > 0 && !(o.mtp_accept_std < most_std)))
    throw InputError("--mtp-accept-std",
                     "a standard deviation in [0, sqrt(m (1 - m))) = [0, " + number_text(most_std) +
                         ") for --mtp-accept m = " + number_text(o.mtp_accept_mean),
                     number_text(o.mtp_accept_std));
  n.mtp = o.mtp_drafts > 0;
  n.acceptance = MtpAcceptance{.mean = o.mtp_accept_mean, .stddev = o.mtp_accept_std};
  return n;
}

}  // namespace tokenline
