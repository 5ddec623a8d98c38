// Weight formats: how a checkpoint stores each group of a model's weights (BF16, FP8 per tensor / channel /
// block, NVFP4, MXFP4, MXFP8, INT4/INT8 weight-only with groups and zero points), the bytes per parameter
// each format takes with its scales, and the GEMM rate it runs at on a given part. Plain data and arithmetic;
// hf_quant_config.cpp reads them from a checkpoint's quantization_config (docs/architecture.md "Inputs").
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "topologies/hardware.h"

namespace tokenline {

enum class WeightFormatKind {
  kBf16,
  kFp16,
  kFp32,
  kFp8PerTensor,   // one FP32 scale per tensor (ModelOpt FP8, fp8 without weight_block_size)
  kFp8PerChannel,  // one FP32 scale per output channel (compressed-tensors channel, fbgemm_fp8)
  kFp8Block,       // one FP32 scale per block x block tile (DeepSeek-V3 weight_scale_inv: 128 x 128)
  kNvfp4,          // E2M1 + an FP8 E4M3 scale per 16 values (+ one FP32 scale per tensor)
  kMxfp4,          // E2M1 + an E8M0 scale per 32 values (OCP MX; gpt-oss experts)
  kMxfp8,          // E4M3 + an E8M0 scale per 32 values (OCP MX; MiniMax-M3-MXFP8, quant_method mxfp8)
  kInt4,           // weight-only integers: a scale (and a zero point when asymmetric) per group
  kInt8,
};

struct WeightFormat {
  WeightFormatKind kind = WeightFormatKind::kBf16;
  // kFp8Block: the block edge; kInt4/kInt8: input elements per scale group, 0 for one scale per output
  // channel. Unused by the other kinds (their groups are fixed by the format).
  int64_t group = 0;
  bool zero_points = false;  // kInt4/kInt8: a packed zero point per group (GPTQ and AWQ store them)
  int scale_bytes = 2;       // kInt4/kInt8: BF16/FP16 scales
  bool weight_only = false;  // the GEMM multiplies BF16 activations (W4A16, W8A16): math at BF16

  bool operator==(const WeightFormat&) const = default;
};

// Bytes one parameter takes with its share of scales and zero points. row_elements: a matrix's input
// features, for the per-channel kinds (one scale per row of that many elements). Per-tensor scales (4 B a
// tensor) are left out: under 1e-6 of any tensor the ledger counts.
double weight_bytes_per_param(const WeightFormat& f, int64_t row_elements);

// The dense peak FLOP/s a GEMM with these weights runs at on `hw`: FP8 kinds at the FP8 rate (W8A8, the
// activations quantized per token as vLLM and SGLang do); FP4 kinds at the FP4 rate where the hardware JSON
// gives one (peak_flops.nvfp4: B200), else weight-only at BF16 (Hopper dequantizes FP4 in the kernel:
// vLLM's Marlin / triton MoE paths); INT4 and weight-only kinds at BF16; INT8 W8A8 at the FP8 rate (H100,
// H200 and B200 list the same dense INT8 TOPS as FP8 TFLOPS).
double weight_gemm_peak_flops(const WeightFormat& f, const Hardware& hw);

// The Dtype that stands for the format where one Dtype is asked for (profile table rows, presets).
Dtype weight_dtype_of(const WeightFormat& f);

// The format a bare Dtype names: kFp8 per tensor, kNvfp4 NVFP4.
WeightFormat weight_format_of(Dtype d);

// "bf16", "fp8", "fp8-channel", "fp8-block128", "nvfp4", "mxfp4", "mxfp8", "int4-g128", "int4-g128-zp",
// "int8-g0", ...
std::string weight_format_name(const WeightFormat& f);

// The inverse of weight_format_name for --weights-format; throws InputError naming `where` and listing the
// names on anything else.
WeightFormat parse_weight_format(std::string_view name, const std::string& where);

// The groups the ledger prices apart (ParamCounts' terms).
enum class WeightGroup {
  kAttention,
  kIndexer,
  kDenseMlp,
  kRoutedExperts,
  kSharedExperts,
  kRouter,
  kNorms,
  kEmbed,
  kLmHead,
  kMtp,
};
inline constexpr size_t kWeightGroupCount = 10;
std::string_view weight_group_name(WeightGroup g);

// A checkpoint's weights: one quantized format, and per group the share of its parameters held in it (the
// rest, excluded or never quantized, at the unquantized dtype). per_group false: every weight at the
// model's weight_dtype, scales, norms and embeddings not told apart (the presets: the seed's count).
// mixed: ModelOpt's MIXED_PRECISION names a format per module (Qwen3.6-NVFP4: FP8 attention, W4A16 NVFP4
// experts); each group then holds its own quantized format (the one most of its quantized parameters are
// in), and `quantized` is the format most of the model's quantized parameters are in.
struct WeightFormats {
  bool per_group = false;
  WeightFormat unquantized;  // torch_dtype: BF16 for every checkpoint tokenline ships
  WeightFormat quantized;    // == unquantized when the checkpoint is not quantized
  std::array<double, kWeightGroupCount> quantized_share{};
  bool mixed = false;
  std::array<WeightFormat, kWeightGroupCount> group_quantized{};  // mixed only
  std::string source;  // where the format was read: "quantization_config", "hf_quant_config.json", ...
  // ModelOpt's kv_cache_quant_algo beside the weights' quant_algo ("FP8", "NVFP4"; empty: none given): the KV
  // dtype the checkpoint was calibrated for, which an engine may take as its own "auto" (TensorRT-LLM does:
  // cost/engine_behavior.h kv_auto_from_checkpoint).
  std::string kv_cache_quant_algo;

  double share(WeightGroup g) const { return quantized_share[static_cast<size_t>(g)]; }
  // The format group g's quantized share is held in.
  const WeightFormat& quantized_of(WeightGroup g) const {
    return mixed ? group_quantized[static_cast<size_t>(g)] : quantized;
  }
};

}  // namespace tokenline
