#include "kernels/cuda/device_memory.h"
#include "kernels/cuda/launch.cuh"

namespace tokenline::cuda {

int32_t device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky error so later probes start clean
    return 0;
  }
  return n;
}

void* device_alloc(int64_t bytes) {
  void* ptr = nullptr;
  if (bytes > 0) TL_CUDA_CHECK(cudaMalloc(&ptr, static_cast<size_t>(bytes)));
  return ptr;
}

void* device_alloc_zeroed(int64_t bytes) {
  void* ptr = device_alloc(bytes);
  if (bytes > 0) TL_CUDA_CHECK(cudaMemset(ptr, 0, static_cast<size_t>(bytes)));
  return ptr;
}

void device_free(void* ptr) {
  if (ptr != nullptr) TL_CUDA_CHECK(cudaFree(ptr));
}

void copy_to_device(void* dst, const void* src, int64_t bytes) {
  if (bytes > 0) TL_CUDA_CHECK(cudaMemcpy(dst, src, static_cast<size_t>(bytes), cudaMemcpyHostToDevice));
}

void copy_to_host(void* dst, const void* src, int64_t bytes) {
  if (bytes > 0) TL_CUDA_CHECK(cudaMemcpy(dst, src, static_cast<size_t>(bytes), cudaMemcpyDeviceToHost));
}

void copy_on_device(void* dst, const void* src, int64_t bytes) {
  if (bytes > 0) TL_CUDA_CHECK(cudaMemcpy(dst, src, static_cast<size_t>(bytes), cudaMemcpyDeviceToDevice));
}

void device_synchronize() {
  TL_CUDA_CHECK(cudaDeviceSynchronize());
}

}  // namespace tokenline::cuda
