#include "serve/openai_response.h"

#include <nlohmann/json.hpp>

namespace tokenline {
namespace {

using json = nlohmann::json;

std::string dump(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

json null_or(const std::string& s) {
  return s.empty() ? json() : json(s);
}

json bytes_of(const std::string& s) {
  json out = json::array();
  for (char c : s) out.push_back(static_cast<int>(static_cast<unsigned char>(c)));
  return out;
}

// Legacy completions shape: tokens, token_logprobs, top_logprobs (token -> logprob), text_offset.
json completion_logprobs(const ReplyContext& ctx, const std::vector<TokenLogprobs>& lps, size_t text_offset) {
  json tokens = json::array(), values = json::array(), tops = json::array(), offsets = json::array();
  for (const TokenLogprobs& lp : lps) {
    const std::string text = ctx.tokenizer->token_text(lp.token);
    tokens.push_back(text);
    values.push_back(lp.logprob);
    json top = json::object();
    for (const TopLogprob& t : lp.top) top[ctx.tokenizer->token_text(t.token)] = t.logprob;
    tops.push_back(top);
    offsets.push_back(text_offset);
    text_offset += ctx.tokenizer->token_bytes(lp.token).size();
  }
  return {{"tokens", tokens}, {"token_logprobs", values}, {"top_logprobs", tops}, {"text_offset", offsets}};
}

// Chat shape: content: [{token, logprob, bytes, top_logprobs: [{token, logprob, bytes}]}].
json chat_logprobs(const ReplyContext& ctx, const std::vector<TokenLogprobs>& lps) {
  json content = json::array();
  for (const TokenLogprobs& lp : lps) {
    json top = json::array();
    for (const TopLogprob& t : lp.top) {
      const std::string s = ctx.tokenizer->token_text(t.token);
      top.push_back({{"token", s}, {"logprob", t.logprob}, {"bytes", bytes_of(s)}});
    }
    const std::string s = ctx.tokenizer->token_text(lp.token);
    content.push_back({{"token", s}, {"logprob", lp.logprob}, {"bytes", bytes_of(s)}, {"top_logprobs", top}});
  }
  return {{"content", content}};
}

json logprobs_of(const ReplyContext& ctx, const std::vector<TokenLogprobs>& lps, size_t text_offset) {
  if (!ctx.logprobs) return json();
  return ctx.endpoint == Endpoint::kChat ? chat_logprobs(ctx, lps)
                                         : completion_logprobs(ctx, lps, text_offset);
}

json finish_of(FinishReason reason) {
  return reason == FinishReason::kNone ? json() : json(std::string(to_string(reason)));
}

json usage_json(const Usage& u) {
  return {{"prompt_tokens", u.prompt_tokens},
          {"completion_tokens", u.completion_tokens},
          {"total_tokens", u.prompt_tokens + u.completion_tokens},
          {"prompt_tokens_details", {{"cached_tokens", u.cached_tokens}}}};
}

json envelope(const ReplyContext& ctx, bool chunk) {
  const char* object = ctx.endpoint == Endpoint::kChat ? (chunk ? "chat.completion.chunk" : "chat.completion")
                                                       : "text_completion";
  return {{"id", ctx.id},
          {"object", object},
          {"created", ctx.created},
          {"model", ctx.model},
          {"system_fingerprint", json()}};
}

}  // namespace

Usage usage_of(const std::vector<ChoiceState>& choices, int32_t n) {
  Usage u;
  for (size_t i = 0; i < choices.size(); ++i) {
    const RequestRecord& r = choices[i].record;
    if (i % static_cast<size_t>(n) == 0) {
      u.prompt_tokens += r.prompt_tokens;
      u.cached_tokens += r.cached_tokens;
    }
    u.completion_tokens += static_cast<int64_t>(choices[i].tokens.size());
  }
  return u;
}

std::string error_body(const ApiError& e) {
  const json body = {
      {"error",
       {{"message", e.message}, {"type", e.type}, {"param", null_or(e.param)}, {"code", null_or(e.code)}}}};
  return dump(body) + "\n";
}

std::string reply_body(const ReplyContext& ctx, const std::vector<ChoiceState>& choices, const Usage& usage) {
  json out = envelope(ctx, false);
  json list = json::array();
  for (size_t i = 0; i < choices.size(); ++i) {
    const ChoiceState& c = choices[i];
    json choice = {
        {"index", i}, {"logprobs", logprobs_of(ctx, c.logprobs, 0)}, {"finish_reason", finish_of(c.finish)}};
    if (ctx.endpoint == Endpoint::kChat) {
      choice["message"] = {{"role", "assistant"}, {"content", c.text}};
    } else {
      choice["text"] = c.text;
    }
    choice["token_ids"] = c.tokens;  // vLLM's return_token_ids field; exact where text is replaced
    list.push_back(std::move(choice));
  }
  out["choices"] = std::move(list);
  out["usage"] = usage_json(usage);
  return dump(out) + "\n";
}

std::string stream_event(const ReplyContext& ctx, const ChoiceDelta& d) {
  json out = envelope(ctx, true);
  json choice = {{"index", d.index},
                 {"logprobs", logprobs_of(ctx, d.logprobs, 0)},
                 {"finish_reason", finish_of(d.finish)}};
  if (ctx.endpoint == Endpoint::kChat) {
    json delta = json::object();
    if (d.first) delta["role"] = "assistant";
    if (!d.text.empty() || d.first) delta["content"] = d.text;
    choice["delta"] = std::move(delta);
  } else {
    choice["text"] = d.text;
  }
  out["choices"] = json::array({std::move(choice)});
  return "data: " + dump(out) + "\n\n";
}

std::string usage_event(const ReplyContext& ctx, const Usage& usage) {
  json out = envelope(ctx, true);
  out["choices"] = json::array();
  out["usage"] = usage_json(usage);
  return "data: " + dump(out) + "\n\n";
}

std::string error_event(const ApiError& error) {
  std::string body = error_body(error);
  body.pop_back();  // the newline
  return "data: " + body + "\n\n";
}

}  // namespace tokenline
