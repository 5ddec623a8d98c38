#include "serve/openai_request.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

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

TEST_CASE("a field of the wrong type is a 400 naming its path, whatever the field", "[serve][openai]") {
  ApiError e = refused(Endpoint::kChat, R"({"messages": [{"role": 1, "content": "hi"}]})");
  CHECK(e.status == 400);
  CHECK(e.message == "messages[0].role: expected a string, found a number");
  CHECK(e.param == "messages");
  e = refused(Endpoint::kChat, R"({"messages": [{"role": "user", "content": [{"type": 1, "text": "x"}]}]})");
  CHECK(e.message == "messages[0].content[0].type: expected a string, found a number");
  e = refused(Endpoint::kChat,
              R"({"messages": [{"role": "user", "content": "x"}], "response_format": {"type": 1}})");
  CHECK(e.param == "response_format");
  CHECK(e.code == "unsupported_value");
  e = refused(Endpoint::kChat,
              R"({"messages": [{"role": "user", "content": [{"type": "text", "text": 5}]}]})");
  CHECK(e.message == "messages[0].content[0].text: expected a string, found a number");
  e = refused(Endpoint::kCompletions, R"({"prompt": "x", "stream": "yes"})");
  CHECK(e.message == "stream: expected a boolean, found a string");
  e = refused(Endpoint::kCompletions, R"({"prompt": ["a", {"b": 1}]})");
  CHECK(e.message.rfind("prompt[1]: expected a string or a non-empty list of token ids", 0) == 0);
  CHECK(refused(Endpoint::kCompletions, R"({"prompt": "x", "user": 7})").message ==
        "user: expected a string, found a number");
  e = refused(Endpoint::kCompletions, R"({"prompt": [[1, "2"]]})");
  CHECK(e.message == "prompt[0][1]: expected an integer, found a string");
}

// Every field of both endpoints set to every JSON kind: the parse answers (a request or a 400), never throws.
TEST_CASE("no value of any type in any field makes the parser throw", "[serve][openai]") {
  using nlohmann::json;
  const std::vector<json> values = {json(1),
                                    json(-1),
                                    json(1.5),
                                    json("x"),
                                    json(""),
                                    json(true),
                                    json(false),
                                    json(nullptr),
                                    json::array(),
                                    json::object(),
                                    json::array({1}),
                                    json::array({"a"}),
                                    json::object({{"type", 1}}),
                                    json(UINT64_MAX),
                                    json(INT64_MIN),
                                    json(1e300)};
  const json chat =
      json::parse(R"({"messages": [{"role": "user", "content": [{"type": "text", "text": "x"}]}],
      "model": "tiny", "max_tokens": 4, "max_completion_tokens": 4, "temperature": 0.5, "top_p": 0.5,
      "top_k": 4, "seed": 1, "stop": ["z"], "n": 1, "stream": true, "stream_options": {"include_usage": true},
      "logprobs": true, "top_logprobs": 2, "user": "u", "presence_penalty": 0, "frequency_penalty": 0,
      "logit_bias": {}, "ignore_eos": false, "response_format": {"type": "text"}, "tools": [],
      "tool_choice": "none", "store": false, "metadata": {}, "parallel_tool_calls": true})");
  json completion = chat;
  completion.erase("messages");
  for (const char* k : {"max_completion_tokens", "top_logprobs", "response_format", "tools", "tool_choice",
                        "store", "metadata", "parallel_tool_calls"})
    completion.erase(k);
  completion["prompt"] = json::array({"x", "y"});
  completion["logprobs"] = 2;
  completion["echo"] = false;
  completion["best_of"] = 1;
  // Every path to a value in the body: each top-level field, and the nested ones of messages.
  const std::vector<json::json_pointer> chat_paths = {json::json_pointer("/messages"),
                                                      json::json_pointer("/messages/0"),
                                                      json::json_pointer("/messages/0/role"),
                                                      json::json_pointer("/messages/0/content"),
                                                      json::json_pointer("/messages/0/content/0"),
                                                      json::json_pointer("/messages/0/content/0/type"),
                                                      json::json_pointer("/messages/0/content/0/text"),
                                                      json::json_pointer("/stream_options/include_usage"),
                                                      json::json_pointer("/response_format/type"),
                                                      json::json_pointer("/stop/0")};
  auto check_all = [&](Endpoint endpoint, const json& body, std::vector<json::json_pointer> paths) {
    REQUIRE(std::holds_alternative<CompletionRequest>(
        parse_completion_request(endpoint, body.dump(), ByteTokenizer(), kModel)));
    for (const auto& [key, value] : body.items()) paths.emplace_back("/" + key);
    for (const json::json_pointer& path : paths) {
      for (const json& v : values) {
        json mutated = body;
        mutated[path] = v;
        const std::string text = mutated.dump();
        INFO(text);
        CHECK_NOTHROW(parse_completion_request(endpoint, text, ByteTokenizer(), kModel));
      }
    }
  };
  check_all(Endpoint::kChat, chat, chat_paths);
  check_all(Endpoint::kCompletions, completion,
            {json::json_pointer("/prompt/0"), json::json_pointer("/prompt/1")});
}

TEST_CASE("an unsigned integer beyond int64 is out of range, not wrapped", "[serve][openai]") {
  ApiError e = refused(Endpoint::kCompletions, R"({"prompt": "x", "top_k": 18446744073709551615})");
  CHECK(e.param == "top_k");
  CHECK(e.message == "top_k: expected an integer in [-1, 2147483647], found 18446744073709551615");
  CHECK(refused(Endpoint::kCompletions, R"({"prompt": "x", "top_k": 2147483648})").param == "top_k");
  CHECK(refused(Endpoint::kCompletions, R"({"prompt": "x", "seed": 18446744073709551615})").param == "seed");
  CHECK(refused(Endpoint::kCompletions, R"({"prompt": "x", "max_tokens": 18446744073709551615})").param ==
        "max_tokens");
  CHECK(ok(Endpoint::kCompletions, R"({"prompt": "x", "top_k": -1})").sampling.top_k == 0);  // vLLM: all
}

TEST_CASE("a body that is not UTF-8 JSON is a 400 that says what is wrong", "[serve][openai]") {
  ApiError e = refused(Endpoint::kCompletions, R"({"prompt": "x", "temperature": 1e309})");
  CHECK(e.status == 400);
  CHECK(e.message.find("finite") != std::string::npos);
  CHECK(e.message.find("1e309") != std::string::npos);
  e = refused(Endpoint::kCompletions, R"({"prompt": "x", "temperature": NaN})");
  CHECK(e.message.find("not valid JSON") != std::string::npos);
  CHECK(e.message.find("no NaN or Infinity") != std::string::npos);
  e = refused(Endpoint::kCompletions, R"({"prompt": "\ud800"})");
  CHECK(e.message.find("surrogate") != std::string::npos);
  e = refused(Endpoint::kCompletions, "{\"prompt\": \"caf\xe9\"}");
  CHECK(e.message == "the request body is not valid UTF-8 (byte 15)");
  e = refused(Endpoint::kCompletions, R"(["prompt"])");
  CHECK(e.message == "the request body must be a JSON object, found a list");
}

TEST_CASE("a request's choices and tokens are bounded before anything is allocated for them",
          "[serve][openai]") {
  // 30,000 one-token prompts x n 128 (a 150 KB body) would be 3.84 M engine requests.
  std::string prompts = "[";
  for (int i = 0; i < 30000; ++i) prompts += i == 0 ? "[1]" : ",[1]";
  prompts += "]";
  ApiError e =
      refused(Endpoint::kCompletions, R"({"prompt": )" + prompts + R"(, "n": 128, "max_tokens": 1})");
  CHECK(e.code == "too_many_choices");
  CHECK(e.message.find("at most 128 choices") != std::string::npos);
  e = refused(Endpoint::kCompletions, R"({"prompt": ["a", "b", "c"], "n": 50})");  // 150 choices
  CHECK(e.code == "too_many_choices");
  CHECK(e.param == "n");
  CHECK(ok(Endpoint::kCompletions, R"({"prompt": ["a", "b"], "n": 64})").n == 64);  // 128: at the cap
  ServedModel small = kModel;
  small.max_request_tokens = 1000;
  e = refused(Endpoint::kCompletions, R"({"prompt": "ab", "n": 10, "max_tokens": 100})", small);
  CHECK(e.code == "too_many_tokens");  // 10 x (3 prompt + 100) = 1030
  CHECK(e.param == "max_tokens");
  CHECK(ok(Endpoint::kCompletions, R"({"prompt": "ab", "n": 10, "max_tokens": 97})", small).n == 10);  // 1000
}

}  // namespace tokenline
