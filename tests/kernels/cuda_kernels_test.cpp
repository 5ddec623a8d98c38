// CUDA kernels against the CPU reference (tiny shapes). Skips with a message where no device exists.
#include <catch2/catch.hpp>

#include "kernels/cuda/backend_compare.h"
#include "kernels/cuda/device_memory.h"

using namespace tokenline;

TEST_CASE("CUDA kernels match the CPU reference by normalized error", "[cuda]") {
  if (cuda::device_count() == 0) {
    WARN("SKIP: no CUDA device (cudaGetDeviceCount failed or found none); CUDA kernels not compared");
    return;
  }
  for (const cuda::OpComparison& r : cuda::compare_backends(cuda::tiny_dims())) {
    INFO(r.op << " " << r.shape << " " << r.metric << " " << r.error << " (bound " << r.tolerance << ")");
    CHECK(r.ok());
  }
}
