// Tokenizer: text <-> token ids for served requests. Two implementations: ByteTokenizer (one id per byte,
// for random weights) and BpeTokenizer (a Hugging Face tokenizer.json with byte-level BPE, as GLM,
// DeepSeek, Llama 3 and Qwen ship it). Immutable after construction: thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tokenline {

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;
  virtual std::vector<int32_t> encode(std::string_view text, bool add_bos) const = 0;
  // The bytes token id stands for; empty for special tokens and ids beyond the vocabulary.
  virtual std::string token_bytes(int32_t id) const = 0;
  // How a token is shown in logprobs (its bytes, or a special token's name).
  virtual std::string token_text(int32_t id) const { return token_bytes(id); }
  virtual int32_t bos_id() const = 0;  // -1: none
  virtual int32_t eos_id() const = 0;  // -1: none
  // Ends generation (a tokenizer may have several: Llama 3's <|end_of_text|> and <|eot_id|>).
  virtual bool is_eos(int32_t id) const { return id >= 0 && id == eos_id(); }
  virtual int32_t vocab_size() const = 0;

  std::string decode(std::span<const int32_t> ids) const {
    std::string text;
    for (int32_t id : ids) text += token_bytes(id);
    return text;
  }
};

}  // namespace tokenline
