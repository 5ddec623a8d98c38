// BpePretokenizer: splits text into the pieces byte-level BPE merges within, as the regular expressions of
// Hugging Face tokenizer.json files do (written out: std::regex has no \p{L}). Two forms:
//   kGpt2:   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//   kLlama3: (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,D}| ?[^\s\p{L}\p{N}]+[\r\n]*|
//            \s*[\r\n]+|\s+(?!\S)|\s+        (D = 3 for Llama 3, 1 for Qwen 2)
// Letters (\p{L}) are ASCII letters and every non-ASCII code point that is not white space, so pieces are
// exact for ASCII text and for text whose non-ASCII characters are letters; non-ASCII digits and
// punctuation count as letters (an approximation, named here).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tokenline {

enum class PretokenizerForm { kGpt2, kLlama3 };

struct PretokenizerConfig {
  PretokenizerForm form = PretokenizerForm::kGpt2;
  int32_t max_digits = 3;  // kLlama3: \p{N}{1,max_digits}
};

// The pieces of text, in order; they concatenate to text. Invalid UTF-8 bytes are pieces of their own.
std::vector<std::string_view> pretokenize(std::string_view text, const PretokenizerConfig& config);

}  // namespace tokenline
