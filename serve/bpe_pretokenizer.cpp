#include "serve/bpe_pretokenizer.h"

#include <cctype>

namespace tokenline {
namespace {

struct Cp {
  char32_t value = 0;
  size_t offset = 0;  // byte offset in the text
};

// UTF-8 to code points; an invalid byte becomes U+FFFD over that one byte.
std::vector<Cp> code_points(std::string_view s) {
  std::vector<Cp> out;
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    bool ok = len > 0 && i + len <= s.size();
    char32_t v = len == 1 ? c : len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
    for (size_t k = 1; ok && k < len; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      ok = (cc & 0xC0) == 0x80;
      v = (v << 6) | (cc & 0x3F);
    }
    out.push_back(Cp{ok ? v : 0xFFFD, i});
    i += ok ? len : 1;
  }
  return out;
}

bool is_space(char32_t c) {
  return c == ' ' || (c >= '\t' && c <= '\r') || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F ||
         c == 0x3000;
}
bool is_digit(char32_t c) {
  return c >= '0' && c <= '9';
}
bool is_letter(char32_t c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= 0x80 && !is_space(c));
}
bool is_newline(char32_t c) {
  return c == '\r' || c == '\n';
}
bool is_other(char32_t c) {
  return !is_space(c) && !is_letter(c) && !is_digit(c);
}

class Splitter {
 public:
  Splitter(const std::vector<Cp>& cps, const PretokenizerConfig& config) : cps_(cps), config_(config) {}
  // The length (in code points) of the piece starting at i. REQUIRES: i < size.
  size_t piece(size_t i) const {
    const bool llama = config_.form == PretokenizerForm::kLlama3;
    if (size_t n = contraction(i, llama)) return n;
    if (size_t n = letters(i, llama)) return n;
    if (size_t n = digits(i, llama)) return n;
    if (size_t n = others(i, llama)) return n;
    if (size_t n = llama ? newlines(i) : 0) return n;
    return spaces(i);
  }

 private:
  char32_t at(size_t i) const { return i < cps_.size() ? cps_[i].value : 0; }
  size_t run(size_t i, bool (*pred)(char32_t)) const {
    size_t j = i;
    while (j < cps_.size() && pred(cps_[j].value)) ++j;
    return j - i;
  }
  size_t contraction(size_t i, bool any_case) const {
    if (at(i) != '\'') return 0;
    auto low = [&](size_t k) {
      return any_case ? static_cast<char32_t>(std::tolower(static_cast<int>(at(k) < 128 ? at(k) : 0)))
                      : at(k);
    };
    const char32_t a = low(i + 1), b = low(i + 2);
    if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
    if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
    return 0;
  }
  size_t letters(size_t i, bool llama) const {
    if (is_letter(at(i))) return run(i, is_letter);
    const bool prefix = llama
                            ? (i < cps_.size() && !is_newline(at(i)) && !is_letter(at(i)) && !is_digit(at(i)))
                            : at(i) == ' ';
    return prefix && is_letter(at(i + 1)) ? 1 + run(i + 1, is_letter) : 0;
  }
  size_t digits(size_t i, bool llama) const {
    if (llama) return std::min<size_t>(run(i, is_digit), static_cast<size_t>(config_.max_digits));
    if (is_digit(at(i))) return run(i, is_digit);
    return at(i) == ' ' && is_digit(at(i + 1)) ? 1 + run(i + 1, is_digit) : 0;
  }
  size_t others(size_t i, bool llama) const {
    const size_t lead = at(i) == ' ' && is_other(at(i + 1)) ? 1 : 0;
    const size_t n = run(i + lead, is_other);
    if (n == 0) return 0;
    return lead + n + (llama ? run(i + lead + n, is_newline) : 0);
  }
  // \s*[\r\n]+ : the white space run up to and including its last newline.
  size_t newlines(size_t i) const {
    const size_t n = run(i, is_space);
    for (size_t k = n; k > 0; --k)
      if (is_newline(at(i + k - 1))) return k;
    return 0;
  }
  // \s+(?!\S) then \s+ : a run before text leaves its last space to the text.
  size_t spaces(size_t i) const {
    const size_t n = run(i, is_space);
    if (n == 0) return 1;  // unreachable for valid input; consume one code point to make progress
    if (i + n == cps_.size() || n == 1) return n;
    return n - 1;
  }

  const std::vector<Cp>& cps_;
  const PretokenizerConfig& config_;
};

}  // namespace

std::vector<std::string_view> pretokenize(std::string_view text, const PretokenizerConfig& config) {
  const std::vector<Cp> cps = code_points(text);
  const Splitter splitter(cps, config);
  std::vector<std::string_view> pieces;
  for (size_t i = 0; i < cps.size();) {
    const size_t n = splitter.piece(i);
    const size_t begin = cps[i].offset, end = i + n < cps.size() ? cps[i + n].offset : text.size();
    pieces.push_back(text.substr(begin, end - begin));
    i += n;
  }
  return pieces;
}

}  // namespace tokenline
