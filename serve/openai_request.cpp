#include "serve/openai_request.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "common/input_limits.h"
#include "common/json_depth.h"

namespace tokenline {
namespace {

using json = nlohmann::json;

// Fields a request may carry. Those in kDefaultOnly are accepted at their default value only.
const std::set<std::string, std::less<>> kCommonFields = {"model",
                                                          "max_tokens",
                                                          "temperature",
                                                          "top_p",
                                                          "top_k",
                                                          "seed",
                                                          "stop",
                                                          "n",
                                                          "stream",
                                                          "stream_options",
                                                          "logprobs",
                                                          "user",
                                                          "presence_penalty",
                                                          "frequency_penalty",
                                                          "logit_bias",
                                                          "ignore_eos"};
const std::set<std::string, std::less<>> kCompletionFields = {"prompt", "echo", "best_of", "suffix"};
const std::set<std::string, std::less<>> kChatFields = {
    "messages", "max_completion_tokens", "top_logprobs", "response_format", "tools", "tool_choice", "store",
    "metadata", "parallel_tool_calls"};

ApiError bad(std::string message, std::string param, std::string code = "") {
  return ApiError{
      .status = 400, .message = std::move(message), .param = std::move(param), .code = std::move(code)};
}

// A field present with a value the engine cannot honour: refused by name.
std::optional<ApiError> unsupported_value(const json& body) {
  auto refuse = [](const std::string& field, const std::string& why) {
    return bad("'" + field + "' is not supported by tokenline serve: " + why, field, "unsupported_value");
  };
  auto non_default = [&](const char* field, auto is_default) {
    return body.contains(field) && !body[field].is_null() && !is_default(body[field]);
  };
  auto zero = [](const json& v) { return v.is_number() && v.get<double>() == 0.0; };
  auto falsy = [](const json& v) { return v.is_boolean() && !v.get<bool>(); };
  auto empty = [](const json& v) { return (v.is_object() || v.is_array()) && v.empty(); };
  if (non_default("presence_penalty", zero)) return refuse("presence_penalty", "only 0");
  if (non_default("frequency_penalty", zero)) return refuse("frequency_penalty", "only 0");
  if (non_default("logit_bias", empty)) return refuse("logit_bias", "only {}");
  if (non_default("echo", falsy)) return refuse("echo", "only false");
  if (non_default("best_of", [](const json& v) { return v == 1; })) return refuse("best_of", "only 1");
  if (non_default("suffix", [](const json&) { return false; })) return refuse("suffix", "no insertion");
  if (non_default("tools", empty)) return refuse("tools", "no tool calls");
  if (non_default("tool_choice", [](const json& v) { return v == "none"; }))
    return refuse("tool_choice", "only \"none\"");
  if (non_default("store", falsy)) return refuse("store", "only false");
  if (non_default("metadata", empty)) return refuse("metadata", "stored completions are not kept");
  if (non_default("response_format",
                  [](const json& v) { return v.is_object() && v.value("type", "") == "text"; }))
    return refuse("response_format", "only {\"type\": \"text\"}");
  return std::nullopt;
}

std::optional<ApiError> unknown_fields(const json& body, Endpoint endpoint) {
  const auto& own = endpoint == Endpoint::kChat ? kChatFields : kCompletionFields;
  for (const auto& [key, value] : body.items()) {
    if (kCommonFields.count(key) == 0 && own.count(key) == 0)
      return bad("Unrecognized request argument supplied: " + key, key, "unknown_parameter");
  }
  return std::nullopt;
}

// A number field in [lo, hi] (or absent/null: fallback).
std::variant<double, ApiError> number_in(const json& body, const char* field, double lo, double hi,
                                         double fallback) {
  if (!body.contains(field) || body[field].is_null()) return fallback;
  const json& v = body[field];
  if (!v.is_number() || v.get<double>() < lo || v.get<double>() > hi)
    return bad("'" + std::string(field) + "' must be a number in [" + json(lo).dump() + ", " +
                   json(hi).dump() + "], found " + v.dump(),
               field);
  return v.get<double>();
}

std::variant<int64_t, ApiError> integer_in(const json& body, const char* field, int64_t lo, int64_t hi,
                                           int64_t fallback) {
  if (!body.contains(field) || body[field].is_null()) return fallback;
  const json& v = body[field];
  if (!v.is_number_integer() || v.get<int64_t>() < lo || v.get<int64_t>() > hi)
    return bad("'" + std::string(field) + "' must be an integer in [" + std::to_string(lo) + ", " +
                   std::to_string(hi) + "], found " + v.dump(),
               field);
  return v.get<int64_t>();
}

std::optional<ApiError> token_ids(const json& list, const ServedModel& model, std::vector<int32_t>& out) {
  for (const json& t : list) {
    if (!t.is_number_integer() || t.get<int64_t>() < 0 || t.get<int64_t>() >= model.vocab)
      return bad("'prompt' token ids must be integers in [0, " + std::to_string(model.vocab) + "), found " +
                     t.dump(),
                 "prompt");
    out.push_back(static_cast<int32_t>(t.get<int64_t>()));
  }
  return std::nullopt;
}

// prompt: "text" | ["text", ...] | [id, ...] | [[id, ...], ...].
std::optional<ApiError> parse_prompts(const json& body, const Tokenizer& tok, const ServedModel& model,
                                      CompletionRequest& req) {
  if (!body.contains("prompt"))
    return bad("you must provide a 'prompt'", "prompt", "missing_required_parameter");
  const json& p = body["prompt"];
  const auto bad_shape =
      bad("'prompt' must be a string, a list of strings, a list of token ids or a list of "
          "lists of token ids, found " +
              p.dump().substr(0, 80),
          "prompt");
  if (p.is_string()) {
    req.prompts.push_back(tok.encode(p.get<std::string>(), true));
    return std::nullopt;
  }
  if (!p.is_array() || p.empty()) return bad_shape;
  if (p[0].is_number_integer()) {
    req.prompts.emplace_back();
    return token_ids(p, model, req.prompts.back());
  }
  for (const json& item : p) {
    if (item.is_string()) {
      req.prompts.push_back(tok.encode(item.get<std::string>(), true));
    } else if (item.is_array() && !item.empty()) {
      req.prompts.emplace_back();
      if (auto e = token_ids(item, model, req.prompts.back())) return e;
    } else {
      return bad_shape;
    }
  }
  return std::nullopt;
}

std::variant<std::string, ApiError> message_text(const json& content) {
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array())
    return bad("message 'content' must be a string or a list of text parts", "messages");
  std::string text;
  for (const json& part : content) {
    if (!part.is_object() || part.value("type", "") != "text" || !part.contains("text") ||
        !part["text"].is_string())
      return bad("only content parts of type 'text' are supported, found " + part.dump().substr(0, 80),
                 "messages", "unsupported_value");
    text += part["text"].get<std::string>();
  }
  return text;
}

std::optional<ApiError> parse_messages(const json& body, const Tokenizer& tok, CompletionRequest& req) {
  if (!body.contains("messages"))
    return bad("you must provide 'messages'", "messages", "missing_required_parameter");
  const json& m = body["messages"];
  if (!m.is_array() || m.empty()) return bad("'messages' must be a non-empty list", "messages");
  std::vector<std::pair<std::string, std::string>> turns;
  for (const json& msg : m) {
    const std::string role = msg.is_object() ? msg.value("role", "") : "";
    if (role != "system" && role != "developer" && role != "user" && role != "assistant")
      return bad(
          "message roles must be system, developer, user or assistant, found " + msg.dump().substr(0, 80),
          "messages", role.empty() ? "" : "unsupported_value");
    auto text = message_text(msg.contains("content") ? msg["content"] : json());
    if (auto* e = std::get_if<ApiError>(&text)) return *e;
    turns.emplace_back(role == "developer" ? "system" : role, std::get<std::string>(text));
  }
  req.prompts.push_back(tok.encode(render_chat(turns), true));
  return std::nullopt;
}

std::optional<ApiError> parse_stop(const json& body, CompletionRequest& req) {
  if (!body.contains("stop") || body["stop"].is_null()) return std::nullopt;
  const json& s = body["stop"];
  const json list = s.is_string() ? json::array({s}) : s;
  if (!list.is_array() || list.size() > kMaxStops)
    return bad("'stop' must be a string or a list of at most 4 strings", "stop");
  for (const json& item : list) {
    if (!item.is_string() || item.get<std::string>().empty())
      return bad("'stop' strings must be non-empty", "stop");
    req.stop.push_back(item.get<std::string>());
  }
  return std::nullopt;
}

std::optional<ApiError> parse_stream(const json& body, CompletionRequest& req) {
  if (body.contains("stream") && !body["stream"].is_null()) {
    if (!body["stream"].is_boolean()) return bad("'stream' must be a boolean", "stream");
    req.stream = body["stream"].get<bool>();
  }
  if (!body.contains("stream_options") || body["stream_options"].is_null()) return std::nullopt;
  const json& o = body["stream_options"];
  if (!req.stream) return bad("'stream_options' is only allowed when 'stream' is true", "stream_options");
  if (!o.is_object()) return bad("'stream_options' must be an object", "stream_options");
  for (const auto& [key, value] : o.items()) {
    if (key != "include_usage" || !value.is_boolean())
      return bad("'stream_options' supports only the boolean include_usage, found " + key, "stream_options");
    req.include_usage = value.get<bool>();
  }
  return std::nullopt;
}

// logprobs: completions take an integer (the alternatives), chat a boolean and top_logprobs.
std::optional<ApiError> parse_logprobs(const json& body, Endpoint endpoint, CompletionRequest& req) {
  if (endpoint == Endpoint::kCompletions) {
    auto n = integer_in(body, "logprobs", 0, kMaxLogprobs, -1);
    if (auto* e = std::get_if<ApiError>(&n)) return *e;
    req.sampling.logprobs = static_cast<int32_t>(std::get<int64_t>(n));
    return std::nullopt;
  }
  const bool on = body.contains("logprobs") && body["logprobs"].is_boolean() && body["logprobs"].get<bool>();
  if (body.contains("logprobs") && !body["logprobs"].is_null() && !body["logprobs"].is_boolean())
    return bad("'logprobs' must be a boolean", "logprobs");
  auto top = integer_in(body, "top_logprobs", 0, kMaxLogprobs, 0);
  if (auto* e = std::get_if<ApiError>(&top)) return *e;
  if (!on && body.contains("top_logprobs") && !body["top_logprobs"].is_null())
    return bad("'top_logprobs' requires 'logprobs' to be true", "top_logprobs");
  req.sampling.logprobs = on ? static_cast<int32_t>(std::get<int64_t>(top)) : -1;
  return std::nullopt;
}

std::optional<ApiError> parse_sampling(const json& body, CompletionRequest& req) {
  auto temperature = number_in(body, "temperature", 0, 2, 1);
  auto top_p = number_in(body, "top_p", 0, 1, 1);
  auto top_k = integer_in(body, "top_k", -1, INT32_MAX, 0);
  auto n = integer_in(body, "n", 1, kMaxChoices, 1);
  for (ApiError* e : {std::get_if<ApiError>(&temperature), std::get_if<ApiError>(&top_p)})
    if (e != nullptr) return *e;
  for (ApiError* e : {std::get_if<ApiError>(&top_k), std::get_if<ApiError>(&n)})
    if (e != nullptr) return *e;
  if (std::get<double>(top_p) <= 0) return bad("'top_p' must be in (0, 1]", "top_p");
  req.sampling.temperature = static_cast<float>(std::get<double>(temperature));
  req.sampling.top_p = static_cast<float>(std::get<double>(top_p));
  req.sampling.top_k =
      std::max<int32_t>(0, static_cast<int32_t>(std::get<int64_t>(top_k)));  // -1: all (vLLM)
  req.n = static_cast<int32_t>(std::get<int64_t>(n));
  if (body.contains("seed") && !body["seed"].is_null()) {
    if (!body["seed"].is_number_integer()) return bad("'seed' must be an integer", "seed");
    req.sampling.seed = static_cast<uint64_t>(body["seed"].get<int64_t>());
    req.seeded = true;
  }
  if (body.contains("ignore_eos") && !body["ignore_eos"].is_null()) {
    if (!body["ignore_eos"].is_boolean()) return bad("'ignore_eos' must be a boolean", "ignore_eos");
    req.ignore_eos = body["ignore_eos"].get<bool>();
  }
  return std::nullopt;
}

// max_tokens (chat: max_completion_tokens wins) and the context check, as vLLM words it.
std::optional<ApiError> parse_length(const json& body, const ServedModel& model, CompletionRequest& req) {
  size_t longest = 0;
  for (const auto& p : req.prompts) longest = std::max(longest, p.size());
  const auto prompt = static_cast<int64_t>(longest);
  const char* field = body.contains("max_completion_tokens") && !body["max_completion_tokens"].is_null()
                          ? "max_completion_tokens"
                          : "max_tokens";
  // Completions default to OpenAI's 16; chat to the rest of the context (vLLM).
  const int64_t fallback = req.endpoint == Endpoint::kChat ? model.max_context_tokens - prompt : 16;
  auto max = integer_in(body, field, 1, INT32_MAX, std::max<int64_t>(fallback, 1));
  if (auto* e = std::get_if<ApiError>(&max)) return *e;
  req.max_tokens = std::get<int64_t>(max);
  if (prompt < 1)
    return bad("the prompt has no tokens", req.endpoint == Endpoint::kChat ? "messages" : "prompt");
  if (prompt + req.max_tokens > model.max_context_tokens)
    return bad("This model's maximum context length is " + std::to_string(model.max_context_tokens) +
                   " tokens. However, you requested " + std::to_string(prompt + req.max_tokens) +
                   " tokens (" + std::to_string(prompt) + " in the prompt, " +
                   std::to_string(req.max_tokens) +
                   " in the completion). Please reduce the length of the prompt or completion.",
               field, "context_length_exceeded");
  return std::nullopt;
}

std::optional<ApiError> check_model(const json& body, const ServedModel& model) {
  if (!body.contains("model") || body["model"].is_null()) return std::nullopt;  // vLLM: the served model
  if (!body["model"].is_string()) return bad("'model' must be a string", "model");
  const std::string name = body["model"].get<std::string>();
  if (name == model.name) return std::nullopt;
  return ApiError{.status = 404,
                  .message = "The model `" + name + "` does not exist.",
                  .param = "model",
                  .code = "model_not_found"};
}

}  // namespace

std::string render_chat(const std::vector<std::pair<std::string, std::string>>& messages) {
  std::string text;
  for (const auto& [role, content] : messages)
    text += "<|im_start|>" + role + "\n" + content + "<|im_end|>\n";
  return text + "<|im_start|>assistant\n";
}

std::variant<CompletionRequest, ApiError> parse_completion_request(Endpoint endpoint,
                                                                   std::string_view body_text,
                                                                   const Tokenizer& tokenizer,
                                                                   const ServedModel& model) {
  if (json_nesting_depth(body_text, limits::kMaxJsonDepth) > limits::kMaxJsonDepth)  // dump() would recurse
    return bad("the request body must nest at most " + std::to_string(limits::kMaxJsonDepth) + " deep", "");
  const json body = json::parse(body_text, nullptr, false);
  if (!body.is_object()) return bad("the request body must be a JSON object", "");
  CompletionRequest req;
  req.endpoint = endpoint;
  std::optional<ApiError> e = unknown_fields(body, endpoint);
  if (!e) e = check_model(body, model);
  if (!e) e = unsupported_value(body);
  if (!e)
    e = endpoint == Endpoint::kChat ? parse_messages(body, tokenizer, req)
                                    : parse_prompts(body, tokenizer, model, req);
  if (!e) e = parse_sampling(body, req);
  if (!e) e = parse_stop(body, req);
  if (!e) e = parse_stream(body, req);
  if (!e) e = parse_logprobs(body, endpoint, req);
  if (!e) e = parse_length(body, model, req);
  if (!e && model.mtp && (!req.sampling.greedy() || req.sampling.logprobs >= 0))
    e = bad("with --mtp the server decodes greedily: set temperature 0 and no logprobs", "temperature",
            "unsupported_value");
  if (e) return *e;
  return req;
}

}  // namespace tokenline
