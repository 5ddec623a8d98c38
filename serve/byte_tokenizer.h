// ByteTokenizer: text <-> token ids for random weights (a checkpoint's own: bpe_tokenizer.h). Each
// byte is its own id (0..255); specials follow (BOS 256, EOS 257). Workload prompts made up as byte ids
// (engine/runtime/synthetic_prompt.h) decode through it byte for byte.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "serve/tokenizer.h"

namespace tokenline {

class ByteTokenizer final : public Tokenizer {
 public:
  static constexpr int32_t kByteIds = 256;  // one id per byte value
  static constexpr int32_t kBos = 256;
  static constexpr int32_t kEos = 257;
  static constexpr int32_t kVocab = 258;  // the model's vocab must be at least this

  std::vector<int32_t> encode(std::string_view text, bool add_bos) const override;
  std::string token_bytes(int32_t id) const override;  // ids < 256: that byte; specials: empty
  std::string token_text(int32_t id) const override;   // specials by name: "<bos>", "<eos>"
  int32_t bos_id() const override { return kBos; }
  int32_t eos_id() const override { return kEos; }
  int32_t vocab_size() const override { return kVocab; }
  // Bytes of ids < 256; specials and ids beyond the tokenizer are skipped.
  std::string decode(const std::vector<int32_t>& ids) const { return Tokenizer::decode(ids); }
};

}  // namespace tokenline
