#include "engine/runtime/cuda_devices.h"

#if defined(TOKENLINE_RUNTIME_CUDA)
#include "kernels/cuda/device_memory.h"
#endif
#include "kernels/kernel_set.h"

namespace tokenline {

int32_t runtime_cuda_devices() {
#if defined(TOKENLINE_RUNTIME_CUDA)
  return cuda::device_count();
#else
  return -1;
#endif
}

const KernelSet* runtime_cuda_kernels() {
#if defined(TOKENLINE_RUNTIME_CUDA)
  return &cuda_kernel_set();
#else
  return nullptr;
#endif
}

}  // namespace tokenline
