// A byte-level BPE tokenizer.json built here (GPT-2's byte alphabet, a few merges, added tokens, a BOS
// template): merges apply by rank, added tokens match verbatim, every byte string round-trips.
#include "serve/bpe_tokenizer.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "common/input_error.h"

namespace tokenline {
namespace {

using json = nlohmann::json;

std::string utf8(char32_t c) {
  std::string s;
  if (c < 0x80) return std::string(1, static_cast<char>(c));
  s += static_cast<char>(0xC0 | (c >> 6));
  s += static_cast<char>(0x80 | (c & 0x3F));
  return s;  // the alphabet stays below U+0800
}

// GPT-2's bytes_to_unicode, written from its definition (printable bytes keep their code point).
std::vector<std::string> byte_alphabet() {
  std::vector<std::string> out(256);
  char32_t next = 256;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174;
    out[static_cast<size_t>(b)] = utf8(printable ? static_cast<char32_t>(b) : next++);
  }
  return out;
}

json tokenizer_json(const json& pre_tokenizer) {
  json vocab = json::object();
  const std::vector<std::string> alphabet = byte_alphabet();
  for (int b = 0; b < 256; ++b) vocab[alphabet[static_cast<size_t>(b)]] = b;
  const std::vector<std::string> merges = {"h e", "l l",   "he ll", "hell o", "Ġ w",
                                           "o r", "Ġw or", "l d",   "Ġwor ld"};
  int id = 256;
  for (const std::string& m : merges) {
    const size_t space = m.find(' ');
    vocab[m.substr(0, space) + m.substr(space + 1)] = id++;
  }
  return {{"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", merges}}},
          {"pre_tokenizer", pre_tokenizer},
          {"added_tokens",
           {{{"id", 300}, {"content", "<|begin|>"}, {"special", true}},
            {{"id", 301}, {"content", "<|endoftext|>"}, {"special", true}},
            {{"id", 302}, {"content", "<|im_start|>"}, {"special", true}}}},
          {"post_processor",
           {{"type", "TemplateProcessing"},
            {"single",
             {{{"SpecialToken", {{"id", "<|begin|>"}, {"type_id", 0}}}}, {{"Sequence", {{"id", "A"}}}}}}}}};
}

const json kGpt2 = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}};

}  // namespace

TEST_CASE("byte-level BPE merges by rank, matches added tokens and round-trips bytes",
          "[runtime][tokenizer]") {
  const BpeTokenizer tok = BpeTokenizer::parse(tokenizer_json(kGpt2).dump(), "built");
  CHECK(tok.vocab_size() == 303);
  CHECK(tok.bos_id() == 300);
  CHECK(tok.is_eos(301));
  CHECK_FALSE(tok.is_eos(302));
  // "hello" and " world" merge to one token each (ids 259 and 264: the 4th and 9th merge).
  CHECK(tok.encode("hello world", false) == std::vector<int32_t>{259, 264});
  CHECK(tok.encode("hello world", true) == std::vector<int32_t>{300, 259, 264});
  CHECK(tok.encode("<|im_start|>hello<|endoftext|>", false) == std::vector<int32_t>{302, 259, 301});
  // Unmerged text falls back to bytes: "hex" is h e (merged) + x.
  CHECK(tok.encode("hex", false) == std::vector<int32_t>{256, 'x'});
  const std::string text = "héllo ☃ world\n\t  42!";
  CHECK(tok.decode(tok.encode(text, false)) == text);
  CHECK(tok.token_bytes(264) == " world");
  CHECK(tok.token_bytes(301).empty());  // a special token has no text
  CHECK(tok.token_text(301) == "<|endoftext|>");
}

TEST_CASE("pre-tokenizers split as GPT-2's and Llama 3's expressions do", "[runtime][tokenizer]") {
  const std::string text = "Hello  world's 42!\n";
  auto pieces = [&](const PretokenizerConfig& c) {
    std::vector<std::string> out;
    for (std::string_view p : pretokenize(text, c)) out.emplace_back(p);
    return out;
  };
  CHECK(pieces({PretokenizerForm::kGpt2, 0}) ==
        std::vector<std::string>{"Hello", " ", " world", "'s", " 42", "!", "\n"});
  CHECK(pieces({PretokenizerForm::kLlama3, 3}) ==
        std::vector<std::string>{"Hello", " ", " world", "'s", " ", "42", "!\n"});
  std::vector<std::string> digits;
  for (std::string_view p : pretokenize("12345", {PretokenizerForm::kLlama3, 3})) digits.emplace_back(p);
  CHECK(digits == std::vector<std::string>{"123", "45"});
  // A Llama 3 tokenizer.json is recognised by its Split expression.
  const json llama = {
      {"type", "Sequence"},
      {"pretokenizers",
       {{{"type", "Split"}, {"pattern", {{"Regex", "\\p{N}{1,3}| ?\\p{L}+"}}}, {"behavior", "Isolated"}},
        {{"type", "ByteLevel"}, {"use_regex", false}}}}};
  const BpeTokenizer tok = BpeTokenizer::parse(tokenizer_json(llama).dump(), "llama");
  CHECK(tok.decode(tok.encode("12345 hello", false)) == "12345 hello");
  CHECK_THROWS_AS(BpeTokenizer::parse(R"({"model": {"type": "WordPiece"}})", "wp"), InputError);
  CHECK_THROWS_AS(BpeTokenizer::parse(tokenizer_json({{"type", "Whitespace"}}).dump(), "ws"), InputError);
}

}  // namespace tokenline
