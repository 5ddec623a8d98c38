// The CUDA kernels as a KernelSet: device memory, kernels queued on the default stream.
#include "kernels/kernel_set.h"

#include <cstddef>

#include "kernels/cuda/device_memory.h"
#include "kernels/cuda/kernels.h"

namespace tokenline {

const KernelSet& cuda_kernel_set() {
  static constexpr KernelSet kCuda{
      .name = "cuda",
      .host_memory = false,
      .embedding = cuda::embedding,
      .rmsnorm = cuda::rmsnorm,
      .layernorm = cuda::layernorm,
      .gemm = cuda::gemm,
      .rope = cuda::rope,
      .kv_write = cuda::kv_write,
      .mla_absorb_q = cuda::mla_absorb_q,
      .mla_absorb_out = cuda::mla_absorb_out,
      .mla_attention_sparse = cuda::mla_attention_sparse,
      .index_k_write = cuda::index_k_write,
      .indexer_score = cuda::indexer_score,
      .topk_select = cuda::topk_select,
      .router = cuda::router,
      .moe_experts = cuda::moe_experts,
      .silu_mul = cuda::silu_mul,
      .scale_add = cuda::scale_add,
      .mtp_input = cuda::mtp_input,
      .sample = cuda::sample,
      .alloc = cuda::device_alloc_zeroed,
      .free = cuda::device_free,
      .upload = cuda::copy_to_device,
      .download = cuda::copy_to_host,
      .copy = cuda::copy_on_device,
      .synchronize = cuda::device_synchronize,
  };
  return kCuda;
}

}  // namespace tokenline
