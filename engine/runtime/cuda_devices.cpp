#include "engine/runtime/cuda_devices.h"

#if defined(TOKENLINE_RUNTIME_CUDA)
#include <cstddef>  // device_memory.h uses size_t without including it

#include "kernels/cuda/device_memory.h"
#endif

namespace tokenline {

int32_t runtime_cuda_devices() {
#if defined(TOKENLINE_RUNTIME_CUDA)
  return cuda::device_count();
#else
  return -1;
#endif
}

}  // namespace tokenline
