// Parallel: how one serving instance splits a model over its GPUs. Parsed from names such as "tp8",
// "tp2", "dp8-ep8", "tp8-ep8", "dp4-tp2-ep8"; validated against a ModelConfig before use.
#pragma once

#include <string>
#include <string_view>

namespace tokenline {

struct ModelConfig;

struct Parallel {
  int tp = 1;            // attention tensor parallelism inside one attention group (heads split tp ways)
  int dp_attention = 1;  // attention data-parallel ranks: each holds its own requests and their KV
  int ep = 1;            // expert parallelism: routed experts split ep ways (1: experts split by TP)

  int gpus() const { return tp * dp_attention; }
  // Tensor parallelism inside each expert (gpus / ep): 8 for pure tp8, 1 for dp8-ep8.
  int moe_tp() const { return gpus() / ep; }
  bool dp() const { return dp_attention > 1; }
  std::string name() const;  // canonical form: "tp8", "dp8-ep8", "dp4-tp2-ep8"
};

// Parses '-'-separated parts tpN, dpN, epN (each at most once, N >= 1); throws InputError naming `where`.
Parallel parse_parallel(std::string_view name, const std::string& where);

// Throws InputError (at `where`) when the layout does not divide the model: heads % tp, experts % ep,
// gpus % ep, vocab % gpus, or ep > 1 on a dense model.
void validate_parallel(const Parallel& p, const ModelConfig& cfg, const std::string& where);

}  // namespace tokenline
