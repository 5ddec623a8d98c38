// cuda_devices: how many CUDA devices the runtime can use, behind one seam so that the CPU build and the
// CLI never include CUDA headers. -1 when this build has no CUDA; 0 when CUDA is built but no device or
// driver exists.
#pragma once

#include <cstdint>

namespace tokenline {

int32_t runtime_cuda_devices();

struct KernelSet;
// The CUDA kernels when this build has them (nullptr otherwise). REQUIRES for use: runtime_cuda_devices() >
// 0.
const KernelSet* runtime_cuda_kernels();

}  // namespace tokenline
