#include "engine/model/weight_format.h"

#include <charconv>

#include "common/input_error.h"

namespace tokenline {
namespace {

constexpr double kFp32ScaleBytes = 4;   // FP8 weight_scale / weight_scale_inv are float32
constexpr int64_t kNvfp4Group = 16;     // NVFP4: one E4M3 scale per 16 values (ModelOpt group_size 16)
constexpr int64_t kMxfp4Group = 32;     // OCP MX: one E8M0 scale per 32 values
constexpr int64_t kMxfp8Group = 32;     // OCP MX: one E8M0 scale per 32 values
constexpr double kFp8ScaleBytes = 1;    // E4M3 (NVFP4) and E8M0 (MXFP4, MXFP8) scales are one byte
constexpr double kInt4ZeroBytes = 0.5;  // a zero point packed as 4 bits (GPTQ/AWQ qzeros: 8 per int32)
constexpr double kInt8ZeroBytes = 1;
constexpr int64_t kDefaultFp8Block = 128;  // DeepSeek-V3 / Qwen3-FP8 weight_block_size [128, 128]

// Scale (and zero point) bytes per parameter of groups of `group` elements; 0: per output channel.
double per_group(double bytes, int64_t group, int64_t row_elements) {
  const int64_t n = group > 0 ? group : row_elements;
  return n > 0 ? bytes / double(n) : 0;
}

const char* kFormatNames =
    "bf16, fp16, fp32, fp8, fp8-channel, fp8-block<edge> (fp8-block128), nvfp4, nvfp4-w4a16, mxfp4, mxfp8, "
    "int4-g<group>[-zp] "
    "(int4-g128, int4-g32-zp; g0 = per channel), int8-g<group>[-zp]";

bool parse_int(std::string_view s, int64_t& out) {
  if (s.empty()) return false;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size() && out >= 0 && out <= (int64_t{1} << 20);
}

}  // namespace

double weight_bytes_per_param(const WeightFormat& f, int64_t row_elements) {
  switch (f.kind) {
    case WeightFormatKind::kBf16:
    case WeightFormatKind::kFp16:
      return 2;
    case WeightFormatKind::kFp32:
      return 4;
    case WeightFormatKind::kFp8PerTensor:
      return 1;
    case WeightFormatKind::kFp8PerChannel:
      return 1 + per_group(kFp32ScaleBytes, 0, row_elements);
    case WeightFormatKind::kFp8Block:
      return 1 + kFp32ScaleBytes / double(f.group * f.group);
    case WeightFormatKind::kNvfp4:
      return 0.5 + kFp8ScaleBytes / double(kNvfp4Group);
    case WeightFormatKind::kMxfp4:
      return 0.5 + kFp8ScaleBytes / double(kMxfp4Group);
    case WeightFormatKind::kMxfp8:
      return 1 + kFp8ScaleBytes / double(kMxfp8Group);
    case WeightFormatKind::kInt4:
      return 0.5 + per_group(f.scale_bytes + (f.zero_points ? kInt4ZeroBytes : 0), f.group, row_elements);
    case WeightFormatKind::kInt8:
      return 1 + per_group(f.scale_bytes + (f.zero_points ? kInt8ZeroBytes : 0), f.group, row_elements);
  }
  return 2;
}

double weight_gemm_peak_flops(const WeightFormat& f, const Hardware& hw) {
  if (f.weight_only) return hw.peak_flops_bf16;
  switch (f.kind) {
    case WeightFormatKind::kBf16:
    case WeightFormatKind::kFp16:
      return hw.peak_flops_bf16;
    case WeightFormatKind::kFp32:
      return hw.peak_flops_fp32;
    case WeightFormatKind::kFp8PerTensor:
    case WeightFormatKind::kFp8PerChannel:
    case WeightFormatKind::kFp8Block:
    case WeightFormatKind::kMxfp8:  // E4M3 x E4M3 (Blackwell's block-scaled MMA; Hopper: FP8 after the
                                    // scales)
    case WeightFormatKind::kInt8:
      return hw.peak_flops_fp8;
    case WeightFormatKind::kNvfp4:
    case WeightFormatKind::kMxfp4:
      return hw.peak_flops_nvfp4 > 0 ? hw.peak_flops_nvfp4 : hw.peak_flops_bf16;
    case WeightFormatKind::kInt4:
      return hw.peak_flops_bf16;
  }
  return hw.peak_flops_bf16;
}

Dtype weight_dtype_of(const WeightFormat& f) {
  switch (f.kind) {
    case WeightFormatKind::kBf16:
      return Dtype::kBf16;
    case WeightFormatKind::kFp16:
      return Dtype::kFp16;
    case WeightFormatKind::kFp32:
      return Dtype::kFp32;
    case WeightFormatKind::kFp8PerTensor:
    case WeightFormatKind::kFp8PerChannel:
    case WeightFormatKind::kFp8Block:
    case WeightFormatKind::kMxfp8:
      return f.weight_only ? Dtype::kBf16 : Dtype::kFp8;
    case WeightFormatKind::kNvfp4:
    case WeightFormatKind::kMxfp4:
      return Dtype::kNvfp4;
    case WeightFormatKind::kInt4:
    case WeightFormatKind::kInt8:
      return Dtype::kBf16;
  }
  return Dtype::kBf16;
}

WeightFormat weight_format_of(Dtype d) {
  switch (d) {
    case Dtype::kFp8:
      return {.kind = WeightFormatKind::kFp8PerTensor};
    case Dtype::kBf16:
      return {.kind = WeightFormatKind::kBf16};
    case Dtype::kFp16:
      return {.kind = WeightFormatKind::kFp16};
    case Dtype::kFp32:
      return {.kind = WeightFormatKind::kFp32};
    case Dtype::kNvfp4:
      return {.kind = WeightFormatKind::kNvfp4};
  }
  return {};
}

std::string weight_format_name(const WeightFormat& f) {
  auto grouped = [&](const char* base) {
    return std::string(base) + "-g" + std::to_string(f.group) + (f.zero_points ? "-zp" : "");
  };
  switch (f.kind) {
    case WeightFormatKind::kBf16:
      return "bf16";
    case WeightFormatKind::kFp16:
      return "fp16";
    case WeightFormatKind::kFp32:
      return "fp32";
    case WeightFormatKind::kFp8PerTensor:
      return f.weight_only ? "fp8-w8a16" : "fp8";
    case WeightFormatKind::kFp8PerChannel:
      return f.weight_only ? "fp8-channel-w8a16" : "fp8-channel";
    case WeightFormatKind::kFp8Block:
      return "fp8-block" + std::to_string(f.group) + (f.weight_only ? "-w8a16" : "");
    case WeightFormatKind::kNvfp4:
      return f.weight_only ? "nvfp4-w4a16" : "nvfp4";
    case WeightFormatKind::kMxfp4:
      return "mxfp4";
    case WeightFormatKind::kMxfp8:
      return "mxfp8";
    case WeightFormatKind::kInt4:
      return grouped("int4");
    case WeightFormatKind::kInt8:
      return grouped("int8");
  }
  return "bf16";
}

WeightFormat parse_weight_format(std::string_view name, const std::string& where) {
  auto fail = [&]() -> WeightFormat {
    throw InputError(where, std::string("a weight format: ") + kFormatNames, "'" + std::string(name) + "'");
  };
  if (name == "bf16") return {.kind = WeightFormatKind::kBf16};
  if (name == "fp16") return {.kind = WeightFormatKind::kFp16};
  if (name == "fp32") return {.kind = WeightFormatKind::kFp32};
  if (name == "fp8") return {.kind = WeightFormatKind::kFp8PerTensor};
  if (name == "fp8-channel") return {.kind = WeightFormatKind::kFp8PerChannel};
  if (name == "nvfp4") return {.kind = WeightFormatKind::kNvfp4};
  if (name == "nvfp4-w4a16") return {.kind = WeightFormatKind::kNvfp4, .weight_only = true};
  if (name == "mxfp4") return {.kind = WeightFormatKind::kMxfp4};
  if (name == "mxfp8") return {.kind = WeightFormatKind::kMxfp8};
  if (name == "fp8-block") return {.kind = WeightFormatKind::kFp8Block, .group = kDefaultFp8Block};
  if (name.starts_with("fp8-block")) {
    int64_t edge = 0;
    if (!parse_int(name.substr(9), edge) || edge < 1) return fail();
    return {.kind = WeightFormatKind::kFp8Block, .group = edge};
  }
  for (const auto& [prefix, kind] : {std::pair{std::string_view("int4-g"), WeightFormatKind::kInt4},
                                     std::pair{std::string_view("int8-g"), WeightFormatKind::kInt8}}) {
    if (!name.starts_with(prefix)) continue;
    std::string_view rest = name.substr(prefix.size());
    const bool zp = rest.ends_with("-zp");
    if (zp) rest.remove_suffix(3);
    int64_t group = 0;
    if (!parse_int(rest, group)) return fail();
    return {.kind = kind, .group = group, .zero_points = zp, .scale_bytes = 2, .weight_only = true};
  }
  return fail();
}

std::string_view weight_group_name(WeightGroup g) {
  switch (g) {
    case WeightGroup::kAttention:
      return "attention";
    case WeightGroup::kIndexer:
      return "indexer";
    case WeightGroup::kDenseMlp:
      return "dense_mlp";
    case WeightGroup::kRoutedExperts:
      return "routed_experts";
    case WeightGroup::kSharedExperts:
      return "shared_experts";
    case WeightGroup::kRouter:
      return "router";
    case WeightGroup::kNorms:
      return "norms";
    case WeightGroup::kEmbed:
      return "embed";
    case WeightGroup::kLmHead:
      return "lm_head";
    case WeightGroup::kMtp:
      return "mtp";
  }
  return "attention";
}

}  // namespace tokenline
