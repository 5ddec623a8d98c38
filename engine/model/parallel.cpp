#include "engine/model/parallel.h"

#include <charconv>

#include "common/input_error.h"
#include "engine/model/model_config.h"

namespace tokenline {
namespace {

constexpr int kMaxGpus = 4096;  // a sanity bound on any one factor, far above any NVLink domain

const char* kExpected = "parts tpN, dpN, epN joined by '-' (e.g. tp8, tp2, dp8-ep8, tp8-ep8)";

int parse_factor(std::string_view digits, std::string_view whole, const std::string& where) {
  int value = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc() || ptr != digits.data() + digits.size() || value < 1 || value > kMaxGpus) {
    throw InputError(where, kExpected, "'" + std::string(whole) + "'");
  }
  return value;
}

}  // namespace

std::string Parallel::name() const {
  std::string s;
  if (dp_attention > 1) s += "dp" + std::to_string(dp_attention);
  if (tp > 1 || dp_attention == 1) s += (s.empty() ? "" : "-") + std::string("tp") + std::to_string(tp);
  if (ep > 1) s += "-ep" + std::to_string(ep);
  return s;
}

Parallel parse_parallel(std::string_view name, const std::string& where) {
  Parallel p;
  bool seen_tp = false, seen_dp = false, seen_ep = false;
  if (name.empty()) throw InputError(where, kExpected, "an empty name");
  size_t start = 0;
  while (start <= name.size()) {
    size_t end = name.find('-', start);
    if (end == std::string_view::npos) end = name.size();
    std::string_view part = name.substr(start, end - start);
    if (part.size() < 3) throw InputError(where, kExpected, "'" + std::string(name) + "'");
    std::string_view key = part.substr(0, 2);
    int value = parse_factor(part.substr(2), name, where);
    bool* seen = key == "tp" ? &seen_tp : key == "dp" ? &seen_dp : key == "ep" ? &seen_ep : nullptr;
    if (seen == nullptr || *seen) throw InputError(where, kExpected, "'" + std::string(name) + "'");
    *seen = true;
    (key == "tp" ? p.tp : key == "dp" ? p.dp_attention : p.ep) = value;
    start = end + 1;
  }
  return p;
}

void validate_parallel(const Parallel& p, const ModelConfig& cfg, const std::string& where) {
  const std::string n = p.name();
  if (cfg.heads % p.tp != 0) {
    throw InputError(where, "a TP size dividing the model's " + std::to_string(cfg.heads) + " heads",
                     "tp" + std::to_string(p.tp) + " in " + n);
  }
  // KDA's heads split over TP as attention heads do (vLLM's kda_state_shape divides them; aiconfigurator's
  // Kimi-K3 model refuses a TP size that does not divide them).
  if (cfg.mixer_layers(MixerKind::kKda) > 0 && cfg.kda.heads % p.tp != 0) {
    throw InputError(where,
                     "a TP size dividing the model's " + std::to_string(cfg.kda.heads) +
                         " KDA heads (linear_attn_config.num_heads)",
                     "tp" + std::to_string(p.tp) + " in " + n);
  }
  if (p.ep > 1 && !cfg.is_moe()) {
    throw InputError(where, "no expert parallelism for the dense model " + cfg.name, n);
  }
  if (cfg.is_moe() && cfg.routed_experts % p.ep != 0) {
    throw InputError(where,
                     "an EP size dividing the model's " + std::to_string(cfg.routed_experts) + " experts",
                     "ep" + std::to_string(p.ep) + " in " + n);
  }
  if (p.gpus() % p.ep != 0) {
    throw InputError(where, "an EP size dividing the " + std::to_string(p.gpus()) + " GPUs (tp x dp)",
                     "ep" + std::to_string(p.ep) + " in " + n);
  }
  if (cfg.vocab % p.gpus() != 0 && cfg.vocab % p.tp != 0) {
    throw InputError(where, "a layout whose TP size divides the vocabulary " + std::to_string(cfg.vocab), n);
  }
}

}  // namespace tokenline
