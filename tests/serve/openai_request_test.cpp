#include "serve/openai_request.h"

#include <catch2/catch.hpp>

#include "serve/byte_tokenizer.h"

namespace tokenline {
namespace {

const ServedModel kModel{.name = "tiny", .max_context_tokens = 4096, .vocab = 1024, .mtp = false};

CompletionRequest ok(Endpoint endpoint, const std::string& body, const ServedModel& model = kModel) {
  auto parsed = parse_completion_request(endpoint, body, ByteTokenizer(), model);
  if (const ApiError* e = std::get_if<ApiError>(&parsed)) FAIL(e->message);
  return std::get<CompletionRequest>(parsed);
}

ApiError refused(Endpoint endpoint, const std::string& body, const ServedModel& model = kModel) {
  auto parsed = parse_completion_request(endpoint, body, ByteTokenizer(), model);
  REQUIRE(std::holds_alternative<ApiError>(parsed));
  return std::get<ApiError>(parsed);
}

}  // namespace

TEST_CASE("completions take string, string list, token id and token id list prompts", "[runtime][openai]") {
  CHECK(ok(Endpoint::kCompletions, R"({"prompt": "hi"})").prompts ==
        std::vector<std::vector<int32_t>>{{ByteTokenizer::kBos, 'h', 'i'}});
  CHECK(ok(Endpoint::kCompletions, R"({"prompt": ["a", "b"]})").prompts.size() == 2);
  CHECK(ok(Endpoint::kCompletions, R"({"prompt": [5, 6, 7]})").prompts ==
        std::vector<std::vector<int32_t>>{{5, 6, 7}});
  CHECK(ok(Endpoint::kCompletions, R"({"prompt": [[1], [2, 3]]})").prompts.size() == 2);
  const CompletionRequest r = ok(Endpoint::kCompletions, R"({"prompt": "x", "model": "tiny", "max_tokens": 7,
      "temperature": 0.5, "top_p": 0.9, "top_k": 5, "seed": 11, "stop": ["\n", "END"], "n": 3, "stream": true,
      "stream_options": {"include_usage": true}, "logprobs": 2, "user": "u", "presence_penalty": 0})");
  CHECK(r.max_tokens == 7);
  CHECK(r.sampling.temperature == 0.5f);
  CHECK(r.sampling.top_k == 5);
  CHECK(r.sampling.seed == 11);
  CHECK(r.seeded);
  CHECK(r.stop == std::vector<std::string>{"\n", "END"});
  CHECK(r.n == 3);
  CHECK(r.stream);
  CHECK(r.include_usage);
  CHECK(r.sampling.logprobs == 2);
  CHECK(ok(Endpoint::kCompletions, R"({"prompt": "x"})").max_tokens == 16);  // OpenAI's default
}

TEST_CASE("chat renders the default template, max_completion_tokens wins, logprobs as booleans",
          "[runtime][openai]") {
  const CompletionRequest r = ok(Endpoint::kChat, R"({"messages": [{"role": "system", "content": "be brief"},
      {"role": "user", "content": [{"type": "text", "text": "hi"}]}], "max_tokens": 9, "max_completion_tokens": 5,
      "logprobs": true, "top_logprobs": 3})");
  const std::string text =
      "<|im_start|>system\nbe brief<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n"
      "<|im_start|>assistant\n";
  CHECK(r.prompts.at(0) == ByteTokenizer().encode(text, true));
  CHECK(r.max_tokens == 5);
  CHECK(r.sampling.logprobs == 3);
  // Without a limit a chat may fill the context (vLLM's default).
  const CompletionRequest open = ok(Endpoint::kChat, R"({"messages": [{"role": "user", "content": "hi"}]})");
  CHECK(open.max_tokens == 4096 - static_cast<int64_t>(open.prompts[0].size()));
}

TEST_CASE("every parameter is honoured or refused by name", "[runtime][openai]") {
  ApiError e = refused(Endpoint::kCompletions, R"({"prompt": "x", "frobnicate": 1})");
  CHECK(e.status == 400);
  CHECK(e.param == "frobnicate");
  CHECK(e.code == "unknown_parameter");
  e = refused(Endpoint::kChat, R"({"messages": [{"role": "user", "content": "x"}], "prompt": "x"})");
  CHECK(e.param == "prompt");
  e = refused(Endpoint::kCompletions, R"({"prompt": "x", "frequency_penalty": 0.5})");
  CHECK(e.param == "frequency_penalty");
  CHECK(e.code == "unsupported_value");
  CHECK(refused(Endpoint::kCompletions, R"({"prompt": "x", "echo": true})").param == "echo");
  CHECK(refused(Endpoint::kCompletions, R"({"prompt": "x", "temperature": 3})").param == "temperature");
  CHECK(refused(Endpoint::kCompletions, R"({"prompt": "x", "n": 0})").param == "n");
  CHECK(refused(Endpoint::kCompletions, R"({"prompt": "x", "stop": ["a", "b", "c", "d", "e"]})").param ==
        "stop");
  CHECK(refused(Endpoint::kCompletions, R"({"prompt": "x", "stream_options": {"include_usage": true}})")
            .param == "stream_options");
  CHECK(refused(Endpoint::kCompletions, R"({"prompt": [1, 2000]})").param == "prompt");  // beyond the vocab
  CHECK(refused(Endpoint::kChat, R"({"messages": [{"role": "tool", "content": "x"}]})").param == "messages");
  CHECK(refused(Endpoint::kChat, R"({"messages": [], "top_logprobs": 2})").param == "messages");
  CHECK(refused(Endpoint::kChat, R"({"messages": [{"role": "user", "content": "x"}], "top_logprobs": 2})")
            .param == "top_logprobs");
  CHECK(refused(Endpoint::kCompletions, "not json").status == 400);
  e = refused(Endpoint::kCompletions, R"({"prompt": "x", "model": "gpt-4"})");
  CHECK(e.status == 404);
  CHECK(e.code == "model_not_found");
  e = refused(Endpoint::kCompletions, R"({"prompt": "x", "max_tokens": 5000})");
  CHECK(e.code == "context_length_exceeded");
  ServedModel mtp = kModel;
  mtp.mtp = true;
  CHECK(refused(Endpoint::kCompletions, R"({"prompt": "x"})", mtp).param == "temperature");  // default T = 1
  CHECK(ok(Endpoint::kCompletions, R"({"prompt": "x", "temperature": 0})", mtp).sampling.greedy());
}

}  // namespace tokenline
