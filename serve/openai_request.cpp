#include "serve/openai_request.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "common/input_limits.h"
#include "common/json_depth.h"
#include "serve/request_field.h"
#include "serve/utf8.h"

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
void refuse_unsupported(const RequestField& body) {
  auto refuse = [&](const char* field, const std::string& why) {
    body[field].refuse("not supported by tokenline serve: " + why, "unsupported_value");
  };
  auto non_default = [&](const char* field, auto is_default) {
    const RequestField f = body[field];
    return f.given() && !is_default(f.raw());
  };
  auto zero = [](const json& v) { return v.is_number() && v.get<double>() == 0.0; };
  auto falsy = [](const json& v) { return v.is_boolean() && !v.get<bool>(); };
  auto empty = [](const json& v) { return (v.is_object() || v.is_array()) && v.empty(); };
  auto text_format = [](const json& v) {
    if (!v.is_object()) return false;
    const auto type = v.find("type");
    return type != v.end() && type->is_string() && type->get<std::string>() == "text";
  };
  if (non_default("presence_penalty", zero)) refuse("presence_penalty", "only 0");
  if (non_default("frequency_penalty", zero)) refuse("frequency_penalty", "only 0");
  if (non_default("logit_bias", empty)) refuse("logit_bias", "only {}");
  if (non_default("echo", falsy)) refuse("echo", "only false");
  if (non_default("best_of", [](const json& v) { return v == 1; })) refuse("best_of", "only 1");
  if (non_default("suffix", [](const json&) { return false; })) refuse("suffix", "no insertion");
  if (non_default("tools", empty)) refuse("tools", "no tool calls");
  if (non_default("tool_choice", [](const json& v) { return v == "none"; }))
    refuse("tool_choice", "only \"none\"");
  if (non_default("store", falsy)) refuse("store", "only false");
  if (non_default("metadata", empty)) refuse("metadata", "stored completions are not kept");
  if (non_default("response_format", text_format)) refuse("response_format", "only {\"type\": \"text\"}");
}

void refuse_unknown_fields(const json& body, Endpoint endpoint) {
  const auto& own = endpoint == Endpoint::kChat ? kChatFields : kCompletionFields;
  for (const auto& [key, value] : body.items()) {
    if (kCommonFields.count(key) == 0 && own.count(key) == 0)
      throw RequestError(bad("Unrecognized request argument supplied: " + key, key, "unknown_parameter"));
  }
}

void token_ids(const RequestField& list, const ServedModel& model, std::vector<int32_t>& out) {
  out.reserve(list.size());
  for (size_t i = 0; i < list.size(); ++i)
    out.push_back(static_cast<int32_t>(list[i].integer(0, model.vocab - 1)));
}

// prompt: "text" | ["text", ...] | [id, ...] | [[id, ...], ...]. More prompts than a request may have
// choices are refused before any is encoded.
void parse_prompts(const RequestField& body, const Tokenizer& tok, const ServedModel& model,
                   CompletionRequest& req) {
  const RequestField p = body["prompt"];
  if (!p.given()) p.refuse("you must provide a 'prompt'", "missing_required_parameter");
  if (p.is_string()) {
    req.prompts.push_back(tok.encode(p.text(), true));
    return;
  }
  const char* shape =
      "expected a string, a list of strings, a list of token ids or a list of lists of token ids";
  if (!p.is_array() || p.size() == 0) p.refuse(std::string(shape) + ", found " + json_kind_name(p.raw()));
  if (p[0].is_integer()) {
    req.prompts.emplace_back();
    token_ids(p, model, req.prompts.back());
    return;
  }
  if (static_cast<int64_t>(p.size()) > model.max_request_choices)
    p.refuse("a request may have at most " + std::to_string(model.max_request_choices) +
                 " choices (prompts x n: --max-request-choices), found " + std::to_string(p.size()) +
                 " prompts",
             "too_many_choices");
  for (size_t i = 0; i < p.size(); ++i) {
    const RequestField item = p[i];
    if (item.is_string()) {
      req.prompts.push_back(tok.encode(item.text(), true));
    } else if (item.is_array() && item.size() > 0) {
      req.prompts.emplace_back();
      token_ids(item, model, req.prompts.back());
    } else {
      item.refuse("expected a string or a non-empty list of token ids, found " +
                  std::string(json_kind_name(item.raw())));
    }
  }
}

std::string message_text(const RequestField& content) {
  if (content.is_string()) return content.text();
  if (!content.is_array())
    content.refuse("expected a string or a list of text parts, found " +
                   std::string(json_kind_name(content.raw())));
  std::string text;
  for (size_t i = 0; i < content.size(); ++i) {
    const RequestField part = content[i];
    part.expect_object();
    if (part["type"].text() != "text")
      part["type"].refuse("only content parts of type 'text' are supported", "unsupported_value");
    text += part["text"].text();
  }
  return text;
}

void parse_messages(const RequestField& body, const Tokenizer& tok, CompletionRequest& req) {
  const RequestField m = body["messages"];
  if (!m.given()) m.refuse("you must provide 'messages'", "missing_required_parameter");
  m.expect_array();
  if (m.size() == 0) m.refuse("expected a non-empty list");
  std::vector<std::pair<std::string, std::string>> turns;
  for (size_t i = 0; i < m.size(); ++i) {
    const RequestField msg = m[i];
    msg.expect_object();
    const RequestField role_field = msg["role"];
    if (!role_field.given()) role_field.refuse("you must provide a role", "missing_required_parameter");
    const std::string role = role_field.text();
    if (role != "system" && role != "developer" && role != "user" && role != "assistant")
      role_field.refuse("message roles must be system, developer, user or assistant, found \"" + role + "\"",
                        "unsupported_value");
    turns.emplace_back(role == "developer" ? "system" : role, message_text(msg["content"]));
  }
  req.prompts.push_back(tok.encode(render_chat(turns), true));
}

void parse_stop(const RequestField& body, CompletionRequest& req) {
  const RequestField s = body["stop"];
  if (!s.given()) return;
  if (s.is_string()) {
    req.stop.push_back(s.text());
  } else {
    s.expect_array();
    if (s.size() > kMaxStops) s.refuse("expected a string or a list of at most 4 strings");
    for (size_t i = 0; i < s.size(); ++i) req.stop.push_back(s[i].text());
  }
  for (const std::string& stop : req.stop)
    if (stop.empty()) s.refuse("stop strings must be non-empty");
}

void parse_stream(const RequestField& body, CompletionRequest& req) {
  if (body["stream"].given()) req.stream = body["stream"].flag();
  const RequestField o = body["stream_options"];
  if (!o.given()) return;
  if (!req.stream) o.refuse("only allowed when 'stream' is true");
  o.expect_object();
  for (const auto& [key, value] : o.raw().items()) {
    if (key != "include_usage") o[key].refuse("unknown option: stream_options supports only include_usage");
    req.include_usage = o[key].flag();
  }
}

// logprobs: completions take an integer (the alternatives), chat a boolean and top_logprobs.
void parse_logprobs(const RequestField& body, Endpoint endpoint, CompletionRequest& req) {
  const RequestField logprobs = body["logprobs"];
  if (endpoint == Endpoint::kCompletions) {
    req.sampling.logprobs = logprobs.given() ? static_cast<int32_t>(logprobs.integer(0, kMaxLogprobs)) : -1;
    return;
  }
  const bool on = logprobs.given() && logprobs.flag();
  const RequestField top = body["top_logprobs"];
  const int64_t n = top.given() ? top.integer(0, kMaxLogprobs) : 0;
  if (!on && top.given()) top.refuse("requires 'logprobs' to be true");
  req.sampling.logprobs = on ? static_cast<int32_t>(n) : -1;
}

void parse_sampling(const RequestField& body, CompletionRequest& req) {
  const RequestField temperature = body["temperature"], top_p = body["top_p"], top_k = body["top_k"];
  req.sampling.temperature = temperature.given() ? static_cast<float>(temperature.number(0, 2)) : 1.0f;
  req.sampling.top_p = top_p.given() ? static_cast<float>(top_p.number(0, 1)) : 1.0f;
  if (req.sampling.top_p <= 0) top_p.refuse("expected a number in (0, 1], found 0");
  // -1: every token (vLLM's spelling of 0)
  req.sampling.top_k =
      top_k.given() ? std::max<int32_t>(0, static_cast<int32_t>(top_k.integer(-1, INT32_MAX))) : 0;
  req.n = body["n"].given() ? static_cast<int32_t>(body["n"].integer(1, kMaxChoices)) : 1;
  if (body["seed"].given()) {
    req.sampling.seed = static_cast<uint64_t>(body["seed"].integer(INT64_MIN, INT64_MAX));
    req.seeded = true;
  }
  if (body["ignore_eos"].given()) req.ignore_eos = body["ignore_eos"].flag();
  // Accepted and unused, but of their documented type.
  if (body["user"].given()) body["user"].text();
  if (body["parallel_tool_calls"].given()) body["parallel_tool_calls"].flag();
}

// max_tokens (chat: max_completion_tokens wins), the context check as vLLM words it, and the request's
// bounds: its choices (prompts x n) and its tokens (prompt + max_tokens, summed over the choices).
void parse_length(const RequestField& body, const ServedModel& model, CompletionRequest& req) {
  int64_t longest = 0, prompt_sum = 0;
  for (const auto& p : req.prompts) {
    longest = std::max(longest, static_cast<int64_t>(p.size()));
    prompt_sum += static_cast<int64_t>(p.size());
  }
  const RequestField field =
      body["max_completion_tokens"].given() ? body["max_completion_tokens"] : body["max_tokens"];
  // Completions default to OpenAI's 16; chat to the rest of the context (vLLM).
  const int64_t fallback = req.endpoint == Endpoint::kChat ? model.max_context_tokens - longest : 16;
  req.max_tokens = field.given() ? field.integer(1, INT32_MAX) : std::max<int64_t>(fallback, 1);
  if (longest < 1)
    throw RequestError(
        bad("the prompt has no tokens", req.endpoint == Endpoint::kChat ? "messages" : "prompt"));
  if (longest + req.max_tokens > model.max_context_tokens)
    throw RequestError(bad("This model's maximum context length is " +
                               std::to_string(model.max_context_tokens) + " tokens. However, you requested " +
                               std::to_string(longest + req.max_tokens) + " tokens (" +
                               std::to_string(longest) + " in the prompt, " + std::to_string(req.max_tokens) +
                               " in the completion). Please reduce the length of the prompt or completion.",
                           field.param(), "context_length_exceeded"));
  const int64_t choices = static_cast<int64_t>(req.prompts.size()) * req.n;
  if (choices > model.max_request_choices)
    body["n"].refuse("a request may have at most " + std::to_string(model.max_request_choices) +
                         " choices (prompts x n: --max-request-choices), found " +
                         std::to_string(req.prompts.size()) + " x " + std::to_string(req.n),
                     "too_many_choices");
  // No overflow: prompts < 2^23 (an 8 MiB body), each within the context (< 2^31), max_tokens < 2^31,
  // n <= 128: the sum stays below 2^62.
  const int64_t tokens = req.n * (prompt_sum + static_cast<int64_t>(req.prompts.size()) * req.max_tokens);
  if (tokens > model.max_request_tokens)
    field.refuse("a request may ask for at most " + std::to_string(model.max_request_tokens) +
                     " tokens (prompt + max_tokens, summed over prompts x n: --max-request-tokens), found " +
                     std::to_string(tokens),
                 "too_many_tokens");
}

void check_model(const RequestField& body, const ServedModel& model) {
  const RequestField f = body["model"];
  if (!f.given()) return;  // vLLM: the served model
  const std::string name = f.text();
  if (name == model.name) return;
  throw RequestError(ApiError{.status = 404,
                              .message = "The model `" + name + "` does not exist.",
                              .param = "model",
                              .code = "model_not_found"});
}

// The body as JSON, or the reason it is not: invalid UTF-8 (with its offset), or nlohmann's parse error
// (line, column and what was read), with what JSON cannot hold spelled out.
json parse_body(std::string_view text) {
  if (const size_t at = utf8_invalid_offset(text); at < text.size())
    throw RequestError(bad("the request body is not valid UTF-8 (byte " + std::to_string(at) + ")", ""));
  if (json_nesting_depth(text, limits::kMaxJsonDepth) > limits::kMaxJsonDepth)  // dump() would recurse
    throw RequestError(
        bad("the request body must nest at most " + std::to_string(limits::kMaxJsonDepth) + " deep", ""));
  try {
    json body = json::parse(text);
    if (!body.is_object())
      throw RequestError(
          bad(std::string("the request body must be a JSON object, found ") + json_kind_name(body), ""));
    return body;
  } catch (const json::out_of_range& e) {  // 406: a number beyond a double (1e309)
    throw RequestError(bad(std::string("the request body holds a number JSON cannot carry as a finite "
                                       "double: ") +
                               e.what(),
                           ""));
  } catch (const json::parse_error& e) {
    std::string why = e.what();
    if (why.find("surrogate") != std::string::npos)
      why += " (a \\uD800-\\uDFFF escape must be half of a pair)";
    if (why.find("invalid literal") != std::string::npos) why += " (JSON has no NaN or Infinity)";
    throw RequestError(bad("the request body is not valid JSON: " + why, ""));
  }
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
  try {
    const json json_body = parse_body(body_text);
    const RequestField body(json_body);
    CompletionRequest req;
    req.endpoint = endpoint;
    refuse_unknown_fields(json_body, endpoint);
    check_model(body, model);
    refuse_unsupported(body);
    if (endpoint == Endpoint::kChat) {
      parse_messages(body, tokenizer, req);
    } else {
      parse_prompts(body, tokenizer, model, req);
    }
    parse_sampling(body, req);
    parse_stop(body, req);
    parse_stream(body, req);
    parse_logprobs(body, endpoint, req);
    parse_length(body, model, req);
    if (model.mtp && (!req.sampling.greedy() || req.sampling.logprobs >= 0))
      return bad("with --mtp the server decodes greedily: set temperature 0 and no logprobs", "temperature",
                 "unsupported_value");
    return req;
  } catch (const RequestError& e) {
    return e.error();
  }
}

}  // namespace tokenline
