// Safetensors reader/writer. nlohmann_json stays private to this file.
#include "kernels/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/input_error.h"
#include "common/json_depth.h"

namespace tokenline {
namespace {

constexpr int64_t kHeaderLengthBytes = 8;         // u64 little-endian header size prefix
constexpr int64_t kMaxHeaderBytes = 100'000'000;  // the format's own limit on the JSON header (100 MB)
constexpr int64_t kHeaderAlignBytes = 8;          // writers pad the header with spaces to 8 bytes

std::optional<DType> parse_dtype(const std::string& name) {
  for (DType t : {DType::kF32, DType::kBF16, DType::kF8E4M3}) {
    if (name == dtype_name(t)) return t;
  }
  return std::nullopt;
}

int64_t element_count(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

TensorInfo parse_entry(const std::string& where, const std::string& name, const nlohmann::json& entry,
                       int64_t data_bytes) {
  const std::string field = where + ": tensor " + name;
  if (!entry.is_object() || !entry.contains("dtype") || !entry.contains("shape") ||
      !entry.contains("data_offsets")) {
    throw InputError(field, "an object with dtype, shape and data_offsets", entry.dump());
  }
  const nlohmann::json& dtype = entry["dtype"];
  const nlohmann::json& shape = entry["shape"];
  const nlohmann::json& offsets = entry["data_offsets"];
  if (!dtype.is_string()) throw InputError(field, "a string dtype", dtype.dump());
  if (!shape.is_array() ||
      !std::all_of(shape.begin(), shape.end(), [](const auto& d) { return d.is_number_unsigned(); })) {
    throw InputError(field, "shape as an array of non-negative integers", shape.dump());
  }
  if (!offsets.is_array() || offsets.size() != 2 || !offsets[0].is_number_unsigned() ||
      !offsets[1].is_number_unsigned()) {
    throw InputError(field, "data_offsets as [begin, end]", offsets.dump());
  }
  TensorInfo info;
  info.name = name;
  info.dtype_name = dtype.get<std::string>();
  info.dtype = parse_dtype(info.dtype_name);
  for (const auto& d : shape) info.shape.push_back(d.get<int64_t>());
  const auto begin = offsets[0].get<int64_t>(), end = offsets[1].get<int64_t>();
  if (begin > end || end > data_bytes) {
    throw InputError(field, "data_offsets within the " + std::to_string(data_bytes) + "-byte data section",
                     offsets.dump());
  }
  info.offset_bytes = begin;
  info.size_bytes = end - begin;
  if (info.dtype && info.size_bytes != element_count(info.shape) * dtype_bytes(*info.dtype)) {
    throw InputError(field,
                     std::to_string(element_count(info.shape) * dtype_bytes(*info.dtype)) + " bytes for " +
                         info.dtype_name + " " + shape_string(info.shape),
                     std::to_string(info.size_bytes) + " bytes");
  }
  return info;
}

}  // namespace

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

SafetensorsReader::SafetensorsReader(std::string path) : path_(std::move(path)) {
  const int fd = ::open(path_.c_str(), O_RDONLY);
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0) {
    if (fd >= 0) ::close(fd);
    throw InputError(path_, "a readable safetensors file", "a file that cannot be opened");
  }
  file_bytes_ = static_cast<int64_t>(st.st_size);
  if (file_bytes_ < kHeaderLengthBytes) {
    ::close(fd);
    throw InputError(path_, "an 8-byte header length", std::to_string(file_bytes_) + " bytes");
  }
  void* map = ::mmap(nullptr, static_cast<size_t>(file_bytes_), PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);  // the mapping keeps the file alive
  if (map == MAP_FAILED) throw InputError(path_, "a file that can be mapped", "mmap failure");
  base_ = static_cast<const uint8_t*>(map);
  try {
    parse_header();
  } catch (...) {
    ::munmap(const_cast<uint8_t*>(base_), static_cast<size_t>(file_bytes_));
    throw;
  }
}

SafetensorsReader::~SafetensorsReader() {
  ::munmap(const_cast<uint8_t*>(base_), static_cast<size_t>(file_bytes_));
}

void SafetensorsReader::parse_header() {
  uint64_t header_bytes = 0;
  for (int i = kHeaderLengthBytes - 1; i >= 0; --i) header_bytes = (header_bytes << 8) | base_[i];
  if (header_bytes > static_cast<uint64_t>(std::min(kMaxHeaderBytes, file_bytes_ - kHeaderLengthBytes))) {
    throw InputError(path_, "a header length within the file (" + std::to_string(file_bytes_) + " bytes)",
                     std::to_string(header_bytes));
  }
  data_begin_ = kHeaderLengthBytes + static_cast<int64_t>(header_bytes);
  require_json_depth(std::string_view(reinterpret_cast<const char*>(base_) + kHeaderLengthBytes,
                                      static_cast<size_t>(header_bytes)),
                     path_ + ": header");
  const nlohmann::json header =
      nlohmann::json::parse(base_ + kHeaderLengthBytes, base_ + data_begin_, nullptr, false);
  if (header.is_discarded() || !header.is_object())
    throw InputError(path_, "a JSON object header", "malformed JSON");
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      for (const auto& [key, value] : entry.items())
        metadata_[key] = value.is_string() ? value.get<std::string>() : value.dump();
      continue;
    }
    tensors_.push_back(parse_entry(path_, name, entry, file_bytes_ - data_begin_));
  }
}

const TensorInfo* SafetensorsReader::find(const std::string& name) const {
  auto it = std::lower_bound(tensors_.begin(), tensors_.end(), name,
                             [](const TensorInfo& t, const std::string& n) { return t.name < n; });
  return it != tensors_.end() && it->name == name ? &*it : nullptr;
}

const TensorInfo& SafetensorsReader::require(const std::string& name,
                                             const std::vector<int64_t>& shape) const {
  const std::string field = path_ + ": tensor " + name;
  const TensorInfo* info = find(name);
  if (info == nullptr) throw InputError(field, "present with shape " + shape_string(shape), "no such tensor");
  if (!info->dtype)
    throw InputError(field, "dtype F32, BF16 or F8_E4M3 (what the kernels read)",
                     "dtype " + info->dtype_name);
  if (info->shape != shape)
    throw InputError(field, "shape " + shape_string(shape), "shape " + shape_string(info->shape));
  return *info;
}

const TensorInfo& SafetensorsReader::require(const std::string& name, DType dtype,
                                             const std::vector<int64_t>& shape) const {
  const TensorInfo& info = require(name, shape);
  if (*info.dtype != dtype) {
    throw InputError(path_ + ": tensor " + name, std::string("dtype ") + dtype_name(dtype),
                     "dtype " + info.dtype_name);
  }
  return info;
}

void write_safetensors(const std::string& path, const std::vector<TensorToWrite>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  std::vector<const TensorToWrite*> sorted;
  for (const auto& t : tensors) sorted.push_back(&t);
  std::sort(sorted.begin(), sorted.end(), [](const auto* a, const auto* b) { return a->name < b->name; });
  nlohmann::json header = nlohmann::json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  int64_t offset = 0;
  for (const TensorToWrite* t : sorted) {
    if (header.contains(t->name))
      throw InputError(path + ": tensor " + t->name, "a unique name", "a repeated name");
    const int64_t bytes = element_count(t->shape) * dtype_bytes(t->dtype);
    header[t->name] = {
        {"dtype", dtype_name(t->dtype)}, {"shape", t->shape}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string text = header.dump();
  text.append(
      static_cast<size_t>((kHeaderAlignBytes - static_cast<int64_t>(text.size()) % kHeaderAlignBytes) %
                          kHeaderAlignBytes),
      ' ');
  std::ofstream out(path, std::ios::binary);
  if (!out) throw InputError(path, "a writable path", "a file that cannot be created");
  const auto length = static_cast<uint64_t>(text.size());
  for (int i = 0; i < kHeaderLengthBytes; ++i) out.put(static_cast<char>((length >> (8 * i)) & 0xFF));
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  for (const TensorToWrite* t : sorted) {
    out.write(static_cast<const char*>(t->data),
              static_cast<std::streamsize>(element_count(t->shape) * dtype_bytes(t->dtype)));
  }
  if (!out) throw InputError(path, "a complete write", "an I/O error");
}

}  // namespace tokenline
