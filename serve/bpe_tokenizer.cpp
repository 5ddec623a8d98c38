#include "serve/bpe_tokenizer.h"

#include <algorithm>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/input_error.h"

namespace tokenline {
namespace {

using json = nlohmann::json;

// EOS by name, in the order a served chat model ends a turn with them.
const char* const kEosNames[] = {"<|eot_id|>",      "<|im_end|>",     "<|endoftext|>",
                                 "<|end_of_text|>", "</s>",           "<｜end▁of▁sentence｜>",
                                 "<|user|>",        "<|observation|>"};

std::string utf8(char32_t c) {
  std::string s;
  if (c < 0x80) {
    s += static_cast<char>(c);
  } else if (c < 0x800) {
    s += static_cast<char>(0xC0 | (c >> 6));
    s += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    s += static_cast<char>(0xE0 | (c >> 12));
    s += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (c & 0x3F));
  }
  return s;
}

// GPT-2's bytes_to_unicode: printable bytes stand for themselves, the other 68 map to U+0100 onwards.
struct ByteAlphabet {
  std::string of_byte[256];
  std::unordered_map<std::string, uint8_t> byte_of;  // lookups only
  ByteAlphabet() {
    char32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174;
      of_byte[b] = utf8(printable ? static_cast<char32_t>(b) : next++);
      byte_of[of_byte[b]] = static_cast<uint8_t>(b);
    }
  }
};

const ByteAlphabet& alphabet() {
  static const ByteAlphabet a;
  return a;
}

// The byte-level string back to bytes (one alphabet character at a time).
std::string to_bytes(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const size_t len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    auto it = alphabet().byte_of.find(s.substr(i, len));
    if (it != alphabet().byte_of.end()) out += static_cast<char>(it->second);
    i += len;
  }
  return out;
}

PretokenizerConfig pretokenizer_of(const json& pre, const std::string& source, bool& prefix_space) {
  const std::string type = pre.is_object() ? pre.value("type", "") : "";
  if (type == "ByteLevel") {
    prefix_space = pre.value("add_prefix_space", false);
    return PretokenizerConfig{PretokenizerForm::kGpt2, 0};
  }
  if (type == "Sequence") {
    const json parts = pre.value("pretokenizers", json::array());
    for (const json& p : parts) {
      if (p.value("type", "") == "ByteLevel") prefix_space = p.value("add_prefix_space", false);
      if (p.value("type", "") != "Split" || !p.contains("pattern")) continue;
      const std::string regex = p["pattern"].value("Regex", "");
      if (regex.find("\\p{N}{1,3}") != std::string::npos)
        return PretokenizerConfig{PretokenizerForm::kLlama3, 3};
      if (regex.find("\\p{N}") != std::string::npos) return PretokenizerConfig{PretokenizerForm::kLlama3, 1};
    }
  }
  throw InputError(source + ": pre_tokenizer", "ByteLevel, or a Split of GPT-2 / Llama 3 form",
                   pre.dump().substr(0, 80));
}

}  // namespace

BpeTokenizer BpeTokenizer::load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError("--tokenizer", "a readable tokenizer.json", "'" + path + "'");
  std::stringstream text;
  text << in.rdbuf();
  return parse(text.str(), path);
}

BpeTokenizer BpeTokenizer::parse(std::string_view json_text, const std::string& source) {
  const json root = json::parse(json_text, nullptr, false);
  if (!root.is_object() || !root.contains("model") || root["model"].value("type", "") != "BPE")
    throw InputError(
        source + ": model.type", "\"BPE\"",
        root.is_object() && root.contains("model") ? root["model"].value("type", "?") : "no model");
  const json& model = root["model"];
  BpeTokenizer t;
  t.pretokenizer_ = pretokenizer_of(root.value("pre_tokenizer", json()), source, t.add_prefix_space_);
  t.ignore_merges_ = model.value("ignore_merges", false);
  int32_t max_id = -1;
  const json vocab = model.value("vocab", json::object());  // a copy: items() of a temporary dangles
  for (const auto& [piece, id] : vocab.items()) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 ||
        id.get<int64_t>() >= std::numeric_limits<int32_t>::max())
      throw InputError(source + ": model.vocab", "non-negative integer ids", id.dump());
    t.ids_[piece] = id.get<int32_t>();
    max_id = std::max(max_id, id.get<int32_t>());
  }
  const json merges = model.value("merges", json::array());
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const json& m = merges[rank];
    const std::string pair = m.is_string() ? m.get<std::string>()
                             : m.is_array() && m.size() == 2
                                 ? m[0].get<std::string>() + " " + m[1].get<std::string>()
                                 : "";
    if (pair.find(' ') == std::string::npos)
      throw InputError(source + ": model.merges", "\"left right\" pairs", m.dump());
    t.ranks_.emplace(pair, static_cast<int32_t>(rank));
  }
  const json added_tokens = root.value("added_tokens", json::array());
  for (const json& a : added_tokens) {
    const Added added{a.value("content", ""), a.value("id", 0), a.value("special", true)};
    t.added_.push_back(added);
    max_id = std::max(max_id, added.id);
  }
  if (max_id < 0) throw InputError(source + ": model.vocab", "a vocabulary", "none");
  t.text_of_.assign(static_cast<size_t>(max_id) + 1, "");
  t.special_.assign(static_cast<size_t>(max_id) + 1, false);
  for (const auto& [piece, id] : t.ids_) t.text_of_[static_cast<size_t>(id)] = piece;
  for (const Added& a : t.added_) {
    t.text_of_[static_cast<size_t>(a.id)] = a.content;
    t.special_[static_cast<size_t>(a.id)] = a.special;
  }
  std::stable_sort(t.added_.begin(), t.added_.end(),
                   [](const Added& x, const Added& y) { return x.content.size() > y.content.size(); });
  for (const char* name : kEosNames)
    for (const Added& a : t.added_)
      if (a.content == name) t.eos_ids_.insert(a.id);
  const json single = root.value("post_processor", json::object()).value("single", json::array());
  if (!single.empty() && single[0].contains("SpecialToken")) {
    const std::string bos = single[0]["SpecialToken"].value("id", "");
    for (const Added& a : t.added_)
      if (a.content == bos) t.bos_ = a.id;
  }
  return t;
}

// Byte-level BPE on one piece: its bytes as alphabet characters, merged lowest rank first.
void BpeTokenizer::encode_piece(std::string_view piece, std::vector<int32_t>& out) const {
  std::string whole;
  std::vector<std::string> parts;
  for (char c : piece) {
    parts.push_back(alphabet().of_byte[static_cast<unsigned char>(c)]);
    whole += parts.back();
  }
  if (ignore_merges_) {
    if (auto it = ids_.find(whole); it != ids_.end()) {
      out.push_back(it->second);
      return;
    }
  }
  while (parts.size() > 1) {
    int32_t best = std::numeric_limits<int32_t>::max();
    size_t at = 0;
    for (size_t i = 0; i + 1 < parts.size(); ++i) {
      auto it = ranks_.find(parts[i] + " " + parts[i + 1]);
      if (it != ranks_.end() && it->second < best) {
        best = it->second;
        at = i;
      }
    }
    if (best == std::numeric_limits<int32_t>::max()) break;
    parts[at] += parts[at + 1];
    parts.erase(parts.begin() + static_cast<std::ptrdiff_t>(at) + 1);
  }
  for (const std::string& p : parts)
    if (auto it = ids_.find(p); it != ids_.end()) out.push_back(it->second);  // byte-level: every byte is in
}

std::vector<int32_t> BpeTokenizer::encode(std::string_view text, bool add_bos) const {
  std::vector<int32_t> ids;
  if (add_bos && bos_ >= 0) ids.push_back(bos_);
  std::string prefixed;
  if (add_prefix_space_ && !text.empty() && text[0] != ' ') {
    prefixed = " " + std::string(text);
    text = prefixed;
  }
  size_t start = 0;
  auto flush = [&](size_t end) {
    for (std::string_view piece : pretokenize(text.substr(start, end - start), pretokenizer_))
      encode_piece(piece, ids);
  };
  for (size_t i = 0; i < text.size();) {
    const Added* hit = nullptr;
    for (const Added& a : added_) {
      if (!a.content.empty() && text.compare(i, a.content.size(), a.content) == 0) {
        hit = &a;
        break;
      }
    }
    if (hit == nullptr) {
      ++i;
      continue;
    }
    flush(i);
    ids.push_back(hit->id);
    i += hit->content.size();
    start = i;
  }
  flush(text.size());
  return ids;
}

std::string BpeTokenizer::token_bytes(int32_t id) const {
  if (id < 0 || id >= vocab_size() || special_[static_cast<size_t>(id)]) return std::string();
  if (ids_.count(text_of_[static_cast<size_t>(id)]) == 0) return text_of_[static_cast<size_t>(id)];  // added
  return to_bytes(text_of_[static_cast<size_t>(id)]);
}

std::string BpeTokenizer::token_text(int32_t id) const {
  if (id < 0 || id >= vocab_size()) return std::string();
  return special_[static_cast<size_t>(id)] ? text_of_[static_cast<size_t>(id)] : token_bytes(id);
}

}  // namespace tokenline
