// BpeTokenizer: a Hugging Face tokenizer.json with a byte-level BPE model, as GLM, DeepSeek, Llama 3 and
// Qwen ship it: added tokens matched verbatim first, the rest split by the pre-tokenizer's expression
// (bpe_pretokenizer.h), each piece's bytes mapped to GPT-2's byte-level alphabet and merged by rank;
// ignore_merges takes a piece that is a whole vocabulary entry at once (Llama 3). BOS is the first special
// token of the post-processor's single template; EOS ids are the added tokens of that role by their usual
// names (<|endoftext|>, <|eot_id|>, <|im_end|>, </s>, ...). Normalizers are not applied (byte-level
// tokenizers ship none). Immutable after load: thread-safe.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "serve/bpe_pretokenizer.h"
#include "serve/tokenizer.h"

namespace tokenline {

class BpeTokenizer final : public Tokenizer {
 public:
  // Throws InputError naming the file and field when it is not a byte-level BPE tokenizer.json.
  static BpeTokenizer load(const std::string& path);
  static BpeTokenizer parse(std::string_view json_text, const std::string& source);

  std::vector<int32_t> encode(std::string_view text, bool add_bos) const override;
  std::string token_bytes(int32_t id) const override;
  std::string token_text(int32_t id) const override;
  int32_t bos_id() const override { return bos_; }
  int32_t eos_id() const override { return eos_ids_.empty() ? -1 : *eos_ids_.begin(); }
  bool is_eos(int32_t id) const override { return eos_ids_.count(id) != 0; }
  int32_t vocab_size() const override { return static_cast<int32_t>(text_of_.size()); }

 private:
  struct Added {
    std::string content;
    int32_t id = 0;
    bool special = true;
  };
  void encode_piece(std::string_view piece, std::vector<int32_t>& out) const;

  PretokenizerConfig pretokenizer_;
  bool add_prefix_space_ = false;
  bool ignore_merges_ = false;
  std::unordered_map<std::string, int32_t> ids_;    // byte-level vocabulary string -> id (lookups only)
  std::unordered_map<std::string, int32_t> ranks_;  // "left right" -> merge rank (lookups only)
  std::vector<std::string> text_of_;                // id -> vocabulary string
  std::vector<bool> special_;                       // id -> a special added token
  std::vector<Added> added_;                        // longest first
  std::set<int32_t> eos_ids_;
  int32_t bos_ = -1;
};

}  // namespace tokenline
