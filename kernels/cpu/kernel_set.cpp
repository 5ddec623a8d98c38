// The CPU reference kernels as a KernelSet: host memory, synchronous calls.
#include "kernels/kernel_set.h"

#include <cstdlib>
#include <cstring>

#include "kernels/cpu/kernels.h"

namespace tokenline {
namespace {

void* host_alloc(int64_t bytes) {
  return bytes > 0 ? std::calloc(static_cast<size_t>(bytes), 1) : nullptr;
}

void host_free(void* ptr) {
  std::free(ptr);
}

void host_copy(void* dst, const void* src, int64_t bytes) {
  if (bytes > 0) std::memcpy(dst, src, static_cast<size_t>(bytes));
}

void host_synchronize() {}

constexpr KernelSet kCpu{
    .name = "cpu",
    .host_memory = true,
    .embedding = cpu::embedding,
    .rmsnorm = cpu::rmsnorm,
    .layernorm = cpu::layernorm,
    .gemm = cpu::gemm,
    .rope = cpu::rope,
    .kv_write = cpu::kv_write,
    .mla_absorb_q = cpu::mla_absorb_q,
    .mla_absorb_out = cpu::mla_absorb_out,
    .mla_attention_sparse = cpu::mla_attention_sparse,
    .index_k_write = cpu::index_k_write,
    .indexer_score = cpu::indexer_score,
    .topk_select = cpu::topk_select,
    .router = cpu::router,
    .moe_experts = cpu::moe_experts,
    .silu_mul = cpu::silu_mul,
    .scale_add = cpu::scale_add,
    .mtp_input = cpu::mtp_input,
    .sample = cpu::sample,
    .gqa_kv_write = cpu::gqa_kv_write,
    .gqa_attention = cpu::gqa_attention,
    .sigmoid_gate = cpu::sigmoid_gate,
    .gdn_conv = cpu::gdn_conv,
    .gdn_recurrence = cpu::gdn_recurrence,
    .gated_rmsnorm = cpu::gated_rmsnorm,
    .alloc = host_alloc,
    .free = host_free,
    .upload = host_copy,
    .download = host_copy,
    .copy = host_copy,
    .synchronize = host_synchronize,
};

}  // namespace

const KernelSet& cpu_kernel_set() {
  return kCpu;
}

}  // namespace tokenline
