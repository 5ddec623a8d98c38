// ByteTokenizer: text <-> token ids for random weights (a checkpoint's own: bpe_tokenizer.h). Each
// byte is its own id (0..255); specials follow (BOS 256, EOS 257). Prompts of workloads, which carry only
// lengths and prefix hash ids, are synthesized deterministically as byte ids (synthesize_prompt).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/request.h"
#include "engine/runtime/tokenizer.h"

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

// The prompt's token ids (bytes, 0..255) from the seed and the request's prefix identity: token p of
// block b is drawn from (seed, block_hashes[b], p mod block_tokens) when the block has a hash id, else
// from (seed, request id, p). Requests sharing their first k hash ids share their first k blocks of
// tokens, so prefix-cache hits in a real run follow the workload's hash ids.
std::vector<int32_t> synthesize_prompt(const RequestSpec& spec, uint64_t seed);

}  // namespace tokenline
