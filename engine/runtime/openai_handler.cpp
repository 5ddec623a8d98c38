#include "engine/runtime/openai_handler.h"

#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "common/input_limits.h"
#include "common/json_depth.h"
#include "engine/runtime/byte_tokenizer.h"

namespace tokenline {
namespace {

using json = nlohmann::json;

constexpr int64_t kDefaultMaxTokens = 16;  // OpenAI's completions default

HttpResponse error_reply(int status, const std::string& message) {
  const json body = {{"error", {{"message", message}, {"type", "invalid_request_error"}}}};
  return HttpResponse{status, "application/json", body.dump() + "\n"};
}

}  // namespace

HttpResponse OpenAiHandler::handle(const HttpRequest& req) {
  if (req.target == "/health" && req.method == "GET")
    return HttpResponse{200, "application/json", "{\"status\":\"ok\"}\n"};
  if (req.target != "/v1/completions") return error_reply(404, "no such endpoint: " + req.target);
  if (req.method != "POST") return error_reply(405, "POST /v1/completions");
  if (json_nesting_depth(req.body, limits::kMaxJsonDepth) > limits::kMaxJsonDepth)  // dump() would recurse
    return error_reply(400,
                       "expected JSON nested at most " + std::to_string(limits::kMaxJsonDepth) + " deep");
  const json body = json::parse(req.body, nullptr, false);
  if (!body.is_object() || !body.contains("prompt") || !body["prompt"].is_string() ||
      body["prompt"].get<std::string>().empty()) {
    return error_reply(400, "expected a JSON object with a non-empty string \"prompt\"");
  }
  const json max_tokens = body.value("max_tokens", json(kDefaultMaxTokens));
  if (!max_tokens.is_number_integer() || max_tokens.get<int64_t>() < 1)
    return error_reply(400, "expected \"max_tokens\" to be an integer >= 1, found " + max_tokens.dump());
  return complete(body["prompt"].get<std::string>(), max_tokens.get<int64_t>());
}

// The engine loop stops when nothing more can be planned: what it never scheduled is abandoned.
void OpenAiHandler::abandon_pending() {
  std::map<RequestId, std::promise<Outcome>> left;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    left.swap(pending_);
  }
  for (auto& [id, promise] : left) {
    Outcome never;
    never.record.id = id;  // status stays kWaiting
    promise.set_value(std::move(never));
  }
}

void OpenAiHandler::finished(const RequestRecord& record, const std::vector<int32_t>* tokens) {
  std::promise<Outcome> promise;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    auto it = pending_.find(record.id);
    if (it == pending_.end()) return;
    promise = std::move(it->second);
    pending_.erase(it);
  }
  Outcome outcome{record, {}};
  if (tokens != nullptr && static_cast<int64_t>(tokens->size()) > record.prompt_tokens)
    outcome.generated.assign(tokens->begin() + record.prompt_tokens, tokens->end());
  promise.set_value(std::move(outcome));
}

HttpResponse OpenAiHandler::complete(const std::string& prompt, int64_t max_tokens) {
  RequestSpec spec;
  spec.id = next_id_++;
  spec.token_ids = ByteTokenizer().encode(prompt, true);
  spec.prompt_tokens = static_cast<int64_t>(spec.token_ids.size());
  spec.output_tokens = max_tokens;
  std::future<Outcome> done;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    done = pending_[spec.id].get_future();
  }
  const RequestId id = spec.id;
  if (!feed_.push(std::move(spec))) {
    const std::lock_guard<std::mutex> lock(mutex_);
    pending_.erase(id);
    return error_reply(503, "the server is shutting down");
  }
  const Outcome out = done.get();
  if (out.record.status == RequestStatus::kWaiting)
    return error_reply(503, "the engine stopped before scheduling this request");
  if (out.record.status != RequestStatus::kFinished)
    return error_reply(400, "rejected: " + std::string(to_string(out.record.reject_reason)));
  const auto completion = static_cast<int64_t>(out.generated.size());
  const json reply = {{"id", "cmpl-" + std::to_string(id)},
                      {"object", "text_completion"},
                      {"model", shape_.name},
                      {"choices",
                       {{{"index", 0},
                         {"text", ByteTokenizer().decode(out.generated)},
                         {"token_ids", out.generated},
                         {"finish_reason", "length"}}}},
                      {"usage",
                       {{"prompt_tokens", out.record.prompt_tokens},
                        {"completion_tokens", completion},
                        {"total_tokens", out.record.prompt_tokens + completion},
                        {"cached_tokens", out.record.cached_tokens}}}};
  // Random weights emit arbitrary bytes: invalid UTF-8 is replaced (U+FFFD), token_ids stay exact.
  return HttpResponse{200, "application/json",
                      reply.dump(-1, ' ', false, json::error_handler_t::replace) + "\n"};
}

}  // namespace tokenline
