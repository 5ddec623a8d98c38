#include "plan/candidate_space.h"

#include <exception>

#include "engine/model/model_config.h"

namespace tokenline {
namespace {

bool is_valid(const Parallel& p, const ModelConfig& model) {
  try {
    validate_parallel(p, model, "plan");
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

std::vector<int32_t> divisors(int32_t n) {
  std::vector<int32_t> out;
  for (int32_t d = 1; d <= n; ++d) {
    if (n % d == 0) out.push_back(d);
  }
  return out;
}

// Crosses one deployment shape with the chunk sizes and max-running limits.
void add_knobs(Candidate shape, const SpaceOptions& opts, std::vector<Candidate>& out) {
  for (int64_t chunk : opts.chunk_tokens) {
    for (int32_t running : opts.max_running) {
      shape.id = static_cast<int32_t>(out.size());
      shape.chunk_tokens = chunk;
      shape.max_running = running;
      out.push_back(shape);
    }
  }
}

void add_colocated(const ModelConfig& model, const SpaceOptions& opts, std::vector<Candidate>& out) {
  for (int32_t size : divisors(opts.gpus)) {
    for (const Parallel& p : layouts_of_size(model, size)) {
      Candidate c;
      c.layout = p;
      c.instances = opts.gpus / size;
      add_knobs(c, opts, out);
    }
  }
}

// PD pools: x prefill instances of size sp and y decode instances of size sd with x*sp + y*sd = gpus.
void add_pd(const ModelConfig& model, const SpaceOptions& opts, std::vector<Candidate>& out) {
  for (int32_t sp : divisors(opts.gpus)) {
    for (int32_t sd : divisors(opts.gpus)) {
      for (int32_t x = 1; x * sp < opts.gpus; ++x) {
        const int32_t rest = opts.gpus - x * sp;
        if (rest % sd != 0) continue;
        for (const Parallel& pre : layouts_of_size(model, sp)) {
          if (pre.dp()) continue;  // prefill: attention-dp only splits a batch it rarely has
          for (const Parallel& dec : layouts_of_size(model, sd)) {
            if (model.is_moe() && dec.ep != sd) continue;  // decode: experts spread over the instance
            Candidate c;
            c.pd = true;
            c.prefill = pre;
            c.prefill_instances = x;
            c.layout = dec;
            c.instances = rest / sd;
            add_knobs(c, opts, out);
          }
        }
      }
    }
  }
}

}  // namespace

int32_t Candidate::gpus() const {
  return (pd ? prefill_instances * prefill.gpus() : 0) + instances * layout.gpus();
}

std::string Candidate::deployment() const {
  if (!pd) return std::to_string(instances) + "x " + layout.name();
  return std::to_string(prefill_instances) + "P " + prefill.name() + " + " + std::to_string(instances) +
         "D " + layout.name();
}

std::string Candidate::parallel_arg() const {
  if (!pd) return layout.name();
  std::string s;
  for (int32_t i = 0; i < prefill_instances; ++i) s += (s.empty() ? "" : ",") + prefill.name();
  for (int32_t i = 0; i < instances; ++i) s += "," + layout.name();
  return s;
}

std::string Candidate::pd_arg() const {
  if (!pd) return "";
  return std::to_string(prefill_instances) + "P" + std::to_string(instances) + "D";
}

std::vector<Parallel> layouts_of_size(const ModelConfig& model, int32_t gpus) {
  std::vector<Parallel> out;
  for (int32_t tp : divisors(gpus)) {
    for (int32_t ep : {1, gpus}) {
      if (ep > 1 && !model.is_moe()) continue;
      if (ep == gpus && gpus == 1 && !out.empty()) continue;  // ep1 already listed
      Parallel p;
      p.tp = tp;
      p.dp_attention = gpus / tp;
      p.ep = ep;
      if (is_valid(p, model)) out.push_back(p);
    }
  }
  return out;
}

std::vector<Candidate> enumerate_candidates(const ModelConfig& model, const SpaceOptions& opts) {
  std::vector<Candidate> out;
  add_colocated(model, opts, out);
  if (opts.pd) add_pd(model, opts, out);
  return out;
}

}  // namespace tokenline
