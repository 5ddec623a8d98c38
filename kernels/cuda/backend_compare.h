// Runs every CUDA kernel against its CPU reference on the same seeded inputs and reports the normalized
// error (llama.cpp's test-backend-ops NMSE; for integer outputs the fraction of entries that differ) and
// the time per call of each backend. Used by kernels_tests (tiny shapes) and tokenline_kernels_check.
// REQUIRES: a CUDA device (cuda::device_count() > 0).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tokenline::cuda {

struct CompareDims {
  int32_t tokens = 4;    // decode tokens, one per sequence
  int32_t context = 40;  // tokens already cached per sequence
  int32_t page_size = 8;
  int32_t hidden = 256, heads = 4, q_lora = 64, kv_lora = 128, rope = 16, nope = 32, v = 32;
  int32_t idx_heads = 4, idx_dim = 32, topk = 16;
  int32_t experts = 8, expert_topk = 2, n_group = 4, topk_group = 2, inter = 64;
  int32_t vocab = 512;
  int32_t gpu_repeats = 1;  // timed GPU calls after one untimed call
  uint64_t seed = 1;
};

CompareDims tiny_dims();   // seconds on a CPU, used by the tests
CompareDims check_dims();  // GLM-5.3-like per-GPU shapes for tokenline_kernels_check (minutes on CPU cores)

struct OpComparison {
  std::string op;  // the ledger's op name where one exists (docs/architecture.md "The four contracts", 1)
  std::string shape;
  std::string metric;  // "nmse" or "mismatch"
  double error = 0.0;
  double tolerance = 0.0;
  double cpu_ms = 0.0, gpu_ms = 0.0;
  bool ok() const { return error <= tolerance; }
};

std::vector<OpComparison> compare_backends(const CompareDims& dims);

}  // namespace tokenline::cuda
