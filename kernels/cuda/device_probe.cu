// Probes the CUDA runtime and NCCL and runs one kernel (saxpy) when a device exists.
// Exits 0 without a device so that the CPU-only CI can run it: it prints why it skipped.
#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdio>

__global__ void saxpy(float* y, const float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

int main() {
  int nccl_version = 0;
  ncclGetVersion(&nccl_version);
  int devices = 0;
  cudaError_t err = cudaGetDeviceCount(&devices);
  std::printf("nccl %d\n", nccl_version);
  if (err != cudaSuccess || devices == 0) {
    std::printf("SKIP: no CUDA device (%s)\n", cudaGetErrorString(err));
    return 0;
  }
  constexpr int kN = 1 << 20;
  float *x = nullptr, *y = nullptr;
  cudaMallocManaged(&x, kN * sizeof(float));
  cudaMallocManaged(&y, kN * sizeof(float));
  for (int i = 0; i < kN; ++i) {
    x[i] = 1.0f;
    y[i] = 2.0f;
  }
  saxpy<<<(kN + 255) / 256, 256>>>(y, x, 3.0f, kN);
  cudaDeviceSynchronize();
  int bad = 0;
  for (int i = 0; i < kN; ++i) bad += (y[i] != 5.0f);
  std::printf("devices %d saxpy %s\n", devices, bad == 0 ? "ok" : "FAILED");
  cudaFree(x);
  cudaFree(y);
  return bad == 0 ? 0 : 1;
}
