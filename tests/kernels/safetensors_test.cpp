#include "kernels/safetensors.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "common/input_error.h"
#include "kernels/cpu/kernels.h"
#include "tests/kernels/test_util.h"

using namespace tokenline;

namespace {

constexpr int32_t kVocab = 64, kHidden = 256;

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("tokenline_kernels_" + name + "-" + std::to_string(::getpid()) + ".safetensors"))
      .string();
}

// A tiny LM tail: embedding (BF16), final norm (F32), lm_head (F8_E4M3) -> logits of 3 tokens.
struct Checkpoint {
  std::vector<uint16_t> embed = test::to_bf16(test::random_vector(kVocab * kHidden, 71));
  std::vector<float> norm = test::random_vector(kHidden, 72, 0.5f, 1.5f);
  std::vector<uint8_t> head;
  Checkpoint() {
    for (float v : test::random_vector(kVocab * kHidden, 73, -2.0f, 2.0f))
      head.push_back(float_to_fp8e4m3(v));
  }
  std::vector<TensorToWrite> tensors() const {
    return {{"model.embed_tokens.weight", DType::kBF16, {kVocab, kHidden}, embed.data()},
            {"model.norm.weight", DType::kF32, {kHidden}, norm.data()},
            {"lm_head.weight", DType::kF8E4M3, {kVocab, kHidden}, head.data()}};
  }
};

std::vector<float> logits(const void* embed, const float* norm, const void* head) {
  const std::vector<int32_t> ids = {5, 0, 63};
  std::vector<float> h(3 * kHidden), n(3 * kHidden), out(3 * kVocab);
  cpu::embedding({h.data(), embed, ids.data(), DType::kBF16, 3, kHidden, 0, kVocab});
  cpu::rmsnorm({n.data(), nullptr, h.data(), norm, 3, kHidden, kHidden, kHidden, 1e-6f});
  cpu::gemm({out.data(), n.data(), head, nullptr, DType::kF8E4M3, 3, kVocab, kHidden, false});
  return out;
}

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("safetensors: a random checkpoint written and read back gives identical tensors and logits") {
  const Checkpoint ckpt;
  const std::string path = temp_path("roundtrip");
  write_safetensors(path, ckpt.tensors(), {{"format", "pt"}});
  const SafetensorsReader reader(path);
  REQUIRE(reader.tensors().size() == 3);
  CHECK(reader.metadata().at("format") == "pt");
  const auto& embed = reader.require("model.embed_tokens.weight", DType::kBF16, {kVocab, kHidden});
  const auto& norm = reader.require("model.norm.weight", DType::kF32, {kHidden});
  const auto& head = reader.require("lm_head.weight", DType::kF8E4M3, {kVocab, kHidden});
  CHECK(std::memcmp(reader.data(embed), ckpt.embed.data(), ckpt.embed.size() * 2) == 0);
  CHECK(std::memcmp(reader.data(head), ckpt.head.data(), ckpt.head.size()) == 0);
  std::vector<float> norm_read(kHidden);
  std::memcpy(norm_read.data(), reader.data(norm),
              kHidden * sizeof(float));  // data section is not 4-aligned in general
  CHECK(logits(reader.data(embed), norm_read.data(), reader.data(head)) ==
        logits(ckpt.embed.data(), ckpt.norm.data(), ckpt.head.data()));
  // Header starts with the little-endian length and is padded to 8 bytes.
  std::ifstream in(path, std::ios::binary);
  uint64_t header_len = 0;
  in.read(reinterpret_cast<char*>(&header_len), 8);
  CHECK(header_len % 8 == 0);
  std::filesystem::remove(path);
}

TEST_CASE(
    "safetensors: missing, mis-shaped, wrong or unsupported dtype -> one InputError naming the tensor") {
  const Checkpoint ckpt;
  const std::string path = temp_path("errors");
  auto tensors = ckpt.tensors();
  tensors.push_back({"model.layers.0.mlp.fp16", DType::kF32, {4}, ckpt.norm.data()});
  write_safetensors(path, tensors);
  {  // rewrite the F32 tensor's dtype as F16 (same 16 bytes = 8 halves) to get an unsupported dtype
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    const std::string before = "\"dtype\":\"F32\",\"shape\":[4]", after = "\"dtype\":\"F16\",\"shape\":[8]";
    const auto at = all.find(before);
    REQUIRE(at != std::string::npos);
    all.replace(at, before.size(), after);
    f.seekp(0);
    f.write(all.data(), static_cast<std::streamsize>(all.size()));
  }
  const SafetensorsReader reader(path);
  const std::string missing = error_of([&] {
    reader.require("model.layers.0.self_attn.q_a_proj.weight", {32, kHidden});
  });
  CHECK_THAT(missing, Catch::Contains("q_a_proj.weight") && Catch::Contains("no such tensor"));
  const std::string shape = error_of([&] {
    reader.require("lm_head.weight", DType::kF8E4M3, {kVocab + 1, kHidden});
  });
  CHECK_THAT(shape, Catch::Contains("lm_head.weight") && Catch::Contains("[65, 256]") &&
                        Catch::Contains("[64, 256]"));
  const std::string dtype = error_of([&] { reader.require("model.norm.weight", DType::kBF16, {kHidden}); });
  CHECK_THAT(dtype, Catch::Contains("expected dtype BF16") && Catch::Contains("found dtype F32"));
  const std::string f16 = error_of([&] { reader.require("model.layers.0.mlp.fp16", {8}); });
  CHECK_THAT(f16, Catch::Contains("mlp.fp16") && Catch::Contains("found dtype F16"));
  std::filesystem::remove(path);
}

TEST_CASE("safetensors: truncated or malformed files -> InputError, not a crash") {
  const Checkpoint ckpt;
  const std::string path = temp_path("truncated");
  write_safetensors(path, ckpt.tensors());
  const auto full = std::filesystem::file_size(path);
  std::filesystem::resize_file(path, full - 100);  // cuts into the last tensor's data
  CHECK_THAT(error_of([&] { SafetensorsReader r(path); }), Catch::Contains("data_offsets"));
  std::filesystem::resize_file(path, 4);
  CHECK_THAT(error_of([&] { SafetensorsReader r(path); }), Catch::Contains("8-byte header length"));
  {
    std::ofstream out(path, std::ios::binary);
    const uint64_t len = 8;
    out.write(reinterpret_cast<const char*>(&len), 8);
    out << "{oops   ";
  }
  CHECK_THAT(error_of([&] { SafetensorsReader r(path); }), Catch::Contains("malformed JSON"));
  CHECK_THAT(error_of([&] { SafetensorsReader r(path + ".absent"); }), Catch::Contains("cannot be opened"));
  std::filesystem::remove(path);
}
