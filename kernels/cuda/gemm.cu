// CUDA GEMMs: F32 weights go to cuBLAS (SGEMM, FP32 math); BF16 and FP8 weights (128x128 block scales)
// to a shared-memory tiled out = x w^T that widens them while loading tiles. And the per-head MLA
// absorptions. cuBLAS is opened on first use (dlopen): linked, its 500 MB of libraries would load into
// every tokenline process, GPU or not (250 MB resident for --help instead of 34 MB); where it cannot be
// opened the tiled kernel serves F32 too.
#include <cublas_v2.h>
#include <dlfcn.h>

#include "kernels/cuda/kernels.h"
#include "kernels/cuda/launch.cuh"

namespace tokenline::cuda {
namespace {

#define TL_CUBLAS_CHECK(expr)                                                                       \
  do {                                                                                              \
    const cublasStatus_t tl_status_ = (expr);                                                       \
    if (tl_status_ != CUBLAS_STATUS_SUCCESS) {                                                      \
      std::fprintf(stderr, "%s:%d: %s failed: status %d\n", __FILE__, __LINE__, #expr, tl_status_); \
      std::abort();                                                                                 \
    }                                                                                               \
  } while (0)

// The four cuBLAS entry points used here, resolved from the shared library; all null when it is absent.
struct CublasApi {
  cublasStatus_t (*create)(cublasHandle_t*) = nullptr;
  cublasStatus_t (*destroy)(cublasHandle_t) = nullptr;
  cublasStatus_t (*set_math_mode)(cublasHandle_t, cublasMath_t) = nullptr;
  cublasStatus_t (*sgemm)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const float*,
                          const float*, int, const float*, int, const float*, float*, int) = nullptr;
  bool ok() const { return create && destroy && set_math_mode && sgemm; }
};

template <class F>
void resolve(void* lib, const char* name, F& fn) {
  fn = reinterpret_cast<F>(dlsym(lib, name));
}

const CublasApi& cublas_api() {
  static const CublasApi api = [] {
    CublasApi a;
    void* lib = dlopen("libcublas.so.13", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) lib = dlopen("libcublas.so", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) return a;  // kept open for the process's life
    resolve(lib, "cublasCreate_v2", a.create);
    resolve(lib, "cublasDestroy_v2", a.destroy);
    resolve(lib, "cublasSetMathMode", a.set_math_mode);
    resolve(lib, "cublasSgemm_v2", a.sgemm);
    return a;
  }();
  return api;
}

// One cuBLAS handle per host thread (a rank's thread), on the default stream, pure FP32 math (no TF32:
// the CPU reference is FP32).
class CublasHandle {
 public:
  CublasHandle() {
    TL_CUBLAS_CHECK(cublas_api().create(&handle_));
    TL_CUBLAS_CHECK(cublas_api().set_math_mode(handle_, CUBLAS_PEDANTIC_MATH));
  }
  ~CublasHandle() { cublas_api().destroy(handle_); }  // at thread exit; a torn-down context is no error
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;
  cublasHandle_t get() const { return handle_; }

 private:
  cublasHandle_t handle_ = nullptr;
};

// Row-major out[m, n] = x[m, k] w[n, k]^T is column-major out^T[n, m] = w^T x^T: SGEMM with op(w) = T.
void cublas_gemm_f32(const GemmParams& p) {
  thread_local CublasHandle handle;
  const float alpha = 1.0f, beta = p.accumulate ? 1.0f : 0.0f;
  TL_CUBLAS_CHECK(cublas_api().sgemm(handle.get(), CUBLAS_OP_T, CUBLAS_OP_N, p.n, p.m, p.k, &alpha,
                                     static_cast<const float*>(p.w), p.k, p.x, p.k, &beta, p.out, p.n));
}

constexpr int kTileM = 64, kTileN = 64, kTileK = 16;  // 64x64 output tile, 16-deep k slices
constexpr int kGemmThreads = 256;                     // 16x16 threads, 4x4 outputs each
constexpr int kPerThread = 4;                         // kTileM / 16

__global__ void gemm_kernel(GemmParams p) {
  __shared__ float xs[kTileK][kTileM];
  __shared__ float ws[kTileK][kTileN];
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const long long row0 = static_cast<long long>(blockIdx.y) * kTileM,
                  col0 = static_cast<long long>(blockIdx.x) * kTileN;
  const int scale_cols = (p.k + kWeightScaleBlock - 1) / kWeightScaleBlock;
  float acc[kPerThread][kPerThread] = {};
  for (int k0 = 0; k0 < p.k; k0 += kTileK) {
    for (int e = threadIdx.x; e < kTileM * kTileK; e += kGemmThreads) {
      const int r = e / kTileK, c = e % kTileK;
      const long long gr = row0 + r, gc = k0 + c, gn = col0 + r;
      xs[c][r] = (gr < p.m && gc < p.k) ? p.x[gr * p.k + gc] : 0.0f;
      float w = 0.0f;
      if (gn < p.n && gc < p.k) {
        w = load_float(p.w, p.w_dtype, gn * p.k + gc);
        if (p.w_scale != nullptr)
          w *= p.w_scale[(gn / kWeightScaleBlock) * scale_cols + gc / kWeightScaleBlock];
      }
      ws[c][r] = w;
    }
    __syncthreads();
    for (int c = 0; c < kTileK; ++c) {
      float a[kPerThread], b[kPerThread];
      for (int i = 0; i < kPerThread; ++i) a[i] = xs[c][ty + 16 * i], b[i] = ws[c][tx + 16 * i];
      for (int i = 0; i < kPerThread; ++i) {
        for (int j = 0; j < kPerThread; ++j) acc[i][j] += a[i] * b[j];
      }
    }
    __syncthreads();
  }
  for (int i = 0; i < kPerThread; ++i) {
    for (int j = 0; j < kPerThread; ++j) {
      const long long r = row0 + ty + 16 * i, c = col0 + tx + 16 * j;
      if (r >= p.m || c >= p.n) continue;
      float& o = p.out[r * p.n + c];
      o = p.accumulate ? o + acc[i][j] : acc[i][j];
    }
  }
}

__global__ void absorb_q_kernel(MlaAbsorbQParams p) {
  const long long row = blockIdx.x;  // token * n_heads + head
  const int c = blockIdx.y * blockDim.x + threadIdx.x;
  if (c >= p.kv_lora) return;
  const long long h = row % p.n_heads, w_rows = p.nope_dim + p.v_dim;
  const float* q = p.q + row * (p.nope_dim + p.rope_dim);
  float acc = 0.0f;
  for (int d = 0; d < p.nope_dim; ++d)
    acc += q[d] * load_float(p.w_kv_b, p.w_dtype, (h * w_rows + d) * p.kv_lora + c);
  p.q_latent[row * p.kv_lora + c] = acc;
}

__global__ void absorb_out_kernel(MlaAbsorbOutParams p) {
  const long long warp = (blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x) / kWarp;
  const int lane = threadIdx.x % kWarp;
  if (warp >= static_cast<long long>(p.n_tokens) * p.n_heads * p.v_dim) return;
  const long long row = warp / p.v_dim, j = warp % p.v_dim, h = row % p.n_heads;
  const long long w_row = (h * (p.nope_dim + p.v_dim) + p.nope_dim + j) * p.kv_lora;
  const float* o = p.o_latent + row * p.kv_lora;
  float acc = 0.0f;
  for (int c = lane; c < p.kv_lora; c += kWarp) acc += o[c] * load_float(p.w_kv_b, p.w_dtype, w_row + c);
  acc = warp_sum(acc);
  if (lane == 0) p.out[row * p.v_dim + j] = acc;
}

}  // namespace

void gemm(GemmParams p) {
  if (p.m == 0 || p.n == 0) return;
  if (p.w_dtype == DType::kF32 && p.w_scale == nullptr && cublas_api().ok()) {
    cublas_gemm_f32(p);
    return;
  }
  const dim3 grid((p.n + kTileN - 1) / kTileN, (p.m + kTileM - 1) / kTileM);
  gemm_kernel<<<grid, kGemmThreads>>>(p);
  TL_CUDA_LAUNCHED();
}

void mla_absorb_q(MlaAbsorbQParams p) {
  const long long rows = static_cast<long long>(p.n_tokens) * p.n_heads;
  if (rows == 0) return;
  absorb_q_kernel<<<dim3(static_cast<unsigned>(rows), blocks_for(p.kv_lora)), kThreads>>>(p);
  TL_CUDA_LAUNCHED();
}

void mla_absorb_out(MlaAbsorbOutParams p) {
  const long long warps = static_cast<long long>(p.n_tokens) * p.n_heads * p.v_dim;
  if (warps == 0) return;
  absorb_out_kernel<<<blocks_for(warps * kWarp), kThreads>>>(p);
  TL_CUDA_LAUNCHED();
}

}  // namespace tokenline::cuda
