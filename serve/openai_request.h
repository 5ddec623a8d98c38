// OpenAI request bodies of `tokenline serve` parsed into native structs at the edge (nlohmann/json stays
// in the .cpp): POST /v1/completions (prompt: a string, strings, token ids or lists of token ids) and
// POST /v1/chat/completions (messages rendered by the default chat template below). Every field is
// honoured or refused: an unknown field, a field of the wrong type (serve/request_field.h names its path:
// "messages[0].role: expected a string, found a number"), or a known one with a value the engine cannot
// honour, is a 400 naming it (OpenAI's error object), never a silent 200. A body that is not UTF-8 or not
// JSON (1e309, NaN, a lone surrogate) is a 400 saying what is wrong and where; a request whose work is
// above ServedModel's bounds (prompts x n, tokens) is a 400 before anything is allocated for it.
//
// Default chat template (ChatML, as Qwen and many fine-tunes use; the checkpoint's own Jinja template is
// not read): for each message "<|im_start|>{role}\n{content}<|im_end|>\n", then "<|im_start|>assistant\n";
// role "developer" is rendered as "system"; content parts of type "text" are concatenated.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "serve/token_sampler.h"
#include "serve/tokenizer.h"

namespace tokenline {

enum class Endpoint { kCompletions, kChat };

// OpenAI's error object: {"error": {"message", "type", "param", "code"}} with an HTTP status.
struct ApiError {
  int status = 400;
  std::string type = "invalid_request_error";
  std::string message;
  std::string param;  // empty: null
  std::string code;   // empty: null
};

struct CompletionRequest {
  Endpoint endpoint = Endpoint::kCompletions;
  std::vector<std::vector<int32_t>> prompts;  // token ids; chat: one
  int32_t n = 1;                              // choices per prompt
  int64_t max_tokens = 16;
  SamplingParams sampling;  // seed: the request's (or 0 when !seeded)
  bool seeded = false;
  std::vector<std::string> stop;
  bool ignore_eos = false;  // vLLM's extension
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage
};

constexpr int32_t kMaxLogprobs = 20;  // OpenAI's top_logprobs limit (vLLM's default max_logprobs is 20)
constexpr int32_t kMaxChoices = 128;  // n beyond this is refused: one engine request per choice
constexpr size_t kMaxStops = 4;       // OpenAI's limit on stop sequences
// Default bounds on the work of one request (serve's --max-request-choices, --max-request-tokens). Each
// choice (prompt x n) is one engine request holding its prompt's ids; 128 choices is OpenAI's limit on n;
// 2^22 tokens (prompt + max_tokens, summed over the choices) is 128 choices of a 32k context, and its
// prompt ids take at most 16 MB.
constexpr int64_t kDefaultMaxRequestChoices = kMaxChoices;
constexpr int64_t kDefaultMaxRequestTokens = int64_t{1} << 22;

// What the served model allows.
struct ServedModel {
  std::string name;  // the "model" clients must name (or omit)
  int64_t max_context_tokens = 0;
  int32_t vocab = 0;  // token ids in prompts must be below this
  bool mtp = false;   // MTP drafts on: greedy only (drafts are verified greedily), no logprobs
  int64_t max_request_choices = kDefaultMaxRequestChoices;  // prompts x n of one request
  int64_t max_request_tokens = kDefaultMaxRequestTokens;    // sum over its choices of prompt + max_tokens
};

std::variant<CompletionRequest, ApiError> parse_completion_request(Endpoint endpoint, std::string_view body,
                                                                   const Tokenizer& tokenizer,
                                                                   const ServedModel& model);

// The default chat template (above) over (role, content) pairs.
std::string render_chat(const std::vector<std::pair<std::string, std::string>>& messages);

}  // namespace tokenline
