#include "serve/byte_tokenizer.h"

namespace tokenline {

std::vector<int32_t> ByteTokenizer::encode(std::string_view text, bool add_bos) const {
  std::vector<int32_t> ids;
  ids.reserve(text.size() + 1);
  if (add_bos) ids.push_back(kBos);
  for (char c : text) ids.push_back(static_cast<int32_t>(static_cast<unsigned char>(c)));
  return ids;
}

std::string ByteTokenizer::token_bytes(int32_t id) const {
  if (id < 0 || id >= kByteIds) return std::string();
  return std::string(1, static_cast<char>(static_cast<unsigned char>(id)));
}

std::string ByteTokenizer::token_text(int32_t id) const {
  if (id == kBos) return "<bos>";
  if (id == kEos) return "<eos>";
  return token_bytes(id);
}

}  // namespace tokenline
