// The candidate deployments `tokenline plan` considers for a model on a number of GPUs: co-located
// instances of one layout that fill the GPUs, and PD xPyD pools (a prefill layout, a decode layout) that
// fill them, each crossed with a chunk size and a max-running limit. Deterministic order; ids are indexes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/model/parallel.h"

namespace tokenline {

struct ModelConfig;

struct Candidate {
  int32_t id = 0;
  bool pd = false;
  Parallel prefill;               // PD only: each prefill instance's layout
  Parallel layout;                // co-located: every instance's layout; PD: each decode instance's
  int32_t instances = 1;          // co-located: instances; PD: decode instances
  int32_t prefill_instances = 0;  // PD only
  int64_t chunk_tokens = 0;
  int32_t max_running = 0;  // per attention rank, as `tokenline sim --max-running`

  int32_t gpus() const;
  std::string deployment() const;    // "2x dp8-ep8" or "1P tp8 + 1D dp8-ep8"
  std::string parallel_arg() const;  // `tokenline sim --parallel`: "dp8-ep8" or "tp8,dp8-ep8"
  std::string pd_arg() const;        // "" or "1P1D"
};

struct SpaceOptions {
  int32_t gpus = 8;
  std::vector<int64_t> chunk_tokens = {8192, 16384, 32768};
  std::vector<int32_t> max_running = {32, 256};
  bool pd = true;
};

// The valid layouts of exactly `gpus` GPUs for the model: tp t (dividing the heads) x attention-dp
// gpus/t, with ep 1 or ep = gpus for MoE models; ordered by tp, then ep.
std::vector<Parallel> layouts_of_size(const ModelConfig& model, int32_t gpus);

// Every candidate: sizes dividing opts.gpus ascending; co-located (gpus/size instances) first, then PD
// pools (prefill layouts without attention-dp, decode layouts with ep = size on MoE models).
std::vector<Candidate> enumerate_candidates(const ModelConfig& model, const SpaceOptions& opts);

}  // namespace tokenline
