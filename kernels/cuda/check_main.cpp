// tokenline_kernels_check: every CUDA kernel against its CPU reference at GLM-5.3-like per-GPU shapes;
// prints one row per op (error, CPU and GPU time per call) and exits 1 if any error exceeds its bound.
// `--tiny` uses the test shapes. Exits 0 with SKIP where no CUDA device exists.
#include <cstdio>
#include <cstring>

#include "kernels/cuda/backend_compare.h"
#include "kernels/cuda/device_memory.h"

int main(int argc, char** argv) {
  using namespace tokenline::cuda;
  if (device_count() == 0) {
    std::printf("SKIP: no CUDA device\n");
    return 0;
  }
  const bool tiny = argc > 1 && std::strcmp(argv[1], "--tiny") == 0;
  const CompareDims dims = tiny ? tiny_dims() : check_dims();
  std::printf("%-20s %-28s %-14s %12s %10s %12s %12s %8s\n", "op", "shape", "metric", "error", "bound",
              "cpu_ms", "gpu_ms", "speedup");
  int failures = 0;
  for (const OpComparison& r : compare_backends(dims)) {
    std::printf("%-20s %-28s %-14s %12.3e %10.1e %12.3f %12.4f %8.1f %s\n", r.op.c_str(), r.shape.c_str(),
                r.metric.c_str(), r.error, r.tolerance, r.cpu_ms, r.gpu_ms,
                r.gpu_ms > 0 ? r.cpu_ms / r.gpu_ms : 0.0, r.ok() ? "" : "FAIL");
    failures += r.ok() ? 0 : 1;
  }
  std::printf("%s: %d op(s) over their error bound\n", failures == 0 ? "PASS" : "FAIL", failures);
  return failures == 0 ? 0 : 1;
}
