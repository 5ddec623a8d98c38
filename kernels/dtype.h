// DType: the closed set of element types the kernels read (weights, checkpoints, caches).
#pragma once

#include <cstdint>

#include "kernels/numeric.h"

namespace tokenline {

enum class DType : int32_t { kF32, kBF16, kF8E4M3 };

TL_HD inline int32_t dtype_bytes(DType t) {
  switch (t) {
    case DType::kF32:
      return 4;
    case DType::kBF16:
      return 2;
    case DType::kF8E4M3:
      return 1;
  }
  return 0;
}

// Safetensors spelling of each dtype ("F32", "BF16", "F8_E4M3").
inline const char* dtype_name(DType t) {
  switch (t) {
    case DType::kF32:
      return "F32";
    case DType::kBF16:
      return "BF16";
    case DType::kF8E4M3:
      return "F8_E4M3";
  }
  return "?";
}

// Element i of a typed array, widened to float. FP8 weights are read without a scale here.
TL_HD inline float load_float(const void* data, DType t, int64_t i) {
  switch (t) {
    case DType::kF32:
      return static_cast<const float*>(data)[i];
    case DType::kBF16:
      return bf16_to_float(static_cast<const uint16_t*>(data)[i]);
    case DType::kF8E4M3:
      return fp8e4m3_to_float(static_cast<const uint8_t*>(data)[i]);
  }
  return 0.0f;
}

}  // namespace tokenline
