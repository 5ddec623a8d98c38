// OpenAI response bodies of `tokenline serve`: whole replies (text_completion, chat.completion), Server-Sent
// Events chunks (text_completion chunks, chat.completion.chunk, the usage chunk, `data: [DONE]`) and error
// objects. Text that is not valid UTF-8 (random weights emit arbitrary bytes) is replaced by U+FFFD;
// token_ids stay exact. nlohmann/json stays in the .cpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "serve/completion_hub.h"
#include "serve/openai_request.h"
#include "serve/tokenizer.h"

namespace tokenline {

struct ReplyContext {
  Endpoint endpoint = Endpoint::kCompletions;
  std::string id;  // "cmpl-7", "chatcmpl-7"
  int64_t created = 0;
  std::string model;
  bool logprobs = false;
  const Tokenizer* tokenizer = nullptr;
};

struct Usage {
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t cached_tokens = 0;
};

// Prompt tokens count once per prompt (not per choice); completion tokens sum over choices.
Usage usage_of(const std::vector<ChoiceState>& choices, int32_t n);

std::string error_body(const ApiError& error);
// The whole reply. REQUIRES: every choice done.
std::string reply_body(const ReplyContext& ctx, const std::vector<ChoiceState>& choices, const Usage& usage);

// One SSE event for one choice's new text (and tokens, logprobs); finish kNone while it runs. Chat's first
// event of a choice (first = true) carries the assistant role.
struct ChoiceDelta {
  size_t index = 0;
  std::string text;
  std::vector<TokenLogprobs> logprobs;
  FinishReason finish = FinishReason::kNone;
  bool first = false;
};
std::string stream_event(const ReplyContext& ctx, const ChoiceDelta& delta);
std::string usage_event(const ReplyContext& ctx, const Usage& usage);  // choices: [] and the usage
std::string error_event(const ApiError& error);
inline constexpr const char* kDoneEvent = "data: [DONE]\n\n";

}  // namespace tokenline
