// OpenAI request bodies of `tokenline serve` parsed into native structs at the edge (nlohmann/json stays
// in the .cpp): POST /v1/completions (prompt: a string, strings, token ids or lists of token ids) and
// POST /v1/chat/completions (messages rendered by the default chat template below). Every field is
// honoured or refused: an unknown field, or a known one with a value the engine cannot honour, is a 400
// naming it (OpenAI's error object), never a silent 200.
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

// What the served model allows.
struct ServedModel {
  std::string name;  // the "model" clients must name (or omit)
  int64_t max_context_tokens = 0;
  int32_t vocab = 0;  // token ids in prompts must be below this
  bool mtp = false;   // MTP drafts on: greedy only (drafts are verified greedily), no logprobs
};

constexpr int32_t kMaxLogprobs = 20;  // OpenAI's top_logprobs limit (vLLM's default max_logprobs is 20)
constexpr int32_t kMaxChoices = 128;  // n beyond this is refused: one engine request per choice
constexpr size_t kMaxStops = 4;       // OpenAI's limit on stop sequences

std::variant<CompletionRequest, ApiError> parse_completion_request(Endpoint endpoint, std::string_view body,
                                                                   const Tokenizer& tokenizer,
                                                                   const ServedModel& model);

// The default chat template (above) over (role, content) pairs.
std::string render_chat(const std::vector<std::pair<std::string, std::string>>& messages);

}  // namespace tokenline
