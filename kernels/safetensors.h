// Safetensors checkpoints (8-byte little-endian header length, JSON header {name: {dtype, shape,
// data_offsets}}, raw little-endian data). The reader validates the whole header on open and reports any
// problem as one InputError naming the file and tensor, what was expected and what was found.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kernels/dtype.h"

namespace tokenline {

struct TensorInfo {
  std::string name;
  std::string dtype_name;      // as written in the file ("BF16", "F16", ...)
  std::optional<DType> dtype;  // empty when the kernels lack that dtype
  std::vector<int64_t> shape;
  int64_t offset_bytes = 0;  // from the start of the data section
  int64_t size_bytes = 0;
};

class SafetensorsReader {
 public:
  // Maps the file read-only and validates its header. Throws InputError (missing file, bad header,
  // offsets out of range, size not matching shape x dtype). Tensor data stays in the mapping (no copy).
  explicit SafetensorsReader(std::string path);
  ~SafetensorsReader();
  SafetensorsReader(const SafetensorsReader&) = delete;
  SafetensorsReader& operator=(const SafetensorsReader&) = delete;

  const std::vector<TensorInfo>& tensors() const { return tensors_; }  // sorted by name
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  const TensorInfo* find(const std::string& name) const;  // nullptr when absent
  // The tensor's bytes (no alignment guarantee: copy before reading as wider types).
  const uint8_t* data(const TensorInfo& info) const { return base_ + data_begin_ + info.offset_bytes; }

  // The tensor, checked to exist with a kernel dtype and this shape; InputError otherwise.
  const TensorInfo& require(const std::string& name, const std::vector<int64_t>& shape) const;
  // Same, and checked to have this dtype.
  const TensorInfo& require(const std::string& name, DType dtype, const std::vector<int64_t>& shape) const;

 private:
  void parse_header();  // fills data_begin_, tensors_, metadata_ from the mapping

  std::string path_;
  const uint8_t* base_ = nullptr;  // the read-only mapping of the whole file
  int64_t file_bytes_ = 0;
  int64_t data_begin_ = 0;
  std::vector<TensorInfo> tensors_;
  std::map<std::string, std::string> metadata_;
};

struct TensorToWrite {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  const void* data = nullptr;  // product(shape) * dtype_bytes(dtype) bytes
};

// Writes tensors (data laid out in name order) and string metadata. Throws InputError if the file cannot
// be written or a name repeats.
void write_safetensors(const std::string& path, const std::vector<TensorToWrite>& tensors,
                       const std::map<std::string, std::string>& metadata = {});

// "[a, b, c]" for messages.
std::string shape_string(const std::vector<int64_t>& shape);

}  // namespace tokenline
